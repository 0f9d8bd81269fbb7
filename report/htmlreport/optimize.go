package htmlreport

import (
	"bytes"
	"fmt"
	"io"
	"math"
	"regexp"
	"strings"

	"splitplan/plots"
	"splitplan/report"
	"splitplan/search"
	"splitplan/slo"
)

// Meta is what a report says about the run that made it.
type Meta struct {
	// Command is the command line that reproduces the run.
	Command string
	// Version is the build's version.
	Version string
}

// elapsedText is the timing part of a "search" line, left out of the
// report so that the same run gives the same bytes.
var elapsedText = regexp.MustCompile(`, [0-9.]+[a-zµ]*s on [0-9]+ workers`)

// textFields reads the labelled lines ("goal      ...") of a command's
// printed report: label, then at least two spaces, then the text. The
// "best" line is returned apart as the answer.
func textFields(text string) (fields []Field, answer string) {
	for _, line := range strings.Split(text, "\n") {
		if len(line) < 11 || line[0] < 'a' || line[0] > 'z' {
			continue
		}
		label, rest, ok := strings.Cut(line, "  ")
		if !ok || strings.ContainsAny(label, " \t") {
			continue
		}
		rest = strings.TrimSpace(rest)
		if rest == "" {
			continue
		}
		switch label {
		case "best":
			answer = "Best: " + rest
			continue
		case "search":
			rest = elapsedText.ReplaceAllString(rest, "")
		}
		fields = append(fields, Field{Label: label, Text: rest})
	}
	return fields, answer
}

// sloField lists the SLO targets with their limits.
func sloField(spec slo.Spec, ref string) Field {
	var parts []string
	for _, t := range spec.Targets {
		switch {
		case t.Metric == slo.GoodputMiss:
			parts = append(parts, t.Name())
		case t.AbsoluteS > 0:
			parts = append(parts, fmt.Sprintf("%s ≤ %gs", t.Name(), t.AbsoluteS))
		default:
			parts = append(parts, fmt.Sprintf("%s ≤ %g×", t.Name(), t.Factor))
		}
	}
	text := strings.Join(parts, ", ")
	if ref != "" {
		text += " (slowdowns against " + ref + ")"
	}
	return Field{Label: "SLOs", Text: text}
}

// figureDetail is a point's SLO figures, one a line: its latency
// percentiles against their limits.
func figureDetail(label string, v *slo.Verdict) string {
	if v == nil || len(v.Figures) == 0 {
		return label + ": no latency figures (pruned by a bound, not simulated)"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s — latency percentiles (measured / limit):", label)
	for _, f := range v.Figures {
		mark := "ok"
		if !f.OK() {
			mark = "FAILS"
		}
		fmt.Fprintf(&b, "\n%s %s %s", f.Name(), report.FigureText(f), mark)
	}
	if !v.Drained {
		fmt.Fprintf(&b, "\ndid not drain: %s", v.DrainNote)
	}
	return b.String()
}

// pointTip is a point's tooltip: counts, cost, power, rate and binding SLO.
func pointTip(p *search.Point) string {
	b := "—"
	if p.Verdict != nil && len(p.Verdict.Figures) > 0 {
		f := p.Verdict.BindingFigure()
		b = fmt.Sprintf("%s %s (slack %.1f%%)", f.Name(), report.FigureText(f), f.Slack*100)
		if !p.Verdict.Drained {
			b = "drain: " + p.Verdict.DrainNote
		}
	} else if p.Pruned {
		b = "pruned by the capacity bound"
	}
	counts := fmt.Sprintf("%d prompt + %d token machines", p.Prompt, p.Token)
	if p.Token == 0 {
		counts = fmt.Sprintf("%d machines", p.Prompt)
	}
	return fmt.Sprintf("%s\n%s\n$%.1f/h, %.1f kW, %s req/s\nbinding SLO: %s", p.Design, counts, p.CostUSDPerH, p.PowerKW, num(p.RateRPS), b)
}

// Optimize builds the report of an optimize run: printed is the command's
// printed report (report.PrintOptima's text), whose labelled lines are the
// question; the tables are the optima CSV (--out) and, when res kept its
// points, the points CSV (--points).
func Optimize(res *search.Result, p *search.Problem, m Meta) (*Report, error) {
	var text bytes.Buffer
	report.PrintOptima(&text, res, p, 0)
	fields, answer := textFields(text.String())
	if answer == "" {
		answer = "No design meets the goal within the bounds."
	}
	var designs []string
	for _, d := range res.Designs {
		designs = append(designs, d.Design)
	}
	q := []Field{{Label: "command", Text: "optimize, goal " + fmt.Sprint(res.Goal)}}
	q = append(q, fields[:min(1, len(fields))]...)
	q = append(q, sloField(p.SLO, ""), Field{Label: "designs", Text: strings.Join(designs, ", ")})
	if len(fields) > 1 {
		q = append(q, fields[1:]...)
	}
	r := &Report{
		Title:      "splitplan optimize: " + report.GoalTitle(res),
		Question:   q,
		Answer:     answer,
		MarkColumn: "bounded_by",
		MarkLabel:  "designs whose optimum sits at a search bound (max-machines) or that an analytic bound left out",
		Command:    m.Command,
		Version:    m.Version,
	}
	t, err := TableOf("optima", "optimize --out", func(w io.Writer) error { return report.WriteOptimaCSV(w, res, p.SLO) })
	if err != nil {
		return nil, err
	}
	r.Tables = append(r.Tables, t)
	if len(res.Points) > 0 {
		t, err := TableOf("points", "optimize --points", func(w io.Writer) error { return report.WritePointsCSV(w, res, p.SLO) })
		if err != nil {
			return nil, err
		}
		r.Tables = append(r.Tables, t)
	}
	r.Sections = append(r.Sections, Section{
		Title:   "Trade-offs",
		Note:    "Hover a point for its machine counts, cost, power and binding SLO; click it for its latency percentiles. Big dots: each design's optimum; black line: the Pareto frontier of the points that meet the SLOs.",
		Figures: []Figure{paretoChart(res)},
	})
	if f := percentileCharts(res, p.SLO); len(f) > 0 {
		r.Sections = append(r.Sections, Section{Title: "Latency percentiles of each design's optimum",
			Note:    "Each line is one design's optimum: the latency figure at P50, P90 and P99 (a coarse CDF read sideways); dashed: the SLO limit.",
			Figures: f})
	}
	if hs := heatmaps(res, p); len(hs) > 0 {
		r.Sections = append(r.Sections, Section{Title: "Design spaces", Note: "One cell per machine-count pair the search looked at; hover a cell. Feasible cells are coloured by the goal's value.", Figures: hs})
	}
	return r, nil
}

// paretoChart is every simulated point that met the SLOs, by design, with
// each design's optimum and the Pareto frontier: cost against power for a
// goal at a rate, the goal's resource against the rate sustained for a
// throughput goal.
func paretoChart(res *search.Result) *Chart {
	throughput := res.Goal.NeedsBudget()
	byPower := res.Goal.ByPower(res)
	xy := func(p *search.Point) (float64, float64) {
		switch {
		case throughput && byPower:
			return p.PowerKW, p.RateRPS
		case throughput:
			return p.CostUSDPerH, p.RateRPS
		}
		return p.CostUSDPerH, p.PowerKW
	}
	c := &Chart{ID: "pareto", Title: "Pareto frontier: cost and power of every cluster that meets the SLOs", XLabel: "cost ($/h)", YLabel: "power (kW)"}
	if throughput {
		c.Title, c.YLabel = "Pareto frontier: rate sustained for what it costs", "rate sustained (req/s)"
		if byPower {
			c.XLabel = "power (kW)"
		}
	}
	idx := map[string]int{}
	var all []*search.Point
	for i := range res.Designs {
		idx[res.Designs[i].Design] = i
		c.Series = append(c.Series, Series{Name: res.Designs[i].Design, Markers: true})
	}
	add := func(p *search.Point) {
		i, ok := idx[p.Design]
		if !ok {
			return
		}
		x, y := xy(p)
		c.Series[i].Points = append(c.Series[i].Points, Pt{X: x, Y: y, Tip: pointTip(p), Detail: figureDetail(p.Label(), p.Verdict)})
		all = append(all, p)
	}
	if len(res.Points) > 0 {
		for i := range res.Points {
			if res.Points[i].Feasible {
				add(&res.Points[i])
			}
		}
	} else {
		for i := range res.Designs {
			if res.Designs[i].Found {
				add(&res.Designs[i].Best)
			}
		}
	}
	opt := Series{Name: "optimum of each design", Markers: true, Big: true, Colour: "#000000"}
	for i := range res.Designs {
		d := &res.Designs[i]
		if d.Found {
			x, y := xy(&d.Best)
			opt.Points = append(opt.Points, Pt{X: x, Y: y, Tip: "optimum: " + pointTip(&d.Best), Detail: figureDetail(d.Best.Label(), d.Best.Verdict)})
		}
	}
	front := Series{Name: "Pareto frontier", Line: true, Colour: "#000000"}
	for _, p := range frontier(all, xy, throughput) {
		x, y := xy(p)
		front.Points = append(front.Points, Pt{X: x, Y: y})
	}
	c.Series = append([]Series{}, c.Series...)
	c.Series = append(c.Series, front, opt)
	return c
}

// frontier is the points no other point beats on both axes: less x and
// less y, or (maxY) less x and more y; sorted by x.
func frontier(pts []*search.Point, xy func(*search.Point) (float64, float64), maxY bool) []*search.Point {
	var out []*search.Point
	for _, p := range pts {
		px, py := xy(p)
		dominated := false
		for _, q := range pts {
			qx, qy := xy(q)
			better := qy < py
			if maxY {
				better = qy > py
			}
			if qx <= px && (qy == py || better) && (qx < px || better) {
				dominated = true
				break
			}
		}
		if !dominated {
			out = append(out, p)
		}
	}
	// Sort by x, then y, keeping one point per position.
	for i := 1; i < len(out); i++ {
		for j := i; j > 0; j-- {
			ax, ay := xy(out[j-1])
			bx, by := xy(out[j])
			if bx < ax || (bx == ax && by < ay) {
				out[j-1], out[j] = out[j], out[j-1]
			}
		}
	}
	var uniq []*search.Point
	for _, p := range out {
		if n := len(uniq); n > 0 {
			ax, ay := xy(uniq[n-1])
			bx, by := xy(p)
			if ax == bx && ay == by {
				continue
			}
		}
		uniq = append(uniq, p)
	}
	return uniq
}

// percentileCharts draws, per latency metric of the SLOs, each found
// optimum's figure at each percentile, with the limits dashed.
func percentileCharts(res *search.Result, spec slo.Spec) []Figure {
	var metrics []slo.Metric
	seen := map[slo.Metric]bool{}
	for _, t := range spec.Targets {
		if t.Metric != slo.GoodputMiss && !seen[t.Metric] {
			seen[t.Metric] = true
			metrics = append(metrics, t.Metric)
		}
	}
	var out []Figure
	for _, m := range metrics {
		unit := "slowdown (×)"
		c := &Chart{ID: "pct-" + m.String(), Title: strings.ToUpper(m.String()) + " percentiles of each optimum", XLabel: "percentile (%)", YMin0: true}
		for i := range res.Designs {
			d := &res.Designs[i]
			if !d.Found || d.Best.Verdict == nil {
				continue
			}
			s := Series{Name: d.Design, Line: true, Markers: true}
			for _, f := range d.Best.Verdict.Figures {
				if f.Metric != m {
					continue
				}
				if f.AbsoluteS > 0 {
					unit = "seconds (s)"
				}
				s.Points = append(s.Points, Pt{X: f.Percentile, Y: f.Measured, Tip: fmt.Sprintf("%s: %s %s", d.Design, f.Name(), report.FigureText(f))})
			}
			if len(s.Points) > 0 {
				s.Colour = seriesColour(i)
				c.Series = append(c.Series, s)
			}
		}
		if len(c.Series) == 0 {
			continue
		}
		lim := Series{Name: "SLO limit", Line: true, Markers: true, Dashed: true, Colour: "#000000"}
		for _, t := range spec.Targets {
			if t.Metric == m {
				l := t.Factor
				if t.AbsoluteS > 0 {
					l = t.AbsoluteS
				}
				lim.Points = append(lim.Points, Pt{X: t.Percentile, Y: l, Tip: fmt.Sprintf("limit of %s: %g", t.Name(), l)})
			}
		}
		c.YLabel = strings.ToUpper(m.String()) + " " + unit
		c.Series = append(c.Series, lim)
		out = append(out, c)
	}
	return out
}

// heatmaps draws the design space of every Splitwise design that found an
// optimum (of the best design only in a GPU-pair space), as the --plot
// heatmaps do, each cell with its point's tooltip.
func heatmaps(res *search.Result, p *search.Problem) []Figure {
	if len(res.Points) == 0 {
		return nil
	}
	points := report.PointsOf(res)
	optima := report.OptimaOf(res)
	byKey := map[[3]string]*search.Point{}
	for i := range res.Points {
		pt := &res.Points[i]
		byKey[[3]string{pt.Design, fmt.Sprint(pt.Prompt), fmt.Sprint(pt.Token)}] = pt
	}
	var out []Figure
	for i, d := range res.Designs {
		if d.Baseline || !d.Found || (p.PruneDesigns && i != res.Winner) {
			continue
		}
		in := report.HeatmapInput{Points: points, Design: d.Design, RPS: math.NaN(), Optimum: &optima[i], GridPoints: d.GridPoints, Source: "", Exhaustive: p.Exhaustive}
		if !res.Goal.NeedsBudget() {
			in.RPS = res.RateRPS
		}
		f, err := report.HeatmapFigure(in)
		if err != nil {
			continue // no points of it
		}
		h := &Heatmap{ID: "heat-" + d.Design, Title: f.Title, XLabel: "prompt machines", YLabel: "token machines", ValueLabel: f.ColorLabel}
		for _, cell := range f.Cells {
			c := Cell{X: cell.Prompt, Y: cell.Token, Value: math.NaN(), State: "fail"}
			switch cell.State {
			case plots.Feasible:
				c.Value, c.State = cell.Value, "ok"
			case plots.Pruned:
				c.State = "pruned"
			}
			c.Tip = fmt.Sprintf("%s %dP/%dT", d.Design, cell.Prompt, cell.Token)
			if pt := byKey[[3]string{d.Design, fmt.Sprint(cell.Prompt), fmt.Sprint(cell.Token)}]; pt != nil {
				c.Tip = pointTip(pt)
				if !pt.Feasible {
					c.Tip += "\nfails the SLOs"
				}
			}
			c.Star = f.HasOptimum && cell.Prompt == f.OptPrompt && cell.Token == f.OptToken
			h.Cells = append(h.Cells, c)
		}
		out = append(out, h)
	}
	return out
}
