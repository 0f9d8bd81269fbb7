package plots

import (
	"fmt"
	"image/color"
	"math"
	"sort"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// ParetoPoint is one feasible cluster: its throughput and its cost or power.
type ParetoPoint struct {
	// Design names the series the point belongs to.
	Design string
	// X is the throughput in req/s; Y the cost ($/h) or power (kW).
	X, Y float64
	// Label, when not empty, marks an optimum and is written beside it.
	Label string
}

// ParetoFigure is cost or power against throughput for every feasible
// point, with each design's Pareto frontier (most throughput for the
// least Y) as a line and the frontier across designs as a thick line.
type ParetoFigure struct {
	// Title and Subtitle head the figure.
	Title, Subtitle string
	// XLabel and YLabel name the axes with units.
	XLabel, YLabel string
	// Points are the feasible points; designs keep their first-seen order.
	Points []ParetoPoint
}

// MaxNamedSeries is the most designs a figure draws in a colour of their
// own and names in its legend; with more, the rest are one grey series.
const MaxNamedSeries = 12

// MaxLabels is the most optima a Pareto figure names; the others are
// starred without a name.
const MaxLabels = 10

// Pareto writes f to path.
func Pareto(path string, f ParetoFigure) error {
	return writeFigure(path, f, paretoFigure)
}

// paretoFigure lays out f.
func paretoFigure(f ParetoFigure) (figure, error) {
	var order []string
	by := map[string][]ParetoPoint{}
	var all []ParetoPoint
	for _, pt := range f.Points {
		if !finite(pt.X) || !finite(pt.Y) || pt.X <= 0 {
			continue
		}
		if _, ok := by[pt.Design]; !ok {
			order = append(order, pt.Design)
		}
		by[pt.Design] = append(by[pt.Design], pt)
		all = append(all, pt)
	}
	if len(all) == 0 {
		if len(f.Points) == 0 {
			return figure{}, fmt.Errorf("%w: no points", ErrNoData)
		}
		return figure{}, fmt.Errorf("%w: no point with a positive throughput", ErrNoFeasible)
	}
	// Many designs: the MaxNamedSeries − 1 best (least Y per unit of
	// throughput at their best point) keep a colour, a frontier and a
	// legend entry; the rest are one grey series. Labels go to the
	// MaxLabels best named designs' optima.
	folded := 0
	if len(order) > MaxNamedSeries {
		rank := map[string]float64{}
		for _, d := range order {
			r := math.Inf(1)
			for _, pt := range by[d] {
				r = math.Min(r, pt.Y/pt.X)
			}
			rank[d] = r
		}
		ranked := append([]string(nil), order...)
		sort.SliceStable(ranked, func(i, j int) bool { return rank[ranked[i]] < rank[ranked[j]] })
		keep := map[string]bool{}
		for _, d := range ranked[:MaxNamedSeries-1] {
			keep[d] = true
		}
		var kept []string
		other := "other designs"
		for _, d := range order {
			if keep[d] {
				kept = append(kept, d)
				continue
			}
			folded++
			for _, pt := range by[d] {
				pt.Design, pt.Label = other, ""
				by[other] = append(by[other], pt)
			}
		}
		order = append(kept, other)
	}
	labelled := 0
	for _, d := range order {
		for i := range by[d] {
			if by[d][i].Label == "" {
				continue
			}
			if labelled >= MaxLabels {
				by[d][i].Label = "\x00" // an optimum: starred, not named
				continue
			}
			labelled++
		}
	}
	xl, yl := f.XLabel, f.YLabel
	if xl == "" {
		xl = "throughput within SLO (req/s)"
	}
	if yl == "" {
		yl = "cost ($/h)"
	}
	p := newPlot("", xl, yl)
	p.Add(plotter.NewGrid())
	leg := newLegend()
	var labels plotter.XYLabels
	var stars plotter.XYs
	var overall *plotter.Line
	if len(order) > 1 {
		fr := paretoFront(all)
		l, _ := plotter.NewLine(fr)
		l.Color, l.Width = black, vg.Points(3.5)
		l.Color = colorAlpha(black, 0x60)
		p.Add(l)
		overall = l
	}
	for i, d := range order {
		pts := by[d]
		col := seriesColor(i)
		if folded > 0 && i == len(order)-1 {
			xy := make(plotter.XYs, len(pts))
			for k, pt := range pts {
				xy[k] = plotter.XY{X: pt.X, Y: pt.Y}
			}
			sc, _ := plotter.NewScatter(xy)
			sc.GlyphStyle = draw.GlyphStyle{Color: color.Gray{0xb0}, Radius: vg.Points(1.8), Shape: draw.CircleGlyph{}}
			p.Add(sc)
			leg.Add(fmt.Sprintf("+%d more designs, see CSV", folded), glyphThumb{sc.GlyphStyle})
			continue
		}
		xy := make(plotter.XYs, len(pts))
		for k, pt := range pts {
			xy[k] = plotter.XY{X: pt.X, Y: pt.Y}
			if pt.Label != "" {
				stars = append(stars, plotter.XY{X: pt.X, Y: pt.Y})
			}
			if pt.Label != "" && pt.Label != "\x00" {
				labels.XYs = append(labels.XYs, plotter.XY{X: pt.X, Y: pt.Y})
				labels.Labels = append(labels.Labels, pt.Label)
			}
		}
		sc, _ := plotter.NewScatter(xy)
		sc.GlyphStyle = draw.GlyphStyle{Color: fade(col), Radius: vg.Points(2), Shape: draw.CircleGlyph{}}
		fr := paretoFront(pts)
		l, _ := plotter.NewLine(fr)
		l.Color, l.Width = col, vg.Points(1.5)
		fs, _ := plotter.NewScatter(fr)
		fs.GlyphStyle = draw.GlyphStyle{Color: col, Radius: vg.Points(2.5), Shape: draw.CircleGlyph{}}
		p.Add(sc, l, fs)
		leg.Add(d, l, fs)
	}
	if overall != nil {
		leg.Add("frontier, all designs", overall)
	}
	if len(stars) > 0 {
		sc, _ := plotter.NewScatter(stars)
		sc.GlyphStyle = draw.GlyphStyle{Color: goldStar, Radius: vg.Points(6), Shape: starGlyph{}}
		p.Add(sc)
		// One label per optimum, nudged (placeLabels) so that labels of
		// optima close together do not overprint.
		idx := make([]int, len(labels.XYs))
		for i := range idx {
			idx[i] = i
		}
		sort.SliceStable(idx, func(a, b int) bool { return labels.XYs[idx[a]].X < labels.XYs[idx[b]].X })
		nl := &nudgedLabels{style: textStyle(8, draw.XLeft)}
		nl.style.YAlign = draw.YBottom
		for _, i := range idx {
			nl.xys = append(nl.xys, labels.XYs[i])
			nl.labels = append(nl.labels, labels.Labels[i])
		}
		p.Add(nl)
		leg.Add("optimum", glyphThumb{sc.GlyphStyle})
	}
	pad(&p.X.Min, &p.X.Max, all, func(pt ParetoPoint) float64 { return pt.X }, 0.12)
	pad(&p.Y.Min, &p.Y.Max, all, func(pt ParetoPoint) float64 { return pt.Y }, 0.05)
	w := vg.Inch * 8
	if len(order) > 6 {
		w = vg.Inch * 10 // the legend's long names leave the data area its width
	}
	return figure{W: w, H: vg.Inch * 5.5, Title: f.Title, Subtitle: f.Subtitle, Legend: leg, Body: p.Draw}, nil
}

// pad sets an axis range around the values with a margin (a fraction of
// the span), from zero when the values are all positive and near it.
func pad(lo, hi *float64, pts []ParetoPoint, v func(ParetoPoint) float64, margin float64) {
	mn, mx := math.Inf(1), math.Inf(-1)
	for _, pt := range pts {
		mn, mx = math.Min(mn, v(pt)), math.Max(mx, v(pt))
	}
	span := mx - mn
	if span == 0 {
		span = math.Max(math.Abs(mx), 1)
	}
	*lo, *hi = mn-span*0.05, mx+span*margin
	if mn >= 0 && mn < 0.6*mx {
		*lo = 0 // from zero: ratios between points read true
	}
	// Values in a narrow band (every optimum of a power-budget search
	// sits at the budget) are drawn zoomed to the band, so they do not
	// collapse onto one line at the top of an axis from zero.
}

// paretoFront returns the points no other point beats on both counts
// (more throughput, less Y), by ascending throughput.
func paretoFront(pts []ParetoPoint) plotter.XYs {
	s := append([]ParetoPoint(nil), pts...)
	sort.Slice(s, func(i, j int) bool {
		if s[i].X != s[j].X {
			return s[i].X > s[j].X
		}
		return s[i].Y < s[j].Y
	})
	var out plotter.XYs
	best := math.Inf(1)
	for _, pt := range s {
		if pt.Y < best {
			out = append(out, plotter.XY{X: pt.X, Y: pt.Y})
			best = pt.Y
		}
	}
	for i, j := 0, len(out)-1; i < j; i, j = i+1, j-1 {
		out[i], out[j] = out[j], out[i]
	}
	return out
}

// nudgedLabels draws labels beside their points, each moved, when it
// would overprint another, to the first free place (placeLabels).
type nudgedLabels struct {
	xys    plotter.XYs
	labels []string
	style  text.Style
}

// Plot implements plot.Plotter.
func (l *nudgedLabels) Plot(c draw.Canvas, p *plot.Plot) {
	trX, trY := p.Transforms(&c)
	anchors, sizes := make([]vg.Point, len(l.labels)), make([]vg.Point, len(l.labels))
	for i, s := range l.labels {
		anchors[i] = vg.Point{X: trX(l.xys[i].X), Y: trY(l.xys[i].Y)}
		r := l.style.Rectangle(s)
		sizes[i] = vg.Point{X: r.Max.X - r.Min.X, Y: r.Max.Y - r.Min.Y}
	}
	bounds := labelBox{Min: c.Min, Max: c.Max}
	offs, ok := placeLabelsIn(anchors, sizes, vg.Points(5), &bounds)
	for i, s := range l.labels {
		if !ok[i] || !c.Contains(anchors[i]) {
			continue
		}
		// On a light box: a label often sits over frontiers and points.
		bg := anchors[i].Add(offs[i])
		c.SetColor(colorAlpha(color.White, 0xc8))
		c.Fill(vg.Rectangle{Min: bg.Sub(vg.Point{X: 1, Y: 0.5}), Max: bg.Add(sizes[i]).Add(vg.Point{X: 1, Y: 0.5})}.Path())
		c.FillText(l.style, anchors[i].Add(offs[i]), s)
		// A label moved away from its optimum is tied to it by a thin
		// leader line, from the star's edge to the label's nearest point.
		a := anchors[i]
		lo := a.Add(offs[i])
		hi := lo.Add(sizes[i])
		near := vg.Point{X: min(max(a.X, lo.X), hi.X), Y: min(max(a.Y, lo.Y), hi.Y)}
		d := near.Sub(a)
		dist := vg.Length(math.Hypot(float64(d.X), float64(d.Y)))
		if dist > vg.Points(10) {
			from := a.Add(d.Scale(vg.Points(6) / dist))
			c.StrokeLine2(draw.LineStyle{Color: color.Gray{0x50}, Width: vg.Points(0.7)}, from.X, from.Y, near.X, near.Y)
		}
	}
}

// GlyphBoxes implements plot.GlyphBoxer: room for each label at its usual
// place, right of its point, so the axes leave space for it.
func (l *nudgedLabels) GlyphBoxes(p *plot.Plot) []plot.GlyphBox {
	bs := make([]plot.GlyphBox, len(l.labels))
	for i, s := range l.labels {
		bs[i] = plot.GlyphBox{X: p.X.Norm(l.xys[i].X), Y: p.Y.Norm(l.xys[i].Y),
			Rectangle: l.style.Rectangle(s).Add(vg.Point{X: vg.Points(7), Y: vg.Points(4)})}
	}
	return bs
}
