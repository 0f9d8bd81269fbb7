package cli

import (
	"fmt"
	"io"
	"time"

	"github.com/urfave/cli/v2"

	"splitplan/evaluator/perf/errmodel"
	"splitplan/report"
	"splitplan/report/htmlreport"
	"splitplan/search"
)

// robustFlags are optimize's flags of the answer with error bars
// (search.RunRobust) and of the sensitivity analysis (search.Sensitivity).
func robustFlags() []cli.Flag {
	return []cli.Flag{
		unsetFloat64{&cli.Float64Flag{Name: "confidence", Usage: "also find, per design, the cheapest (least-power) counts that meet every SLO in at least this share of --scenarios scenarios, each one draw of the performance model's validated error per GPU and phase and one workload seed (goals cost and power), e.g. 0.9"}},
		&cli.IntFlag{Name: "scenarios", Value: search.DefaultScenarios, Usage: "with --confidence: the number of scenarios"},
		&cli.BoolFlag{Name: "sensitivity", Usage: "also search again with prompt time, decode time, KV-transfer bandwidth, arrival rate and output length each moved by ±10% and ±25% alone: how the best plan moves (a tornado figure with --plot and --report)"},
		&cli.StringFlag{Name: "sensitivity-out", Usage: "with --sensitivity: write the nominal best plan and the best plan with each input moved, one row each, to CSV `FILE` (docs/formats.md)"},
	}
}

// robustRequested reports whether optimize is asked for an answer with
// error bars or a sensitivity analysis, checking the flags that go with
// them.
func robustRequested(c *cli.Context) (bool, error) {
	if !isSet(c, "confidence") {
		if isSet(c, "scenarios") {
			return false, badInputf("--scenarios goes with --confidence (the robust search); to judge given clusters in scenarios, write the optima with --out FILE and run evaluate --from FILE --rps RATE --scenarios N")
		}
		return c.Bool("sensitivity"), checkSensitivityOut(c)
	}
	conf := c.Float64("confidence")
	if !(conf > 0 && conf <= 1) {
		return false, badInputf("--confidence %v: expected a share of the scenarios in (0, 1], e.g. 0.9", conf)
	}
	if n := c.Int("scenarios"); n < 1 || n > search.MaxScenarios {
		return false, badInputf("--scenarios %d: expected 1 to %d", n, search.MaxScenarios)
	}
	return true, checkSensitivityOut(c)
}

// checkSensitivityOut refuses --sensitivity-out without --sensitivity,
// which alone makes its rows.
func checkSensitivityOut(c *cli.Context) error {
	if isSet(c, "sensitivity-out") && !c.Bool("sensitivity") {
		return badInputf("--sensitivity-out %s goes with --sensitivity, which searches again with each input moved", c.String("sensitivity-out"))
	}
	return nil
}

// optimizeRobust is optimize with --confidence or --sensitivity: the
// nominal search, the robust one (--confidence) and the sensitivity
// analysis (--sensitivity), printed (or written as JSON) together;
// --out writes the robust CSV with --confidence (the optima CSV without),
// --points and --pairs the nominal search's.
func optimizeRobust(c *cli.Context, p *search.Problem, format string) error {
	robust := isSet(c, "confidence")
	if robust && p.Goal != search.GoalCost && p.Goal != search.GoalPower {
		why := fmt.Sprintf("its objective is measured by each simulation (a plan's energy moves with its scenario's iteration times), so a plan has no one objective to rank across scenarios; to see how sure its answer is, write it with optimize --goal %s --out optima.csv and judge it with evaluate --from optima.csv --scenarios N, which counts the scenarios each plan meets every SLO in and gives its draw's P10–P90 across them", p.Goal)
		if p.Goal.NeedsBudget() {
			why = "it asks for the rate a budget serves, not the machine counts a rate needs"
		}
		return badInputf("--confidence answers --goal cost or power (an objective of the machine counts alone), not %s: %s", p.Goal, why)
	}
	if c.Bool("sensitivity") && !p.Goal.NeedsRate() {
		return badInputf("--sensitivity moves the rate of --goal cost, power, energy or tco, not %s", p.Goal)
	}
	if p.Options.Compat {
		return badInputf("--confidence and --sensitivity scale the performance models, which --compat splitwise-sim reads as the reference's curves: drop one")
	}
	if checkOnly(c.Context) {
		return p.Validate()
	}
	prog := newProgress(c.App.ErrWriter)
	p.Progress = prog.update
	start := time.Now()
	var res *search.Result
	var rr *search.RobustResult
	var err error
	if robust {
		scen := newLineProgress(c.App.ErrWriter, "optimize --confidence")
		// The text report prints the winner's price of certainty alone;
		// the JSON, the figures and the HTML report show every design's.
		r := search.Robust{Confidence: c.Float64("confidence"), Scenarios: c.Int("scenarios"), Errors: errmodel.Builtin(), Seed: p.Workload.Seed,
			WinnerCurveOnly: format != "json" && c.String("plot") == "" && c.String("report") == "", Progress: scen.update}
		if rr, err = search.RunRobust(c.Context, p, r); err == nil {
			res = rr.Nominal
		}
		scen.done()
	} else {
		res, err = search.Run(c.Context, p)
	}
	var rows []search.SensitivityRow
	if err == nil && c.Bool("sensitivity") {
		rows, err = search.Sensitivity(c.Context, p, res, search.DefaultSensitivitySteps)
	}
	prog.done()
	if err != nil {
		if c.Context.Err() != nil {
			return err
		}
		return explainSearchError(err, p)
	}
	return writeRobust(c, res, rr, rows, p, format, time.Since(start))
}

// writeRobust writes a robust or sensitivity search's answer: its files,
// the tables or JSON on stdout, and the --plot figures (rr nil without
// --confidence, rows nil without --sensitivity).
func writeRobust(c *cli.Context, res *search.Result, rr *search.RobustResult, rows []search.SensitivityRow, p *search.Problem, format string, elapsed time.Duration) error {
	err := writeOptimizeFiles(c, res, p, func(f io.Writer) error {
		if rr != nil {
			return report.WriteRobustCSV(f, rr)
		}
		return report.WriteOptimaCSV(f, res, p.SLO)
	})
	if err != nil {
		return err
	}
	if path := c.String("sensitivity-out"); path != "" && rows != nil {
		if err := writeOutput(c.Context, path, c.App.Writer, func(f io.Writer) error { return report.WriteSensitivityCSV(f, res, rows) }); err != nil {
			return err
		}
	}
	w := reportWriter(c, "out", "points", "pairs", "sensitivity-out")
	if format == "json" {
		if err := report.WriteRobustJSON(w, res, rr, rows, p); err != nil {
			return err
		}
	} else {
		if rr != nil {
			// The nominal search's own time, which the robust one's is
			// compared with, not the whole run's.
			elapsed = rr.NominalTime
		}
		report.PrintOptima(w, res, p, elapsed)
		if rr != nil {
			report.PrintRobust(w, rr, p)
		}
		if rows != nil {
			report.PrintSensitivity(w, res, rows)
		}
	}
	if dir := c.String("plot"); dir != "" {
		paths, err := report.WriteOptimizePlots(dir, res, p)
		if err == nil && rr != nil {
			var more []string
			more, err = report.WriteRobustPlots(dir, rr, p)
			paths = append(paths, more...)
		}
		if err == nil && rows != nil {
			var more []string
			more, err = report.WriteSensitivityPlot(dir, res, rows, p)
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
	return writeReport(c, func() (*htmlreport.Report, error) {
		var r *htmlreport.Report
		var err error
		if rr != nil {
			r, err = htmlreport.OptimizeRobust(rr, p, reportMeta(c))
		} else {
			r, err = htmlreport.Optimize(res, p, reportMeta(c))
		}
		if err == nil && rows != nil {
			err = htmlreport.AddSensitivity(r, res, rows)
		}
		return r, err
	})
}
