package report

import (
	"encoding/csv"
	"fmt"
	"io"
	"math"
	"strconv"
	"text/tabwriter"

	"splitplan/plots"
	"splitplan/search"
)

// sensitivityBest is a result's best plan: its design and its objective,
// the goal's own figure (ok false when nothing met the SLOs).
func sensitivityBest(res *search.Result) (d search.DesignResult, obj float64, ok bool) {
	if res.Winner < 0 {
		return d, math.NaN(), false
	}
	d = res.Designs[res.Winner]
	return d, ObjectiveOf(res.Goal, d.Best), true
}

// changePct is the objective's change from base in percent.
func changePct(v, base float64) float64 { return 100 * (v - base) / base }

// SensitivityRec is one row of a sensitivity analysis: the best plan with
// one input moved (Input "nominal", Change 0: the nominal search's).
type SensitivityRec struct {
	Input string
	// Change is the input's relative move (−0.25: 25% less).
	Change float64
	// Found is false when no design met the SLOs; the rest is then zero.
	Found    bool
	Design   string
	Baseline bool
	Prompt   int
	Token    int
	// Objective is the goal's figure (ObjectiveUnit); Cost and Power the
	// plan's $/h and provisioned kW.
	Objective, Cost, Power float64
	// ObjectiveChange is Objective's relative change from the nominal
	// best's (NaN when either has no plan).
	ObjectiveChange float64
}

// SensitivityRecs are the nominal best and every row of a sensitivity
// analysis, in the analysis's order: what the table, the CSV, the JSON and
// the HTML report show.
func SensitivityRecs(nominal *search.Result, rows []search.SensitivityRow) []SensitivityRec {
	_, base, baseOK := sensitivityBest(nominal)
	rec := func(input string, change float64, res *search.Result) SensitivityRec {
		r := SensitivityRec{Input: input, Change: change, ObjectiveChange: math.NaN()}
		d, v, ok := sensitivityBest(res)
		if !ok {
			return r
		}
		r.Found, r.Design, r.Baseline, r.Prompt, r.Token = true, d.Design, d.Baseline, d.Best.Prompt, d.Best.Token
		r.Objective, r.Cost, r.Power = v, d.Best.CostUSDPerH, d.Best.PowerKW
		if baseOK {
			r.ObjectiveChange = (v - base) / base
		}
		return r
	}
	out := []SensitivityRec{rec("nominal", 0, nominal)}
	for _, r := range rows {
		out = append(out, rec(r.Input.String(), r.Change, r.Result))
	}
	return out
}

// PrintSensitivity prints how the optimum moves when each input moves
// alone: one row per input and step, with the best design, its counts,
// its objective (the goal's own figure) and its change from the nominal
// best's.
func PrintSensitivity(w io.Writer, nominal *search.Result, rows []search.SensitivityRow) {
	unit := ObjectiveUnit(nominal.Goal)
	recs := SensitivityRecs(nominal, rows)
	fmt.Fprintf(w, "\nsensitivity  the best plan when one input moves and the others stay nominal")
	if n := recs[0]; n.Found {
		fmt.Fprintf(w, " (nominal: %s %s, %s %s)", n.Design, countsText(n.Baseline, n.Prompt, n.Token), objText(n.Objective), unit)
	}
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "\nINPUT\tCHANGE\tBEST\tMACHINES\t%s\tvs NOMINAL\t\n", unit)
	for _, r := range recs[1:] {
		if !r.Found {
			fmt.Fprintf(tw, "%s\t%+g%%\tnone\t—\t—\t—\t\n", r.Input, 100*r.Change)
			continue
		}
		vs := "—"
		if !math.IsNaN(r.ObjectiveChange) {
			vs = fmt.Sprintf("%+.1f%%", 100*r.ObjectiveChange)
		}
		fmt.Fprintf(tw, "%s\t%+g%%\t%s\t%s\t%s\t%s\t\n", r.Input, 100*r.Change, r.Design, countsText(r.Baseline, r.Prompt, r.Token), objText(r.Objective), vs)
	}
	tw.Flush()
}

// SensitivityCSVHeader is WriteSensitivityCSV's header. change and
// objective_change are relative (−0.25: 25% less); objective is the
// goal's own figure (cost $/h, power kW, energy kWh/day, tco owned $/h);
// a plan's columns are empty where no design met the SLOs.
const SensitivityCSVHeader = "input,change,goal,found,design,prompt_machines,token_machines,objective,cost_usd_per_h,power_kw,objective_change"

// WriteSensitivityCSV writes a sensitivity analysis as CSV (optimize
// --sensitivity --sensitivity-out): the nominal best first (input
// "nominal", change 0), then one row per input and step.
func WriteSensitivityCSV(w io.Writer, nominal *search.Result, rows []search.SensitivityRow) error {
	cw := csv.NewWriter(w)
	cw.Write(splitHeader(SensitivityCSVHeader))
	goal := nominal.Goal.String()
	for _, r := range SensitivityRecs(nominal, rows) {
		row := []string{r.Input, ff(r.Change), goal, strconv.FormatBool(r.Found), "", "", "", "", "", "", ""}
		if r.Found {
			row[4], row[5], row[6] = r.Design, strconv.Itoa(r.Prompt), strconv.Itoa(r.Token)
			row[7], row[8], row[9] = ff(r.Objective), ff(r.Cost), ff(r.Power)
			if !math.IsNaN(r.ObjectiveChange) {
				row[10] = ff(r.ObjectiveChange)
			}
		}
		cw.Write(row)
	}
	cw.Flush()
	return cw.Error()
}

// SensitivityFigure is the tornado of a sensitivity analysis: per input,
// the best plan's objective change (in percent of the nominal best's) at
// each step down and up, the inputs the answer hinges on most on top.
// Steps must come in pairs ±s.
func SensitivityFigure(nominal *search.Result, rows []search.SensitivityRow, source string) plots.TornadoFigure {
	unit := ObjectiveUnit(nominal.Goal)
	f := plots.TornadoFigure{Title: "What the answer hinges on: the best plan's " + unit + " when one input moves", Subtitle: source,
		XLabel: "change of the best plan's " + unit + ", % of the nominal"}
	recs := SensitivityRecs(nominal, rows)
	base := recs[0]
	for _, in := range search.SensitivityInputs {
		ti := plots.TornadoInput{Name: in.String()}
		steps := map[float64][2]float64{}
		var mags []float64
		for _, r := range recs[1:] {
			if r.Input != ti.Name {
				continue
			}
			c := math.NaN()
			if base.Found && r.Found {
				c = changePct(r.Objective, base.Objective)
			}
			m := math.Abs(r.Change)
			e, seen := steps[m]
			if !seen {
				e = [2]float64{math.NaN(), math.NaN()}
				mags = append(mags, m)
			}
			if r.Change < 0 {
				e[0] = c
			} else {
				e[1] = c
			}
			steps[m] = e
		}
		sortFloats(mags)
		for _, m := range mags {
			ti.Steps = append(ti.Steps, m)
			ti.Down = append(ti.Down, steps[m][0])
			ti.Up = append(ti.Up, steps[m][1])
		}
		f.Inputs = append(f.Inputs, ti)
	}
	// The input with the widest swing at the largest step on top (the
	// last row of a horizontal chart is drawn highest).
	swing := func(t plots.TornadoInput) float64 {
		if len(t.Steps) == 0 {
			return 0
		}
		j := len(t.Steps) - 1
		s := 0.0
		for _, v := range []float64{t.Down[j], t.Up[j]} {
			if !math.IsNaN(v) {
				s += math.Abs(v)
			}
		}
		return s
	}
	stableSortBy(f.Inputs, func(a, b plots.TornadoInput) bool { return swing(a) < swing(b) })
	return f
}

// WriteSensitivityPlot writes the tornado figure into dir, PNG and SVG.
func WriteSensitivityPlot(dir string, nominal *search.Result, rows []search.SensitivityRow, p *search.Problem) ([]string, error) {
	source := fmt.Sprintf("%s; %s, %s request sizes, %gs per simulation, seed %d", GoalTitle(nominal), p.Model, p.Workload.Sizes.Name(), p.Workload.DurationS, p.Workload.Seed)
	f := SensitivityFigure(nominal, rows, source)
	fd := &figureDir{dir: dir} // (the --plot directory the search's figures made)
	err := fd.each("tornado", func(path string) error { return plots.Tornado(path, f) })
	return fd.written, err
}
