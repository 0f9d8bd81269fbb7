package traces

import (
	"bufio"
	"fmt"
	"io"
	"math"
	"strconv"
	"time"
)

// checkWritable checks that reqs can be read back: finite arrivals in
// order, token counts from 1 to MaxTokens.
func checkWritable(reqs []Request, nonNegative bool) error {
	for i, r := range reqs {
		switch {
		case math.IsNaN(r.Arrival) || math.IsInf(r.Arrival, 0):
			return fmt.Errorf("request %d: arrival %v is not a finite number", r.ID, r.Arrival)
		case nonNegative && r.Arrival < 0:
			return fmt.Errorf("request %d: arrival %v is negative", r.ID, r.Arrival)
		case i > 0 && r.Arrival < reqs[i-1].Arrival:
			return fmt.Errorf("request %d: arrival %v is before the previous request's %v", r.ID, r.Arrival, reqs[i-1].Arrival)
		case r.PromptTokens < 1 || r.PromptTokens > MaxTokens:
			return fmt.Errorf("request %d: prompt tokens %d outside 1..%d", r.ID, r.PromptTokens, MaxTokens)
		case r.OutputTokens < 1 || r.OutputTokens > MaxTokens:
			return fmt.Errorf("request %d: output tokens %d outside 1..%d", r.ID, r.OutputTokens, MaxTokens)
		}
	}
	return nil
}

// WriteSplitwise writes reqs in the SplitwiseSim request format, with
// request_id the request's ID, request_type 2, application_id 0 and
// batch_size 1. Arrivals are written in the shortest form that reads back
// exactly, so Read returns the same requests (with IDs renumbered 0..n-1),
// arriving at Arrival − reqs[0].Arrival (Read measures from the first row).
// Arrivals must be finite, non-negative and in order.
func WriteSplitwise(w io.Writer, reqs []Request) error {
	if err := checkWritable(reqs, true); err != nil {
		return fmt.Errorf("writing SplitwiseSim trace: %w", err)
	}
	bw := bufio.NewWriter(w)
	bw.WriteString(SplitwiseHeader + "\n")
	buf := make([]byte, 0, 96)
	for _, r := range reqs {
		buf = strconv.AppendInt(buf[:0], int64(r.ID), 10)
		buf = append(buf, ",2,0,"...)
		buf = strconv.AppendFloat(buf, r.Arrival, 'g', -1, 64)
		buf = append(buf, ",1,"...)
		buf = strconv.AppendInt(buf, int64(r.PromptTokens), 10)
		buf = append(buf, ',')
		buf = strconv.AppendInt(buf, int64(r.OutputTokens), 10)
		buf = append(buf, '\n')
		if _, err := bw.Write(buf); err != nil {
			return err // a failed or cancelled write: the rest would fail too
		}
	}
	return bw.Flush()
}

// WriteAzure writes reqs in the Azure LLM inference trace format, each
// TIMESTAMP being start's wall clock plus the arrival, rounded to 100 ns and written with
// 7 fractional digits like the published traces. The format has no origin
// of its own: Read measures arrivals from the first row, so requests read
// back arrive at Arrival − reqs[0].Arrival (to within 100 ns).
func WriteAzure(w io.Writer, reqs []Request, start time.Time) error {
	if err := checkWritable(reqs, false); err != nil {
		return fmt.Errorf("writing Azure trace: %w", err)
	}
	// Keep start's wall clock but count in UTC, free of daylight-saving jumps.
	y, mo, d := start.Date()
	h, mi, sec := start.Clock()
	start = time.Date(y, mo, d, h, mi, sec, start.Nanosecond(), time.UTC)
	bw := bufio.NewWriter(w)
	bw.WriteString(AzureHeader + "\n")
	buf := make([]byte, 0, 64)
	for _, r := range reqs {
		ticks := math.Round(r.Arrival * 1e7)
		if math.Abs(ticks) > math.MaxInt64/100 {
			return fmt.Errorf("writing Azure trace: request %d: arrival %v s is out of range", r.ID, r.Arrival)
		}
		t := start.Add(time.Duration(ticks) * 100)
		buf = t.AppendFormat(buf[:0], AzureTimeLayout)
		buf = append(buf, ',')
		buf = strconv.AppendInt(buf, int64(r.PromptTokens), 10)
		buf = append(buf, ',')
		buf = strconv.AppendInt(buf, int64(r.OutputTokens), 10)
		buf = append(buf, '\n')
		if _, err := bw.Write(buf); err != nil {
			return err // a failed or cancelled write: the rest would fail too
		}
	}
	return bw.Flush()
}
