package htmlreport

import (
	"cmp"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"

	"splitplan/report"
	"splitplan/search"
	"splitplan/traces"
)

// OptimizeRobust builds the report of an optimize --confidence run: the
// nominal report (Optimize of rr.Nominal) with the robust answer beside
// it. The answer names the robust plan after the nominal one; the question
// says what a scenario is; the first table shown is the robust CSV (what
// --out writes with --confidence), the nominal optima's table after it; a
// section "How sure" draws every design's price of certainty and the
// spread of its scenario optima. rr must hold every design's price of
// certainty (search.Robust.WinnerCurveOnly unset), as the figures draw
// them all.
func OptimizeRobust(rr *search.RobustResult, p *search.Problem, m Meta) (*Report, error) {
	r, err := Optimize(rr.Nominal, p, m)
	if err != nil {
		return nil, err
	}
	unit := report.ObjectiveUnit(rr.Nominal.Goal)
	r.Title += fmt.Sprintf(", with error bars (confidence %g)", rr.Confidence)
	r.Answer = robustAnswer(rr, unit)
	won := func(ws []search.Wins) string {
		return strings.TrimPrefix(report.WinsText(ws, rr.NoWinner, rr.Scenarios), "scenarios won: ")
	}
	judged := ""
	if v := rr.Nominal.VerifyS; v > 0 {
		judged = fmt.Sprintf(", judged over its own trace and over its traffic continued to %s, as the nominal optima", traces.SecondsText(v))
	}
	r.Question = append(r.Question,
		Field{Label: "scenarios", Text: fmt.Sprintf(
			"%d, each one draw of the performance model's validated error per GPU and phase and one workload seed%s; a robust plan meets every SLO in at least %d of them (confidence %g)",
			rr.Scenarios, judged, rr.Needed, rr.Confidence)},
		Field{Label: "designs won", Text: won(rr.DesignWins)},
		Field{Label: "GPU pairs won", Text: won(rr.PairWins)})
	t, err := TableOf("robust", "optimize --confidence --out", func(w io.Writer) error { return report.WriteRobustCSV(w, rr) })
	if err != nil {
		return nil, err
	}
	r.Tables = append([]Table{t}, r.Tables...)
	r.Shown = 2
	figs := []Figure{certaintyChart(rr, unit), spreadChart(rr, unit)}
	note := fmt.Sprintf("The performance model's error as its own validation measured it, and the sampling of a finite workload, drawn %d times: "+
		"the robust plan of each confidence meets every SLO in that share of the scenarios by its own simulations. "+
		"Not covered: errors no validation saw, failures, a change of the workload's distribution (docs/model.md).", rr.Scenarios)
	if below := report.BelowNominalNote(rr, unit); below != "" {
		note += " " + below
	}
	r.Sections = append([]Section{{Title: "How sure", Note: note, Figures: figs}}, r.Sections...)
	return r, nil
}

// objectiveText is the objective in unit (report.ObjectiveUnit):
// "$1216.0/h", "160.5 kW", "1874 kWh/day" or "$1190.2/h owned".
func objectiveText(v float64, unit string) string {
	switch unit {
	case "kW":
		return fmt.Sprintf("%.1f kW", v)
	case "kWh/day":
		return fmt.Sprintf("%.0f kWh/day", v)
	case "owned $/h":
		return fmt.Sprintf("$%.1f/h owned", v)
	}
	return fmt.Sprintf("$%.1f/h", v)
}

// robustAnswer is the report's answer: the nominal best and the robust
// one, in two sentences.
func robustAnswer(rr *search.RobustResult, unit string) string {
	res := rr.Nominal
	var b strings.Builder
	if res.Winner >= 0 {
		d := res.Designs[res.Winner]
		odds := ""
		if rr.NominalBestPassed() >= 0 {
			odds = fmt.Sprintf("; it meets every SLO in %d of the %d scenarios", rr.NominalBestPassed(), rr.Scenarios)
		}
		fmt.Fprintf(&b, "Nominal: %s, %s, %s (the model's prediction, one workload%s). ", d.Design, report.PlanText(d.Baseline, d.Best.Prompt, d.Best.Token), objectiveText(report.ObjectiveOf(res.Goal, d.Best), unit), odds)
	} else {
		b.WriteString("Nominal: no design meets the goal within the bounds. ")
	}
	if rr.Winner < 0 {
		fmt.Fprintf(&b, "Robust: no design meets every SLO in %d of the %d scenarios within --max-machines.", rr.Needed, rr.Scenarios)
		return b.String()
	}
	d := rr.Designs[rr.Winner]
	fmt.Fprintf(&b, "Robust at confidence %g: %s, %s, %s, meeting every SLO in %d of the %d scenarios.",
		rr.Confidence, d.Design, report.PlanText(d.Baseline, d.Prompt, d.Token), objectiveText(d.Objective, unit), d.Passed, rr.Scenarios)
	return b.String()
}

// certaintyChart is the price of certainty: each design's robust
// objective against the confidence, the chosen confidence dashed.
func certaintyChart(rr *search.RobustResult, unit string) *Chart {
	c := &Chart{ID: "certainty", Title: "Price of certainty: the robust plan's " + unit + " against the confidence", XLabel: "confidence (share of scenarios met)", YLabel: unit,
		Note: "Each point is the cheapest plan of its design meeting every SLO in that share of the scenarios; a design without a plan at a confidence has no point there."}
	lo, hi := math.Inf(1), math.Inf(-1)
	for i, d := range rr.Designs {
		if d.BoundedOut {
			continue
		}
		s := Series{Name: d.Design, Line: true, Markers: true, Colour: seriesColour(i)}
		for _, l := range d.Certainty {
			if !l.Found {
				continue
			}
			s.Points = append(s.Points, Pt{X: l.Confidence, Y: l.Objective,
				Tip: fmt.Sprintf("%s at confidence %g: %s, %s, meets every SLO in at least %d of %d scenarios", d.Design, l.Confidence,
					report.PlanText(d.Baseline, l.Prompt, l.Token), objectiveText(l.Objective, unit), l.Needed, rr.Scenarios)})
			lo, hi = math.Min(lo, l.Objective), math.Max(hi, l.Objective)
		}
		if len(s.Points) > 0 {
			c.Series = append(c.Series, s)
		}
	}
	if lo <= hi {
		c.Series = append(c.Series, Series{Name: fmt.Sprintf("chosen confidence %g", rr.Confidence), Line: true, Dashed: true, Colour: "#000000",
			Points: []Pt{{X: rr.Confidence, Y: lo}, {X: rr.Confidence, Y: hi}}})
	}
	return c
}

// spreadChart is each design's scenario optima, sorted: its objective
// against the share of scenarios whose optimum is at most that (a CDF
// read sideways, P10/P50/P90 at 10, 50 and 90%), the nominal optimum as a
// big dot at 50%.
func spreadChart(rr *search.RobustResult, unit string) *Chart {
	c := &Chart{ID: "spread", Title: "Spread of the scenario optima: each scenario's own cheapest plan", XLabel: "share of scenarios (%)", YLabel: unit,
		Note: "Each design's optima in the scenarios, sorted: read P10, P50 and P90 at 10, 50 and 90%. Scenarios where nothing within --max-machines meets every SLO are left out. Big dots: the nominal optimum."}
	nominal := Series{Name: "nominal optimum", Markers: true, Big: true, Colour: "#000000"}
	for i, d := range rr.Designs {
		if d.BoundedOut {
			continue
		}
		var opt []search.ScenarioOptimum
		for _, o := range d.Scenarios {
			if o.Found {
				opt = append(opt, o)
			}
		}
		if len(opt) == 0 {
			continue
		}
		slices.SortStableFunc(opt, func(a, b search.ScenarioOptimum) int { return cmp.Compare(a.Objective, b.Objective) })
		s := Series{Name: d.Design, Line: true, Markers: true, Colour: seriesColour(i)}
		for k, o := range opt {
			share := 100 * float64(k+1) / float64(rr.Scenarios)
			s.Points = append(s.Points, Pt{X: share, Y: o.Objective,
				Tip: fmt.Sprintf("%s: %.0f%% of the scenarios' optima at most %s (%s)", d.Design, share, objectiveText(o.Objective, unit), report.PlanText(d.Baseline, o.Prompt, o.Token))})
		}
		c.Series = append(c.Series, s)
		if nd := rr.Nominal.Designs[i]; nd.Found {
			obj := report.ObjectiveOf(rr.Nominal.Goal, nd.Best)
			nominal.Points = append(nominal.Points, Pt{X: 50, Y: obj, Tip: fmt.Sprintf("%s nominal optimum: %s, %s", d.Design, report.PlanText(d.Baseline, nd.Best.Prompt, nd.Best.Token), objectiveText(obj, unit))})
		}
	}
	if len(nominal.Points) > 0 {
		c.Series = append(c.Series, nominal)
	}
	return c
}
