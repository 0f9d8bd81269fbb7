package evaluator

import (
	"bufio"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
)

// RequestsCSVHeader lists the columns of WriteRequestsCSV.
const RequestsCSVHeader = "request_id,arrival_s,prompt_tokens,output_tokens,queue_s,ttft_s,tbt_s,tbt_reference_s," +
	"max_gap_s,e2e_s,prompt_machine,token_machine,transferred,transfer_s,borrowed,preemptions,sched_delay_s"

// WriteRequestsCSV writes one row per request (times in seconds).
func WriteRequestsCSV(w io.Writer, res *Result) error {
	bw := bufio.NewWriter(w)
	bw.WriteString(RequestsCSVHeader + "\n")
	var b []byte
	f := func(v float64) {
		b = strconv.AppendFloat(b, v, 'g', -1, 64)
		b = append(b, ',')
	}
	i := func(v int) {
		b = strconv.AppendInt(b, int64(v), 10)
		b = append(b, ',')
	}
	t := func(v bool) {
		b = strconv.AppendBool(b, v)
		b = append(b, ',')
	}
	// gap is a figure of the gaps between a request's tokens: empty for a
	// request of one output token, which has none.
	gap := func(v float64, output int) {
		if output > 1 {
			f(v)
		} else {
			b = append(b, ',')
		}
	}
	for _, r := range res.Requests {
		b = b[:0]
		i(r.ID)
		f(r.ArrivalS)
		i(r.PromptTokens)
		i(r.OutputTokens)
		f(r.QueueS)
		f(r.TTFTS)
		gap(r.TBTS, r.OutputTokens)
		f(r.TBTReferenceS)
		gap(r.MaxGapS, r.OutputTokens)
		f(r.E2ES)
		i(r.PromptMachine)
		i(r.TokenMachine)
		t(r.Transferred)
		f(r.TransferS)
		t(r.Borrowed)
		i(r.Preemptions)
		f(r.SchedDelayS)
		b[len(b)-1] = '\n'
		if _, err := bw.Write(b); err != nil {
			return err
		}
	}
	return bw.Flush()
}

// MachinesCSVHeader lists the columns of WriteMachinesCSV.
const MachinesCSVHeader = "machine,type,pool,role,pool_moves,busy_s,prompt_iterations,decode_iterations,mixed_iterations," +
	"peak_kv_bytes,kv_capacity_bytes,perf_provenance,energy_j,idle_energy_j,powered_s"

// WriteMachinesCSV writes one row per machine.
func WriteMachinesCSV(w io.Writer, res *Result) error {
	bw := bufio.NewWriter(w)
	bw.WriteString(MachinesCSVHeader + "\n")
	for _, m := range res.Machines {
		var b []byte
		b = strconv.AppendInt(b, int64(m.ID), 10)
		b = append(b, ',')
		b = appendCSVField(b, m.Type)
		b = append(b, ',')
		b = append(b, m.Pool.String()...)
		b = append(b, ',')
		b = append(b, m.Role.String()...)
		b = append(b, ',')
		b = strconv.AppendInt(b, int64(m.PoolMoves), 10)
		b = append(b, ',')
		b = strconv.AppendFloat(b, m.BusyS, 'g', -1, 64)
		for _, v := range []int64{m.PromptIters, m.DecodeIters, m.MixedIters, m.PeakMemoryBytes, m.CapacityBytes} {
			b = append(b, ',')
			b = strconv.AppendInt(b, v, 10)
		}
		b = append(b, ',')
		b = appendCSVField(b, m.Provenance)
		for _, v := range []float64{m.EnergyJ, m.IdleEnergyJ} {
			b = append(b, ',')
			if res.EnergyKnown { // empty when no power model
				b = strconv.AppendFloat(b, v, 'g', -1, 64)
			}
		}
		b = append(b, ',')
		b = strconv.AppendFloat(b, m.PoweredS, 'g', -1, 64)
		b = append(b, '\n')
		if _, err := bw.Write(b); err != nil {
			return err
		}
	}
	return bw.Flush()
}

// csvRows reads a CSV file written with header, checking the header, and
// calls row for each record with a parser of its fields.
func csvRows(r io.Reader, name, header string, row func(p *csvFields)) error {
	want := strings.Split(header, ",")
	cr := csv.NewReader(r)
	cr.FieldsPerRecord = -1
	cr.ReuseRecord = true
	head, err := cr.Read()
	if err == io.EOF {
		return fmt.Errorf("%s: empty file: expected the header %s", name, header)
	}
	if err != nil {
		return csvReadError(name, err)
	}
	if len(head) > 0 {
		head[0] = strings.TrimPrefix(head[0], "\ufeff")
	}
	if err := checkHeader(name, head, want, header); err != nil {
		return err
	}
	p := &csvFields{name: name, cr: cr, cols: want}
	for {
		rec, err := cr.Read()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return csvReadError(name, err)
		}
		line, _ := cr.FieldPos(0)
		if len(rec) != len(want) {
			return fmt.Errorf("%s:%d: %d fields, expected %d (%s)", name, line, len(rec), len(want), header)
		}
		p.rec, p.err = rec, nil
		row(p)
		if p.err != nil {
			return p.err
		}
	}
}

// checkHeader reports how head differs from want: the missing columns,
// then the unexpected ones, then the order.
func checkHeader(name string, head, want []string, header string) error {
	have := map[string]bool{}
	for _, h := range head {
		have[h] = true
	}
	known := map[string]bool{}
	var missing, extra []string
	for _, w := range want {
		known[w] = true
		if !have[w] {
			missing = append(missing, w)
		}
	}
	for _, h := range head {
		if !known[h] {
			extra = append(extra, strconv.Quote(h))
		}
	}
	switch {
	case len(missing) > 0:
		return fmt.Errorf("%s:1: header lacks the columns %s: expected the header %s", name, strings.Join(missing, ", "), header)
	case len(extra) > 0:
		return fmt.Errorf("%s:1: header has the unexpected columns %s: expected the header %s", name, strings.Join(extra, ", "), header)
	case len(head) != len(want):
		return fmt.Errorf("%s:1: header repeats a column: expected the header %s", name, header)
	}
	for i := range want {
		if head[i] != want[i] {
			return fmt.Errorf("%s:1: column %d is %s, expected %s: expected the header %s", name, i+1, head[i], want[i], header)
		}
	}
	return nil
}

func csvReadError(name string, err error) error {
	var pe *csv.ParseError
	if errors.As(err, &pe) {
		return fmt.Errorf("%s:%d: column %d: %w", name, pe.Line, pe.Column, pe.Err)
	}
	return fmt.Errorf("%s: %w", name, err)
}

// csvFields parses the fields of one record; the first error sticks.
type csvFields struct {
	name string
	cr   *csv.Reader
	cols []string
	rec  []string
	err  error
}

// fail records that field i is not what was expected.
func (p *csvFields) fail(i int, want string, err error) {
	if p.err != nil {
		return
	}
	line, col := p.cr.FieldPos(i)
	if err == nil {
		p.err = fmt.Errorf("%s:%d:%d: column %d (%s): %q is not %s", p.name, line, col, i+1, p.cols[i], p.rec[i], want)
		return
	}
	p.err = fmt.Errorf("%s:%d:%d: column %d (%s): %q is not %s: %w", p.name, line, col, i+1, p.cols[i], p.rec[i], want, err)
}

// seconds parses field i as a finite number of seconds, zero or more.
func (p *csvFields) seconds(i int) float64 {
	v, err := strconv.ParseFloat(p.rec[i], 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) || v < 0 {
		p.fail(i, "a finite number of seconds, zero or more", err)
		return 0
	}
	return v
}

// joules parses field i as a finite energy in joules, zero or more.
func (p *csvFields) joules(i int) float64 {
	v, err := strconv.ParseFloat(p.rec[i], 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) || v < 0 {
		p.fail(i, "a finite number of joules, zero or more", err)
		return 0
	}
	return v
}

// count parses field i as a whole number, zero or more.
func (p *csvFields) count(i int) int64 {
	v, err := strconv.ParseInt(p.rec[i], 10, 64)
	if err != nil || v < 0 {
		p.fail(i, "a whole number, zero or more", err)
		return 0
	}
	return v
}

// integer parses field i as a whole number, zero or more, that fits an int.
func (p *csvFields) integer(i int) int {
	v, err := strconv.ParseInt(p.rec[i], 10, strconv.IntSize)
	if err != nil || v < 0 {
		p.fail(i, "a whole number, zero or more", err)
		return 0
	}
	return int(v)
}

// boolean parses field i as true or false.
func (p *csvFields) boolean(i int) bool {
	switch p.rec[i] {
	case "true":
		return true
	case "false":
		return false
	}
	p.fail(i, "true or false", nil)
	return false
}

// oneOf returns field i if it is one of names.
func (p *csvFields) oneOf(i int, names ...string) int {
	if k := slices.Index(names, p.rec[i]); k >= 0 {
		return k
	}
	p.fail(i, "one of "+strings.Join(names, ", "), nil)
	return 0
}

// ReadRequestsCSV reads a file written by WriteRequestsCSV (name is the
// file's name for messages): one RequestResult per row, in file order. The
// header must be RequestsCSVHeader; errors name the line, the column and
// what was expected.
func ReadRequestsCSV(r io.Reader, name string) ([]RequestResult, error) {
	var out []RequestResult
	err := csvRows(r, name, RequestsCSVHeader, func(p *csvFields) {
		// (The columns read in order, so the first bad one is reported.)
		id, arrival, prompt, output := p.integer(0), p.seconds(1), p.integer(2), p.integer(3)
		rr := RequestResult{
			ID: id, ArrivalS: arrival, PromptTokens: prompt, OutputTokens: output,
			QueueS: p.seconds(4), TTFTS: p.seconds(5), TBTS: p.gapSeconds(6, output), TBTReferenceS: p.seconds(7),
			MaxGapS: p.gapSeconds(8, output), E2ES: p.seconds(9), PromptMachine: p.integer(10), TokenMachine: p.integer(11),
			Transferred: p.boolean(12), TransferS: p.seconds(13), Borrowed: p.boolean(14), Preemptions: p.integer(15),
			SchedDelayS: p.seconds(16),
		}
		if p.err == nil {
			out = append(out, rr)
		}
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// gapSeconds is column i of a request with output tokens: seconds, or
// empty (0 in the result) for a request of one output token, which has no
// gap between tokens (where it is not empty it must be 0).
func (p *csvFields) gapSeconds(i, output int) float64 {
	if output <= 1 && p.rec[i] == "" {
		return 0
	}
	v := p.seconds(i)
	if output <= 1 && v != 0 && p.err == nil {
		// (WriteRequestsCSV leaves it empty: there is no gap to measure.)
		p.fail(i, fmt.Sprintf("empty: a request of %d output tokens has no gap between tokens", output), nil)
	}
	return v
}

// ReadMachinesCSV reads a file written by WriteMachinesCSV (name is the
// file's name for messages): one MachineResult per row, in file order,
// without BatchTokens (the CSV does not hold them). The header must be
// MachinesCSVHeader; a machine whose peak KV-cache memory exceeds its
// capacity is an error.
func ReadMachinesCSV(r io.Reader, name string) ([]MachineResult, error) {
	var out []MachineResult
	err := csvRows(r, name, MachinesCSVHeader, func(p *csvFields) {
		m := MachineResult{
			ID: p.integer(0), Pool: Pool(p.oneOf(2, poolNames[:]...)),
			Role: Role(p.oneOf(3, roleNames[:]...)), PoolMoves: p.integer(4), BusyS: p.seconds(5),
			PromptIters: p.count(6), DecodeIters: p.count(7), MixedIters: p.count(8),
			PeakMemoryBytes: p.count(9), CapacityBytes: p.count(10), Provenance: p.rec[11],
		}
		if p.rec[12] != "" || p.rec[13] != "" {
			m.EnergyJ, m.IdleEnergyJ = p.joules(12), p.joules(13)
		}
		m.PoweredS = p.seconds(14)
		if m.Type = p.rec[1]; m.Type == "" {
			p.fail(1, "a machine type's name", nil)
		}
		if p.err == nil && m.PeakMemoryBytes > m.CapacityBytes {
			p.fail(9, fmt.Sprintf("at most kv_capacity_bytes (%d)", m.CapacityBytes), nil)
		}
		if p.err == nil {
			out = append(out, m)
		}
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// appendCSVField appends s as one CSV field, quoted (with its quotes
// doubled) when it holds a comma, a quote or a line break.
func appendCSVField(b []byte, s string) []byte {
	if !strings.ContainsAny(s, ",\"\r\n") {
		return append(b, s...)
	}
	b = append(b, '"')
	b = append(b, strings.ReplaceAll(s, `"`, `""`)...)
	return append(b, '"')
}
