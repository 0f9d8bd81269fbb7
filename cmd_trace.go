package main

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/urfave/cli/v2"

	"splitplan/traces"
)

func init() { commands = append(commands, traceCommand) }

// traceAzureStart is the wall clock of arrival 0 in generated Azure traces, so
// that the same flags always write the same file.
var traceAzureStart = time.Date(2023, 11, 16, 0, 0, 0, 0, time.UTC)

// traceCommand is `splitplan trace`: workload statistics and synthesis.
func traceCommand() *cli.Command {
	workload := &cli.StringFlag{Name: "workload", Usage: "builtin workload: " + strings.Join(traces.BuiltinNames(), " or ")}
	trace := &cli.StringFlag{Name: "trace", Usage: "trace `FILE` in the Azure or SplitwiseSim CSV format"}
	return &cli.Command{
		Name:  "trace",
		Usage: "workload statistics and synthetic workloads",
		Subcommands: []*cli.Command{
			{
				Name:      "stats",
				Usage:     "summarize a builtin workload or a trace file: requests, rate, prompt and output sizes",
				UsageText: "splitplan trace stats (--workload NAME | --trace FILE) [--format table|csv|json]",
				Description: "For a builtin workload it reports the real trace the embedded distribution was\n" +
					"derived from. Percentiles interpolate linearly between order statistics.",
				Flags: []cli.Flag{workload, trace,
					&cli.StringFlag{Name: "format", Value: "table", Usage: "output format: table, csv or json"},
				},
				Action: traceStats,
			},
			{
				Name:      "generate",
				Usage:     "synthesize a workload: Poisson arrivals at a rate, sizes from a workload's distribution",
				UsageText: "splitplan trace generate (--workload NAME | --trace FILE) --rps R [--duration D] [--seed S] --out FILE [--format splitwise|azure] [--independent]",
				Description: "Sizes are (prompt, output) pairs resampled together from the builtin workload or\n" +
					"the trace file; --independent draws them independently (the reference simulator's way).\n" +
					"Azure timestamps count from " + traceAzureStart.Format(traces.AzureTimeLayout) + ".",
				Flags: []cli.Flag{workload, trace,
					&cli.Float64Flag{Name: "rps", Usage: "arrival rate in requests per second (required, > 0)"},
					&cli.StringFlag{Name: "duration", Value: "120s", Usage: "length of the workload: a Go duration (120s, 2m) or a number of seconds"},
					&cli.Uint64Flag{Name: "seed", Usage: "random seed; the same seed writes the same workload"},
					&cli.StringFlag{Name: "out", Usage: "`FILE` to write (required)"},
					&cli.StringFlag{Name: "format", Value: "splitwise", Usage: "output format: splitwise or azure"},
					&cli.BoolFlag{Name: "independent", Usage: "draw prompt and output sizes independently instead of as pairs"},
				},
				Action: traceGenerate,
			},
		},
	}
}

// traceSource resolves --workload or --trace (exactly one) to a size
// distribution, with the requests read when it is a trace file.
func traceSource(c *cli.Context) (*traces.Distribution, []traces.Request, error) {
	w, t := c.String("workload"), c.String("trace")
	switch {
	case c.IsSet("workload") && c.IsSet("trace"):
		return nil, nil, badInputf("--workload and --trace are exclusive: give one of them")
	case c.IsSet("workload"):
		d, err := traces.Builtin(w)
		if err != nil {
			return nil, nil, badInputf("--workload %q: expected one of %s", w, strings.Join(traces.BuiltinNames(), ", "))
		}
		return d, nil, nil
	case c.IsSet("trace"):
		if t == "" {
			return nil, nil, badInputf("--trace: expected a file name")
		}
		reqs, err := traces.ReadFile(t)
		if err != nil {
			return nil, nil, badInput(err)
		}
		return traces.FromRequests(t, reqs), reqs, nil
	default:
		return nil, nil, badInputf("give one of --workload (%s) or --trace FILE", strings.Join(traces.BuiltinNames(), ", "))
	}
}

func traceStats(c *cli.Context) error {
	if err := noArgs(c); err != nil {
		return err
	}
	format := c.String("format")
	switch format {
	case "table", "csv", "json":
	default:
		return badInputf("--format %q: expected table, csv or json", format)
	}
	d, reqs, err := traceSource(c)
	if err != nil {
		return err
	}
	source := "trace " + d.Source()
	if reqs == nil {
		source = "workload " + d.Name() + " (embedded, from " + d.Source() + ")"
	}
	s := d.Stats()
	w := c.App.Writer
	switch format {
	case "csv":
		return writeTraceStatsCSV(w, s)
	case "json":
		return writeTraceStatsJSON(w, source, s)
	}
	return writeTraceStatsTable(w, source, s)
}

// traceStatsColumns are the CSV columns (and JSON keys) of trace stats.
var traceStatsColumns = []string{"requests", "duration_s", "rate_rps",
	"prompt_mean", "prompt_p50", "prompt_p90", "prompt_p99", "prompt_max",
	"output_mean", "output_p50", "output_p90", "output_p99", "output_max"}

// traceRound4 rounds x to 4 decimal places, hiding float noise in reports.
func traceRound4(x float64) float64 { return math.Round(x*1e4) / 1e4 }

// traceFmt4 formats x rounded to 4 decimal places, without trailing zeros.
func traceFmt4(x float64) string { return strconv.FormatFloat(traceRound4(x), 'f', -1, 64) }

// traceStatsValues returns the values of traceStatsColumns for s.
func traceStatsValues(s traces.Stats) []float64 {
	v := []float64{float64(s.Requests), s.DurationS, s.RateRPS}
	for _, x := range []traces.Summary{s.Prompt, s.Output} {
		v = append(v, x.Mean, x.P50, x.P90, x.P99, float64(x.Max))
	}
	return v
}

func writeTraceStatsCSV(w io.Writer, s traces.Stats) error {
	cw := csv.NewWriter(w)
	cw.Write(traceStatsColumns)
	row := make([]string, len(traceStatsColumns))
	for i, v := range traceStatsValues(s) {
		row[i] = traceFmt4(v)
	}
	cw.Write(row)
	cw.Flush()
	return cw.Error()
}

func writeTraceStatsJSON(w io.Writer, source string, s traces.Stats) error {
	// Build the object by hand to keep the keys in column order.
	var b strings.Builder
	fmt.Fprintf(&b, "{\n  \"source\": %s", strconv.Quote(source))
	for i, v := range traceStatsValues(s) {
		fmt.Fprintf(&b, ",\n  %q: %s", traceStatsColumns[i], traceFmt4(v))
	}
	b.WriteString("\n}\n")
	if !json.Valid([]byte(b.String())) {
		return fmt.Errorf("trace stats: internal error: invalid JSON")
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func writeTraceStatsTable(w io.Writer, source string, s traces.Stats) error {
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

// traceParseDuration reads --duration: a Go duration or a number of seconds,
// positive and finite.
func traceParseDuration(s string) (float64, error) {
	sec, err := parseSeconds(s)
	if err != nil {
		return 0, badInputf("--duration %q: expected a positive duration like 120s or 2m, or a number of seconds", s)
	}
	return sec, nil
}

func traceGenerate(c *cli.Context) error {
	if err := noArgs(c); err != nil {
		return err
	}
	rps := c.Float64("rps")
	switch {
	case !c.IsSet("rps"):
		return badInputf("--rps is required: the arrival rate in requests per second (> 0)")
	case math.IsNaN(rps) || math.IsInf(rps, 0) || rps <= 0:
		return badInputf("--rps %v: expected a positive number of requests per second", rps)
	}
	dur, err := traceParseDuration(c.String("duration"))
	if err != nil {
		return err
	}
	if rps*dur > traces.MaxSynthesized {
		return badInputf("--rps %v for --duration %v s makes about %.3g requests: expected at most %d",
			rps, dur, rps*dur, traces.MaxSynthesized)
	}
	out := c.String("out")
	if out == "" {
		return badInputf("--out is required: the file to write")
	}
	format := c.String("format")
	if format != "splitwise" && format != "azure" {
		return badInputf("--format %q: expected splitwise or azure", format)
	}
	d, _, err := traceSource(c)
	if err != nil {
		return err
	}
	reqs, err := traces.Synthesize(d, rps, dur, c.Uint64("seed"), c.Bool("independent"))
	if err != nil {
		return badInput(err)
	}
	err = writeFileAtomic(out, func(f *os.File) error {
		if format == "azure" {
			return traces.WriteAzure(f, reqs, traceAzureStart)
		}
		return traces.WriteSplitwise(f, reqs)
	})
	if err != nil {
		return err
	}
	sizes := "pairs"
	if c.Bool("independent") {
		sizes = "independent sizes"
	}
	fmt.Fprintf(c.App.Writer, "wrote %d requests (%s, %v req/s for %v s, seed %d, %s) to %s\n",
		len(reqs), d.Name(), rps, dur, c.Uint64("seed"), sizes, out)
	return nil
}
