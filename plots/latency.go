package plots

import (
	"fmt"
	"math"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// LatencyFigure is latency against load: one panel per metric and
// percentile, one line per cluster, the SLO limit of each panel dashed.
type LatencyFigure struct {
	// Title and Subtitle head the figure.
	Title, Subtitle string
	// XLabel labels the load axis (default "offered load (req/s)").
	XLabel string
	// Panels are drawn three to a row, in order.
	Panels []LatencyPanel
	// Series holds one line per cluster.
	Series []LatencySeries
}

// LatencyPanel is one metric and percentile, e.g. P99 TTFT.
type LatencyPanel struct {
	// Name titles the panel, e.g. "P99 TTFT".
	Name string
	// YLabel labels its y axis with the unit, e.g. "slowdown (×)".
	YLabel string
	// Limit is the SLO limit drawn dashed (0 for none).
	Limit float64
}

// LatencySeries is one cluster's figures at each load.
type LatencySeries struct {
	// Name is the legend entry, e.g. "Splitwise-HH 35P/5T".
	Name string
	// X holds the loads in req/s.
	X []float64
	// Y holds, per panel, the figure at each load; NaN (an unsustainable
	// run) leaves a gap.
	Y [][]float64
}

// yCap is how far above its SLO limit a panel's y axis reaches: beyond it
// a line leaves the panel, so the limit stays readable.
const yCap = 4

// Latency writes f to path.
func Latency(path string, f LatencyFigure) error {
	return writeFigure(path, f, latencyFigure)
}

// latencyFigure lays out f.
func latencyFigure(f LatencyFigure) (figure, error) {
	if len(f.Panels) == 0 || len(f.Series) == 0 {
		return figure{}, fmt.Errorf("%w: no panels or no clusters", ErrNoData)
	}
	points := 0
	for _, s := range f.Series {
		if len(s.Y) != len(f.Panels) {
			return figure{}, fmt.Errorf("plots: series %q has %d panels of data, the figure %d", s.Name, len(s.Y), len(f.Panels))
		}
		for _, ys := range s.Y {
			if len(ys) != len(s.X) {
				return figure{}, fmt.Errorf("plots: series %q has %d loads but %d figures", s.Name, len(s.X), len(ys))
			}
			for i, y := range ys {
				if finite(y) && finite(s.X[i]) {
					points++
				}
			}
		}
	}
	if points == 0 {
		return figure{}, fmt.Errorf("%w: every run was unsustainable, no latency to draw", ErrNoData)
	}
	xlabel := f.XLabel
	if xlabel == "" {
		xlabel = "offered load (req/s)"
	}
	cols := 3
	if len(f.Panels) < cols {
		cols = len(f.Panels)
	}
	rows := (len(f.Panels) + cols - 1) / cols
	grid := make([][]*plot.Plot, rows)
	for r := range grid {
		grid[r] = make([]*plot.Plot, cols)
	}
	leg := newLegend()
	cut := false
	for pi, panel := range f.Panels {
		p := newPlot(panel.Name, xlabel, panel.YLabel)
		p.Y.Min = 0
		ymax, xmin, xmax := 0.0, math.Inf(1), math.Inf(-1)
		for si, s := range f.Series {
			col := seriesColor(si)
			for _, seg := range segments(s.X, s.Y[pi]) {
				l, err := plotter.NewLine(seg)
				if err != nil {
					return figure{}, fmt.Errorf("plots: %s: %w", s.Name, err)
				}
				l.Color, l.Width = col, vg.Points(1.5)
				sc, _ := plotter.NewScatter(seg)
				sc.GlyphStyle = draw.GlyphStyle{Color: col, Radius: vg.Points(2), Shape: draw.CircleGlyph{}}
				p.Add(l, sc)
				for _, pt := range seg {
					ymax = math.Max(ymax, pt.Y)
					xmin, xmax = math.Min(xmin, pt.X), math.Max(xmax, pt.X)
				}
			}
			if pi == 0 {
				l, _ := plotter.NewLine(plotter.XYs{{}})
				l.Color, l.Width = col, vg.Points(1.5)
				leg.Add(s.Name, l)
			}
		}
		if math.IsInf(xmin, 1) {
			xmin, xmax = 0, 1
		}
		if xmin == xmax {
			xmin, xmax = xmin-1, xmax+1
		}
		p.X.Min, p.X.Max = xmin, xmax
		top := ymax * 1.05
		if panel.Limit > 0 {
			if top < panel.Limit*1.15 {
				top = panel.Limit * 1.15
			}
			if top > panel.Limit*yCap {
				top, cut = panel.Limit*yCap, true
			}
			lim, _ := plotter.NewLine(plotter.XYs{{X: xmin, Y: panel.Limit}, {X: xmax, Y: panel.Limit}})
			lim.Color, lim.Width = sloColor, vg.Points(1.2)
			lim.Dashes = []vg.Length{vg.Points(5), vg.Points(3)}
			p.Add(lim)
			if pi == 0 {
				leg.Add("SLO limit", lim)
			}
		}
		if top <= 0 {
			top = 1
		}
		p.Y.Max = top
		p.Add(plotter.NewGrid())
		grid[pi/cols][pi%cols] = p
	}
	sub := f.Subtitle
	if cut {
		if sub != "" {
			sub += "\n"
		}
		sub += fmt.Sprintf("y axes end at %g× the SLO limit; lines leaving the top are past it", float64(yCap))
	}
	w := vg.Length(cols)*vg.Inch*3.4 + vg.Inch*1.6
	h := vg.Length(rows)*vg.Inch*2.5 + vg.Inch*0.9
	return figure{W: w, H: h, Title: f.Title, Subtitle: sub, Legend: leg, Body: func(c draw.Canvas) {
		tiles := draw.Tiles{Rows: rows, Cols: cols, PadX: vg.Points(12), PadY: vg.Points(12)}
		canvases := plot.Align(grid, tiles, c)
		for r := range grid {
			for cc, p := range grid[r] {
				if p != nil {
					p.Draw(canvases[r][cc])
				}
			}
		}
	}}, nil
}

// segments splits a series at its missing values.
func segments(x, y []float64) []plotter.XYs {
	var out []plotter.XYs
	var cur plotter.XYs
	for i := range x {
		if !finite(x[i]) || !finite(y[i]) {
			if len(cur) > 0 {
				out = append(out, cur)
			}
			cur = nil
			continue
		}
		cur = append(cur, plotter.XY{X: x[i], Y: y[i]})
	}
	if len(cur) > 0 {
		out = append(out, cur)
	}
	return out
}
