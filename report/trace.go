package report

import (
	"encoding/csv"
	"encoding/json"
	"errors"
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

// ReadTraceStatsCSV reads a file written by WriteTraceStatsCSV (name is the
// file's name for messages). The values are those of the file: rounded to
// 4 decimal places by the writer.
func ReadTraceStatsCSV(r io.Reader, name string) (traces.Stats, error) {
	t, err := readCSVFrom(r, name, TraceStatsColumns, "a trace stats CSV (trace stats --format csv)")
	if err != nil {
		return traces.Stats{}, err
	}
	if len(t.rows) != 1 {
		return traces.Stats{}, inputf("%s: %d rows: expected one row of statistics under the header", name, len(t.rows))
	}
	c := t.row(0)
	s := traces.Stats{Requests: c.integer("requests"), DurationS: c.num("duration_s", false), RateRPS: c.num("rate_rps", false)}
	for _, x := range []struct {
		prefix string
		s      *traces.Summary
	}{{"prompt", &s.Prompt}, {"output", &s.Output}} {
		x.s.Mean, x.s.P50 = c.num(x.prefix+"_mean", false), c.num(x.prefix+"_p50", false)
		x.s.P90, x.s.P99 = c.num(x.prefix+"_p90", false), c.num(x.prefix+"_p99", false)
		x.s.Max = c.integer(x.prefix + "_max")
		if c.err != nil {
			break
		}
		switch {
		case x.s.P90 < x.s.P50:
			c.fail(x.prefix+"_p90", fmt.Sprintf("at least %s_p50 (%g)", x.prefix, x.s.P50))
		case x.s.P99 < x.s.P90:
			c.fail(x.prefix+"_p99", fmt.Sprintf("at least %s_p90 (%g)", x.prefix, x.s.P90))
		case float64(x.s.Max) < x.s.P99:
			c.fail(x.prefix+"_max", fmt.Sprintf("at least %s_p99 (%g)", x.prefix, x.s.P99))
		case float64(x.s.Max) < x.s.Mean:
			c.fail(x.prefix+"_max", fmt.Sprintf("at least %s_mean (%g)", x.prefix, x.s.Mean))
		}
	}
	if c.err != nil {
		return traces.Stats{}, c.err
	}
	return s, nil
}

// readCSVFrom reads a CSV file whose header must be exactly header; a
// header that differs is an InputError naming the missing (or unexpected)
// columns. name names the file in messages.
func readCSVFrom(r io.Reader, name string, header []string, what string) (*csvTable, error) {
	want := strings.Join(header, ",")
	cr := csv.NewReader(r)
	head, err := cr.Read()
	if err == io.EOF {
		return nil, inputf("%s: empty file: expected %s with the header %s", name, what, want)
	}
	if err != nil {
		return nil, csvInputError(name, err)
	}
	t := &csvTable{file: name, cols: map[string]int{}}
	for i, h := range head {
		h = headerName(h)
		if _, dup := t.cols[h]; dup {
			return nil, inputf("%s:1: column %d repeats %q: expected %s with the header %s", name, i+1, h, what, want)
		}
		t.cols[h] = i
	}
	var missing, extra []string
	known := map[string]bool{}
	for _, col := range header {
		known[col] = true
		if _, ok := t.cols[col]; !ok {
			missing = append(missing, col)
		}
	}
	for _, h := range head {
		if h = headerName(h); !known[h] {
			extra = append(extra, strconv.Quote(h))
		}
	}
	switch {
	case len(missing) > 0:
		return nil, inputf("%s:1: the header lacks the columns %s: expected %s with the header %s", name, strings.Join(missing, ", "), what, want)
	case len(extra) > 0:
		return nil, inputf("%s:1: the header has the unexpected columns %s: expected %s with the header %s", name, strings.Join(extra, ", "), what, want)
	}
	for i, col := range header {
		if t.cols[col] != i {
			return nil, inputf("%s:1: column %d is not %s: expected %s with the header %s", name, i+1, col, what, want)
		}
	}
	if err := t.readRows(cr, func(err error) error { return csvInputError(name, err) }); err != nil {
		return nil, err
	}
	return t, nil
}

// csvInputError names the file, line and column of a CSV syntax error.
func csvInputError(name string, err error) error {
	var pe *csv.ParseError
	if errors.As(err, &pe) {
		return inputf("%s:%d: column %d: %w", name, pe.Line, pe.Column, pe.Err)
	}
	return inputf("%s: %w", name, err)
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
	if s.DurationS > 0 {
		fmt.Fprintf(tw, "mean rate\t%s req/s\n", strconv.FormatFloat(s.RateRPS, 'f', 3, 64))
	} else {
		// Every request at one instant (or one request): no span to take
		// a rate over.
		fmt.Fprintf(tw, "mean rate\t— (every request arrives at one instant)\n")
	}
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
