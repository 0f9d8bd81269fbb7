package cli

import (
	"bytes"
	"fmt"
	"io"
	"math"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"splitplan/report"
	"splitplan/traces"
)

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
				Usage:     "synthesize a workload: Poisson arrivals at a rate (or following a rate profile), sizes from a workload's distribution",
				UsageText: "splitplan trace generate (--workload NAME | --trace FILE) (--rps R | --rate-profile P [--rps MEAN]) [--burstiness CV] [--duration D] [--seed S] --out FILE [--format splitwise|azure] [--independent]",
				Description: "Sizes are (prompt, output) pairs resampled together from the builtin workload or\n" +
					"the trace file; --independent draws them independently (the reference simulator's way).\n" +
					"Azure timestamps count from " + traceAzureStart.Format(traces.AzureTimeLayout) + ".",
				Flags: append([]cli.Flag{workload, trace,
					&cli.Float64Flag{Name: "rps", Usage: "arrival rate in requests per second (required, > 0; with --rate-profile the mean rate, default the profile's)"},
					&cli.StringFlag{Name: "duration", Value: defaultDuration, Usage: "length of the workload: a Go duration (120s, 2m) or a number of seconds"},
					&cli.Uint64Flag{Name: "seed", Usage: "random seed; the same seed writes the same workload"},
					&cli.StringFlag{Name: "out", Usage: "`FILE` to write (required)"},
					&cli.StringFlag{Name: "format", Value: "splitwise", Usage: "output format: splitwise or azure"},
					&cli.BoolFlag{Name: "independent", Usage: "draw prompt and output sizes independently instead of as pairs"},
				}, arrivalFlags()...),
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
	case isSet(c, "workload") && isSet(c, "trace"):
		return nil, nil, badInputf("--workload and --trace are exclusive: give one of them")
	case isSet(c, "workload"):
		d, err := traces.Builtin(w)
		if err != nil {
			return nil, nil, badInputf("--workload %q: expected one of %s", w, strings.Join(traces.BuiltinNames(), ", "))
		}
		return d, nil, nil
	case isSet(c, "trace"):
		if t == "" {
			return nil, nil, badInputf("--trace: expected a file name")
		}
		reqs, err := readTraceFile(t)
		if err != nil {
			return nil, nil, err
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
		return report.WriteTraceStatsCSV(w, s)
	case "json":
		return report.WriteTraceStatsJSON(w, source, s)
	}
	return report.WriteTraceStatsTable(w, source, s)
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
	wc := workloadConfigOf(c)
	arr, err := wc.arrivals()
	if err != nil {
		return err
	}
	rps, given := wc.rate(arr)
	switch {
	case !given:
		return badInputf("--rps is required: the arrival rate in requests per second (> 0)")
	case math.IsNaN(rps) || math.IsInf(rps, 0) || rps <= 0:
		return badInputf("--rps %v: expected a positive number of requests per second", rps)
	}
	dur, err := wc.durationS(arr)
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
	if err := checkOutputs(c, "out"); err != nil {
		return err
	}
	format := c.String("format")
	if format != "splitwise" && format != "azure" {
		return badInputf("--format %q: expected splitwise or azure", format)
	}
	d, _, err := traceSource(c)
	if err != nil {
		return err
	}
	// A large trace takes seconds to draw and to write: progress on a
	// terminal, and an interrupt stops either.
	prog := newLineProgress(c.App.ErrWriter, "trace generate")
	defer prog.done()
	expected := int(math.Round(rps * dur))
	reqs, _, err := traces.SynthesizeArrivals(c.Context, d, rps, dur, c.Uint64("seed"), c.Bool("independent"), false, arr, func(n int) {
		prog.update("drawing requests", n, expected)
	})
	if c.Context.Err() != nil {
		return c.Context.Err()
	}
	if err != nil {
		return badInput(err)
	}
	err = writeOutput(c.Context, out, c.App.Writer, func(f io.Writer) error {
		lw := &lineCounter{w: f, step: 1 << 16, report: func(n int) { prog.update("writing", n, len(reqs)) }}
		if format == "azure" {
			return traces.WriteAzure(lw, reqs, traceAzureStart)
		}
		return traces.WriteSplitwise(lw, reqs)
	})
	if err != nil {
		return err
	}
	prog.done()
	sizes := "pairs"
	if c.Bool("independent") {
		sizes = "independent sizes"
	}
	fmt.Fprintf(reportWriter(c, "out"), "wrote %d requests (%s, %s for %v s, seed %d, %s) to %s\n",
		len(reqs), d.Name(), arr.Describe(rps), dur, c.Uint64("seed"), sizes, out)
	return nil
}

// lineCounter passes writes to w and calls report with the number of
// lines written so far each time another step of them has gone through:
// the progress of a long write.
type lineCounter struct {
	w      io.Writer
	step   int
	lines  int
	next   int
	report func(lines int)
}

// Write writes p and counts its newlines.
func (l *lineCounter) Write(p []byte) (int, error) {
	n, err := l.w.Write(p)
	l.lines += bytes.Count(p[:n], []byte{'\n'})
	if l.lines >= l.next {
		l.report(l.lines)
		l.next = l.lines + l.step
	}
	return n, err
}
