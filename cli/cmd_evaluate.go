package cli

import (
	"errors"
	"fmt"
	"path/filepath"

	"github.com/urfave/cli/v2"

	"splitplan/report"
	"splitplan/resolve"
	"splitplan/traces"
)

func evaluateCommand() *cli.Command {
	flags := append([]cli.Flag{
		&cli.StringFlag{Name: "from", Usage: "optima CSV `FILE` (optimize --out): run every design's optimum found in it; from a robust table (optimize --confidence --out), every design's robust plan and its nominal one"},
		&cli.StringFlag{Name: "power-caps", Usage: "curtailment report: cap each pool's GPUs at these fractions of board power, lo:hi:step (0.5:1.0:0.05) or a list, and say the lowest cap that still meets every SLO"},
	}, loadFlags("")...)
	return &cli.Command{
		Name:  "evaluate",
		Usage: "robustness: run clusters sized for one workload under another workload or model over a range of rates, with the SLO verdict",
		UsageText: "splitplan evaluate --from optima.csv --workload conversation --rps 10:100:10 [--out evaluate.csv] [--plot evaluate.png]\n" +
			"splitplan evaluate --cluster HH:35:5 --cluster Baseline-H100:40 --model llama2-70b --rps 20,40,60\n" +
			"splitplan evaluate --cluster HH:23:6 --rps 70 --power-caps 0.5:1.0:0.05",
		Flags:  categorized(flags),
		Action: evaluate,
	}
}

func evaluate(c *cli.Context) error {
	if err := noArgs(c); err != nil {
		return err
	}
	if err := checkLoadOutputs(c); err != nil {
		return err
	}
	if !isSet(c, "rps") {
		return badInputf("--rps is required: the rates to evaluate at, START:STOP:STEP like 10:100:10 or a comma list")
	}
	var caps []float64
	if isSet(c, "power-caps") {
		var err error
		if caps, err = parsePowerCaps(c.String("power-caps")); err != nil {
			return err
		}
	}
	from := c.String("from")
	var extra []resolve.Cluster
	var notes []string
	if from != "" {
		var err error
		if extra, notes, err = clustersFromOptima(c, from); err != nil {
			return err
		}
		if len(extra) == 0 && !isSet(c, "design") && len(c.StringSlice("cluster")) == 0 {
			fmt.Fprintf(c.App.Writer, "no design in %s found an optimum: nothing to evaluate", from)
			for _, fl := range []string{"out", "plot"} {
				if p := c.String(fl); p != "" {
					fmt.Fprintf(c.App.Writer, "; --%s %s not written", fl, p)
				}
			}
			fmt.Fprintln(c.App.Writer)
			return nil
		}
	}
	ld, err := loadRunFromFlags(c, extra)
	if err != nil {
		return err
	}
	ld.Notes = append(notes, ld.Notes...)
	title := "Robustness: latency vs load"
	if from != "" {
		title = fmt.Sprintf("Clusters of %s under %s", filepath.Base(from), ld.Workload.Sizes.Name())
	}
	if err := ld.run(c, title); err != nil || caps == nil {
		return err
	}
	pl, err := planFrom(c)
	if err != nil {
		return err
	}
	pl.physics = ld.Physics // the provenance of the clusters curtailed
	prog := newLineProgress(c.App.ErrWriter, "evaluate --power-caps")
	ld.Progress = func(done, total int) { prog.update("capped simulations", done, total) }
	ld.checkProgress = func(done, total int) { prog.update("checks over "+traces.SecondsText(ld.VerifyS), done, total) }
	rows, err := ld.curtail(c.Context, pl.perfSource(), caps)
	prog.done()
	if err != nil {
		return err
	}
	report.PrintCurtailment(reportWriter(c, "out"), rows)
	return nil
}

// clustersFromOptima reads the optimum of every design in an optima CSV
// (optimize --out) as a cluster, with its batching policy when its name
// carries one; a design that found none is skipped with a note. From a
// robust table (optimize --confidence --out) it reads each design's
// robust plan and, where it differs, its nominal one (robustPlans).
func clustersFromOptima(c *cli.Context, from string) ([]resolve.Cluster, []string, error) {
	var notes []string
	optima, err := report.ReadOptimaCSV(from)
	if errors.Is(err, report.ErrRobustTable) {
		optima, notes, err = robustPlans(from)
	}
	if err != nil {
		return nil, nil, err
	}
	pl, err := planFrom(c)
	if err != nil {
		return nil, nil, err
	}
	opt, err := simOptionsFromFlags(c)
	if err != nil {
		return nil, nil, err
	}
	if err := pl.checkCompatMemory(c, opt.Compat); err != nil {
		return nil, nil, err
	}
	extra := []resolve.Cluster{} // not nil: --from was given
	for _, o := range optima {
		if !o.Feasible {
			notes = append(notes, fmt.Sprintf("%s: %s found no optimum, skipped", filepath.Base(from), o.Design))
			continue
		}
		d, policy, named, err := resolve.Design(pl.Catalog, o.Design)
		if err != nil {
			return nil, nil, badInputf("%s: %s: %v", from, o.Design, err)
		}
		cl, err := resolve.ServingCluster(pl.Catalog, pl.perfSource().WithCompat(opt.Compat), d, o.Prompt, o.Token, pl.modelName(c))
		if err != nil {
			return nil, nil, badInputf("%s: %s: %v", from, o.Design, err)
		}
		cl.Policy, cl.PolicyInName = policy, named
		extra = append(extra, cl)
	}
	return extra, notes, nil
}

// robustPlans reads a robust table (optimize --confidence --out) as
// optima: each design's robust plan, then its nominal one where that
// differs (a plan that is both is run once), with a note per design
// naming which is which (the clusters' names give their counts only).
func robustPlans(from string) ([]report.OptimumRec, []string, error) {
	recs, err := report.ReadRobustCSV(from)
	if err != nil {
		return nil, nil, err
	}
	var out []report.OptimumRec
	var notes []string
	base := filepath.Base(from)
	counts := func(p, t int) string { return report.PlanText(t == 0, p, t) }
	for _, r := range recs {
		nominalOdds := "" // (files written before the nominal optima were counted have none)
		if r.NominalPassed >= 0 {
			nominalOdds = fmt.Sprintf(" (met every SLO in %d of %d scenarios)", r.NominalPassed, r.Scenarios)
		}
		plan := func(found bool, p, t int) report.OptimumRec {
			return report.OptimumRec{Design: r.Design, Goal: r.Goal, Prompt: p, Token: t, Machines: p + t, Feasible: found, Baseline: t == 0}
		}
		atLeast := "at least " // (a file written before every scenario was counted)
		if r.PassedExact {
			atLeast = ""
		}
		switch {
		case r.RobustFound && r.NominalFound:
			out = append(out, plan(true, r.RobustPrompt, r.RobustToken))
			same := ""
			if r.RobustPrompt == r.NominalPrompt && r.RobustToken == r.NominalToken {
				same = ", the same plan" // (run once)
			} else {
				out = append(out, plan(true, r.NominalPrompt, r.NominalToken))
			}
			notes = append(notes, fmt.Sprintf("%s: %s: robust plan %s (met every SLO in %s%d of %d scenarios, confidence %g), nominal plan %s%s%s",
				base, r.Design, counts(r.RobustPrompt, r.RobustToken), atLeast, r.Passed, r.Scenarios, r.Confidence, counts(r.NominalPrompt, r.NominalToken), nominalOdds, same))
		case r.RobustFound:
			out = append(out, plan(true, r.RobustPrompt, r.RobustToken))
			notes = append(notes, fmt.Sprintf("%s: %s: robust plan %s (met every SLO in %s%d of %d scenarios, confidence %g); no nominal plan",
				base, r.Design, counts(r.RobustPrompt, r.RobustToken), atLeast, r.Passed, r.Scenarios, r.Confidence))
		case r.NominalFound:
			out = append(out, plan(true, r.NominalPrompt, r.NominalToken))
			notes = append(notes, fmt.Sprintf("%s: %s: no robust plan at confidence %g; nominal plan %s%s",
				base, r.Design, r.Confidence, counts(r.NominalPrompt, r.NominalToken), nominalOdds))
		default:
			out = append(out, plan(false, 0, 0))
		}
	}
	return out, notes, nil
}
