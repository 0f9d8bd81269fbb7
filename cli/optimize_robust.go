package cli

import (
	"fmt"
	"io"
	"time"

	"github.com/urfave/cli/v2"

	"splitplan/evaluator/perf/errmodel"
	"splitplan/report"
	"splitplan/search"
)

// robustFlags are optimize's flags of the answer with error bars
// (search.RunRobust) and of the sensitivity analysis.
func robustFlags() []cli.Flag {
	return []cli.Flag{
		unsetFloat64{&cli.Float64Flag{Name: "confidence", Usage: "also find, per design, the cheapest (least-power) counts that meet every SLO in at least this share of --scenarios scenarios, each one draw of the performance model's validated error per GPU and phase and one workload seed (goals cost and power), e.g. 0.9"}},
		&cli.IntFlag{Name: "scenarios", Value: search.DefaultScenarios, Usage: "with --confidence: the number of scenarios"},
	}
}

// robustRequested reports whether optimize is asked for an answer with
// error bars, checking the flags that go with it.
func robustRequested(c *cli.Context) (bool, error) {
	if !c.IsSet("confidence") {
		if c.IsSet("scenarios") {
			return false, badInputf("--scenarios goes with --confidence")
		}
		return false, nil
	}
	conf := c.Float64("confidence")
	if !(conf > 0 && conf <= 1) {
		return false, badInputf("--confidence %v: expected a share of the scenarios in (0, 1], e.g. 0.9", conf)
	}
	if n := c.Int("scenarios"); n < 1 || n > search.MaxScenarios {
		return false, badInputf("--scenarios %d: expected 1 to %d", n, search.MaxScenarios)
	}
	return true, nil
}

// optimizeRobust is optimize with --confidence: the nominal search and
// the robust one, printed (or written as JSON) together; --out writes the
// robust CSV, --points and --pairs the nominal search's.
func optimizeRobust(c *cli.Context, p *search.Problem, format string) error {
	if p.Goal != search.GoalCost && p.Goal != search.GoalPower {
		return badInputf("--confidence answers --goal cost or power, not %s", p.Goal)
	}
	if p.Options.Compat {
		return badInputf("--confidence scales the performance models, which --compat splitwise-sim reads as the reference's curves: drop one")
	}
	r := search.Robust{Confidence: c.Float64("confidence"), Scenarios: c.Int("scenarios"), Errors: errmodel.Builtin(), Seed: p.Workload.Seed}
	prog := newProgress(c.App.ErrWriter)
	p.Progress = prog.update
	start := time.Now()
	rr, err := search.RunRobust(c.Context, p, r)
	prog.done()
	if err != nil {
		if c.Context.Err() != nil {
			return err
		}
		return explainSearchError(err, p)
	}
	elapsed := time.Since(start)
	res := rr.Nominal
	if path := c.String("out"); path != "" {
		if err := writeOutput(c.Context, path, c.App.Writer, func(f io.Writer) error { return report.WriteRobustCSV(f, rr) }); err != nil {
			return err
		}
	}
	if path := c.String("points"); path != "" {
		if err := writeOutput(c.Context, path, c.App.Writer, func(f io.Writer) error { return report.WritePointsCSV(f, res, p.SLO) }); err != nil {
			return err
		}
	}
	if path := c.String("pairs"); path != "" {
		recs, _, _, _ := report.PairsOf(res, p.Catalog)
		if err := writeOutput(c.Context, path, c.App.Writer, func(f io.Writer) error { return report.WritePairsCSV(f, recs) }); err != nil {
			return err
		}
	}
	w := reportWriter(c, "out", "points", "pairs")
	if format == "json" {
		if err := report.WriteRobustJSON(w, rr, p); err != nil {
			return err
		}
	} else {
		report.PrintOptima(w, res, p, elapsed)
		report.PrintRobust(w, rr, p, elapsed)
	}
	if dir := c.String("plot"); dir != "" {
		paths, err := report.WriteOptimizePlots(dir, res, p)
		if err == nil {
			var more []string
			more, err = report.WriteRobustPlots(dir, rr, p)
			paths = append(paths, more...)
		}
		if format != "json" {
			for _, path := range paths {
				fmt.Fprintf(w, "wrote     %s\n", path)
			}
		}
		if err != nil {
			return err
		}
	}
	return nil
}
