package report

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"text/tabwriter"

	"splitplan/traces"
)

// TraceStatsColumns are the CSV columns (and JSON keys) of trace stats.
var TraceStatsColumns = []string{"requests", "duration_s", "rate_rps",
	"prompt_mean", "prompt_p50", "prompt_p90", "prompt_p99", "prompt_max",
	"output_mean", "output_p50", "output_p90", "output_p99", "output_max"}

// traceRound4 rounds x to 4 decimal places, hiding float noise in reports.
func traceRound4(x float64) float64 { return math.Round(x*1e4) / 1e4 }

// traceFmt4 formats x rounded to 4 decimal places, without trailing zeros.
func traceFmt4(x float64) string { return strconv.FormatFloat(traceRound4(x), 'f', -1, 64) }

// traceStatsValues returns the values of TraceStatsColumns for s.
func traceStatsValues(s traces.Stats) []float64 {
	v := []float64{float64(s.Requests), s.DurationS, s.RateRPS}
	for _, x := range []traces.Summary{s.Prompt, s.Output} {
		v = append(v, x.Mean, x.P50, x.P90, x.P99, float64(x.Max))
	}
	return v
}

// WriteTraceStatsCSV writes trace statistics as a one-row CSV.
func WriteTraceStatsCSV(w io.Writer, s traces.Stats) error {
	cw := csv.NewWriter(w)
	cw.Write(TraceStatsColumns)
	row := make([]string, len(TraceStatsColumns))
	for i, v := range traceStatsValues(s) {
		row[i] = traceFmt4(v)
	}
	cw.Write(row)
	cw.Flush()
	return cw.Error()
}

// WriteTraceStatsJSON writes trace statistics as JSON, keys in column order.
func WriteTraceStatsJSON(w io.Writer, source string, s traces.Stats) error {
	// Build the object by hand to keep the keys in column order.
	var b strings.Builder
	fmt.Fprintf(&b, "{\n  \"source\": %s", strconv.Quote(source))
	for i, v := range traceStatsValues(s) {
		fmt.Fprintf(&b, ",\n  %q: %s", TraceStatsColumns[i], traceFmt4(v))
	}
	b.WriteString("\n}\n")
	if !json.Valid([]byte(b.String())) {
		return fmt.Errorf("trace stats: internal error: invalid JSON")
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// WriteTraceStatsTable writes trace statistics as aligned tables.
func WriteTraceStatsTable(w io.Writer, source string, s traces.Stats) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "source\t%s\n", source)
	fmt.Fprintf(tw, "requests\t%d\n", s.Requests)
	fmt.Fprintf(tw, "duration\t%s s\n", strconv.FormatFloat(s.DurationS, 'f', 1, 64))
	fmt.Fprintf(tw, "mean rate\t%s req/s\n", strconv.FormatFloat(s.RateRPS, 'f', 3, 64))
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintln(w)
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprint(tw, "tokens\tmean\tp50\tp90\tp99\tmax\t\n")
	for _, x := range []struct {
		name string
		s    traces.Summary
	}{{"prompt", s.Prompt}, {"output", s.Output}} {
		f := func(v float64) string { return strconv.FormatFloat(math.Round(v*10)/10, 'f', -1, 64) }
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%d\t\n", x.name, f(x.s.Mean), f(x.s.P50), f(x.s.P90), f(x.s.P99), x.s.Max)
	}
	return tw.Flush()
}
