package report

import (
	"fmt"
	"io"
	"math"
	"text/tabwriter"

	"splitplan/plots"
	"splitplan/search"
)

// sensitivityBest is a result's best plan: its design, counts and
// objective (ok false when nothing met the SLOs).
func sensitivityBest(res *search.Result) (d search.DesignResult, obj float64, ok bool) {
	if res.Winner < 0 {
		return d, math.NaN(), false
	}
	d = res.Designs[res.Winner]
	return d, ObjectiveOf(res.Goal, d.Best), true
}

// changePct is the objective's change from base in percent.
func changePct(v, base float64) float64 { return 100 * (v - base) / base }

// PrintSensitivity prints how the optimum moves when each input moves
// alone: one row per input and step, with the best design, its counts,
// its objective and its change from the nominal best's.
func PrintSensitivity(w io.Writer, nominal *search.Result, rows []search.SensitivityRow) {
	unit := RobustUnit(nominal.Goal)
	bd, base, ok := sensitivityBest(nominal)
	fmt.Fprintf(w, "\nsensitivity  the best plan when one input moves and the others stay nominal")
	if ok {
		fmt.Fprintf(w, " (nominal: %s %s, %s %s)", bd.Design, countsText(bd.Baseline, bd.Best.Prompt, bd.Best.Token), objText(base), unit)
	}
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "\nINPUT\tCHANGE\tBEST\tMACHINES\t%s\tvs NOMINAL\t\n", unit)
	for _, r := range rows {
		d, v, found := sensitivityBest(r.Result)
		if !found {
			fmt.Fprintf(tw, "%s\t%+g%%\tnone\t—\t—\t—\t\n", r.Input, 100*r.Change)
			continue
		}
		vs := "—"
		if ok {
			vs = fmt.Sprintf("%+.1f%%", changePct(v, base))
		}
		fmt.Fprintf(tw, "%s\t%+g%%\t%s\t%s\t%s\t%s\t\n", r.Input, 100*r.Change, d.Design, countsText(d.Baseline, d.Best.Prompt, d.Best.Token), objText(v), vs)
	}
	tw.Flush()
}

// SensitivityFigure is the tornado of a sensitivity analysis: per input,
// the best plan's objective change (in percent of the nominal best's) at
// each step down and up, the inputs the answer hinges on most on top.
// Steps must come in pairs ±s.
func SensitivityFigure(nominal *search.Result, rows []search.SensitivityRow, source string) plots.TornadoFigure {
	unit := RobustUnit(nominal.Goal)
	f := plots.TornadoFigure{Title: "What the answer hinges on: the best plan's " + unit + " when one input moves", Subtitle: source,
		XLabel: "change of the best plan's " + unit + ", % of the nominal"}
	_, base, ok := sensitivityBest(nominal)
	for _, in := range search.SensitivityInputs {
		ti := plots.TornadoInput{Name: in.String()}
		steps := map[float64][2]float64{}
		var mags []float64
		for _, r := range rows {
			if r.Input != in {
				continue
			}
			_, v, found := sensitivityBest(r.Result)
			c := math.NaN()
			if ok && found {
				c = changePct(v, base)
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
