package htmlreport

import (
	"fmt"
	"io"
	"math"
	"slices"
	"sort"
	"strings"

	"splitplan/report"
	"splitplan/search"
)

// TornadoBar is one bar of a tornado: the objective's change (%) with one
// input moved by one step.
type TornadoBar struct {
	// Step is the input's relative move (−0.25: 25% less).
	Step float64
	// Change is the best plan's objective change in percent of the
	// nominal best's; NaN: no plan met the SLOs.
	Change float64
	// Tip is shown on hover.
	Tip string
}

// TornadoRow is one input of a tornado: its bars, the input lowered drawn
// above the input raised.
type TornadoRow struct {
	Name string
	Bars []TornadoBar
}

// Tornado is a sensitivity analysis drawn as diverging bars around the
// nominal (0%): one row per input, the input lowered in the row's upper
// half and raised in its lower half, the largest step widest and palest
// behind the smaller ones.
type Tornado struct {
	// ID names the figure in the page.
	ID string
	// Title heads it; Note follows it.
	Title, Note string
	// XLabel names the change with its unit.
	XLabel string
	// Rows are drawn top to bottom.
	Rows []TornadoRow
}

// tornado colours: lowered and raised inputs, the largest step pale.
var (
	tornadoDown = [2]string{"#0072B2", "#9CC7E4"}
	tornadoUp   = [2]string{"#D55E00", "#F2B48C"}
)

// steps is the tornado's step magnitudes, ascending.
func (t *Tornado) steps() []float64 {
	seen := map[float64]bool{}
	var out []float64
	for _, r := range t.Rows {
		for _, b := range r.Bars {
			if m := math.Abs(b.Step); !seen[m] {
				seen[m] = true
				out = append(out, m)
			}
		}
	}
	sort.Float64s(out)
	return out
}

// SVG draws the tornado and its legend.
func (t *Tornado) SVG() string {
	lo, hi := 0.0, 0.0
	for _, r := range t.Rows {
		for _, b := range r.Bars {
			if !math.IsNaN(b.Change) && !math.IsInf(b.Change, 0) {
				lo, hi = math.Min(lo, b.Change), math.Max(hi, b.Change)
			}
		}
	}
	if len(t.Rows) == 0 {
		return `<p class="empty">no data to draw</p>`
	}
	if lo == hi {
		lo, hi = -1, 1
	}
	lo, hi = widen(lo, hi, false)
	const rowH, left = 44.0, 170.0
	plotH := rowH * float64(len(t.Rows))
	height := padT + plotH + padB
	xa := axis{lo: lo, hi: hi, p0: left, p1: chartW - padR}
	steps := t.steps()
	var b strings.Builder
	fmt.Fprintf(&b, `<svg class="chart tornado" viewBox="0 0 %s %s" role="img" aria-label="%s">`, coord(chartW), coord(height), esc(t.Title))
	xGrid(&b, xa, plotH)
	x0 := xa.at(0)
	for i, r := range t.Rows {
		y := padT + float64(i)*rowH
		fmt.Fprintf(&b, `<text class="tick" x="%s" y="%s" text-anchor="end">%s</text>`, coord(left-6), coord(y+rowH/2+4), esc(clip(r.Name, 24)))
		// The largest step first (behind), each half its direction's.
		for si := len(steps) - 1; si >= 0; si-- {
			for _, bar := range r.Bars {
				if math.Abs(bar.Step) != steps[si] {
					continue
				}
				pale := 0
				if si == len(steps)-1 && len(steps) > 1 {
					pale = 1
				}
				top, col := y+3, tornadoDown[pale]
				if bar.Step > 0 {
					top, col = y+rowH/2, tornadoUp[pale]
				}
				h := rowH/2 - 3
				if math.IsNaN(bar.Change) || math.IsInf(bar.Change, 0) {
					fmt.Fprintf(&b, `<text class="tick none" x="%s" y="%s" data-tip="%s">no plan</text>`, coord(x0+4), coord(top+h/2+4), esc(bar.Tip))
					continue
				}
				x1 := xa.at(bar.Change)
				x, w := math.Min(x0, x1), math.Abs(x1-x0)
				if w < 2 {
					x, w = x0-1, 2 // no change: a sliver on the axis, still hoverable
				}
				fmt.Fprintf(&b, `<rect class="bar" x="%s" y="%s" width="%s" height="%s" fill="%s" data-tip="%s"/>`,
					coord(x), coord(top), coord(w), coord(h), col, esc(bar.Tip))
			}
		}
	}
	fmt.Fprintf(&b, `<line class="frame" x1="%s" y1="%s" x2="%s" y2="%s"/>`, coord(x0), coord(padT), coord(x0), coord(padT+plotH))
	fmt.Fprintf(&b, `<text class="label" x="%s" y="%s" text-anchor="middle">%s</text>`, coord((left+chartW-padR)/2), coord(padT+plotH+40), esc(t.XLabel))
	b.WriteString("</svg>")
	b.WriteString(`<ul class="legend">`)
	for si, m := range steps {
		pale := 0
		if si == len(steps)-1 && len(steps) > 1 {
			pale = 1
		}
		fmt.Fprintf(&b, `<li><span class="sw" style="--c:%s"></span>input −%g%%</li>`, tornadoDown[pale], 100*m)
		fmt.Fprintf(&b, `<li><span class="sw" style="--c:%s"></span>input +%g%%</li>`, tornadoUp[pale], 100*m)
	}
	b.WriteString("</ul>")
	return b.String()
}

// AddSensitivity adds a sensitivity analysis to an optimize report: its
// table (what --sensitivity-out writes), shown after the report's shown
// tables, and a section "What the answer hinges on" with its tornado,
// before the report's other figures.
func AddSensitivity(r *Report, nominal *search.Result, rows []search.SensitivityRow) error {
	t, err := TableOf("sensitivity", "optimize --sensitivity --sensitivity-out", func(w io.Writer) error { return report.WriteSensitivityCSV(w, nominal, rows) })
	if err != nil {
		return err
	}
	shown := min(max(r.Shown, 1), len(r.Tables))
	r.Tables, r.Shown = slices.Insert(r.Tables, shown, t), shown+1
	unit := report.ObjectiveUnit(nominal.Goal)
	recs := report.SensitivityRecs(nominal, rows)
	fig := &Tornado{ID: "tornado", Title: "What the answer hinges on: the best plan's " + unit + " when one input moves",
		XLabel: "change of the best plan's " + unit + ", % of the nominal best's",
		Note:   "Bars left of the axis: a cheaper best plan; right: a dearer one. Each row's upper bars lower the input, its lower bars raise it. Hover a bar for the plan."}
	// The rows, their order and their changes are the --plot figure's
	// (report.SensitivityFigure: the widest swing at the largest step
	// drawn last, highest); the tooltips name each move's plan.
	tips := map[string]string{}
	key := func(input string, change float64) string { return fmt.Sprintf("%s %+g", input, change) }
	for _, rc := range recs[1:] {
		tip := fmt.Sprintf("%s %+g%%: no design meets every SLO", rc.Input, 100*rc.Change)
		if rc.Found {
			tip = fmt.Sprintf("%s %+g%%: %s, %s, %s", rc.Input, 100*rc.Change, rc.Design, report.PlanText(rc.Baseline, rc.Prompt, rc.Token), objectiveText(rc.Objective, unit))
			if !math.IsNaN(rc.ObjectiveChange) {
				tip += fmt.Sprintf(" (%+.1f%% against the nominal best)", 100*rc.ObjectiveChange)
			}
		}
		tips[key(rc.Input, rc.Change)] = tip
	}
	pf := report.SensitivityFigure(nominal, rows, "")
	for i := len(pf.Inputs) - 1; i >= 0; i-- {
		in := pf.Inputs[i]
		row := TornadoRow{Name: in.Name}
		bar := func(step, change float64) {
			if tip, ok := tips[key(in.Name, step)]; ok {
				row.Bars = append(row.Bars, TornadoBar{Step: step, Change: change, Tip: tip})
			}
		}
		for j := len(in.Steps) - 1; j >= 0; j-- {
			bar(-in.Steps[j], in.Down[j])
		}
		for j, m := range in.Steps {
			bar(m, in.Up[j])
		}
		fig.Rows = append(fig.Rows, row)
	}
	note := "The whole search again with one input moved by each step and the others nominal: the inputs whose moves swing the best plan most are the ones the answer hinges on (docs/model.md)."
	if n := recs[0]; n.Found {
		note = fmt.Sprintf("Nominal best: %s, %s, %s. ", n.Design, report.PlanText(n.Baseline, n.Prompt, n.Token), objectiveText(n.Objective, unit)) + note
	}
	sec := Section{Title: "What the answer hinges on", Note: note, Figures: []Figure{fig}}
	at := 0
	if len(r.Sections) > 0 && r.Sections[0].Title == "How sure" {
		at = 1
	}
	r.Sections = slices.Insert(r.Sections, at, sec)
	return nil
}
