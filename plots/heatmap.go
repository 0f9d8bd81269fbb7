package plots

import (
	"fmt"
	"image/color"
	"math"
	"sort"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// CellState is what became of one point of a design space.
type CellState int

// Cell states.
const (
	// Feasible: simulated, every SLO held.
	Feasible CellState = iota
	// Infeasible: simulated, some SLO failed or the run did not drain.
	Infeasible
	// Pruned: rejected by an analytic capacity bound without simulating.
	Pruned
)

// HeatCell is one point of a design space.
type HeatCell struct {
	// Prompt and Token are the machine counts (a baseline: Prompt
	// machines, Token 0).
	Prompt, Token int
	// State says whether it met the SLOs.
	State CellState
	// Value is the colour of a feasible cell (ignored otherwise).
	Value float64
}

// HeatmapFigure is the design space of one design at one rate: prompt
// machines × token machines, feasible cells coloured by Value, infeasible
// ones grey, cells never simulated left white, the feasible frontier
// outlined and the optimum starred.
type HeatmapFigure struct {
	// Title and Subtitle head the figure.
	Title, Subtitle string
	// XLabel and YLabel default to "prompt machines" and "token machines".
	XLabel, YLabel string
	// ColorLabel names Value with its unit, e.g. "cost ($/h)".
	ColorLabel string
	// Cells are the points evaluated.
	Cells []HeatCell
	// HasOptimum marks the cell (OptPrompt, OptToken) with a star.
	HasOptimum          bool
	OptPrompt, OptToken int
	// InfeasibleLabel names the grey cells in the legend ("infeasible"
	// when empty); a capacity map names what they are there: below the
	// least rate they were tried at.
	InfeasibleLabel string
	// MaxPrompt and MaxToken, when above the cells' own, extend the axes
	// (a window drawn whole, some of it not simulated).
	MaxPrompt, MaxToken int
}

// Heatmap writes f to path.
func Heatmap(path string, f HeatmapFigure) error {
	return writeFigure(path, f, heatmapFigure)
}

// heatmapFigure lays out f.
func heatmapFigure(f HeatmapFigure) (figure, error) {
	if len(f.Cells) == 0 {
		return figure{}, fmt.Errorf("%w: no points in the design space", ErrNoData)
	}
	f = cropHeatmap(f)
	vmin, vmax := math.Inf(1), math.Inf(-1)
	xmin, xmax, ymin, ymax := math.MaxInt, math.MinInt, math.MaxInt, math.MinInt
	for _, c := range f.Cells {
		xmin, xmax = min(xmin, c.Prompt), max(xmax, c.Prompt)
		ymin, ymax = min(ymin, c.Token), max(ymax, c.Token)
		if c.State == Feasible && finite(c.Value) {
			vmin, vmax = math.Min(vmin, c.Value), math.Max(vmax, c.Value)
		}
	}
	xmax, ymax = max(xmax, f.MaxPrompt), max(ymax, f.MaxToken)
	if math.IsInf(vmin, 1) {
		return figure{}, fmt.Errorf("%w: all %d points of the design space fail the SLOs", ErrNoFeasible, len(f.Cells))
	}
	if vmin == vmax {
		vmin, vmax = vmin-0.5, vmax+0.5
		if vmin < 0 && vmax > 0 && vmax <= 1 {
			vmin = 0
		}
	}
	xl, yl := f.XLabel, f.YLabel
	if xl == "" {
		xl = "prompt machines"
	}
	if yl == "" {
		yl = "token machines"
	}
	p := newPlot("", xl, yl)
	p.X.Min, p.X.Max = float64(xmin)-0.5, float64(xmax)+0.5
	p.Y.Min, p.Y.Max = float64(ymin)-0.5, float64(ymax)+0.5
	p.X.Tick.Marker = intTicks{}
	p.Y.Tick.Marker = intTicks{}
	cells := append([]HeatCell(nil), f.Cells...)
	sort.Slice(cells, func(i, j int) bool {
		if cells[i].Prompt != cells[j].Prompt {
			return cells[i].Prompt < cells[j].Prompt
		}
		return cells[i].Token < cells[j].Token
	})
	p.Add(&cellPlotter{cells: cells, vmin: vmin, vmax: vmax})
	leg := newLegend()
	inf := f.InfeasibleLabel
	if inf == "" {
		inf = "infeasible"
	}
	leg.Add(inf, swatch{Fill: greyCell})
	pruned := false
	for _, c := range cells {
		pruned = pruned || c.State == Pruned
	}
	if pruned {
		leg.Add("pruned (bound)", swatch{Fill: prunedCel})
	}
	leg.Add("not simulated", swatch{Fill: color.White, Outline: color.Gray{0x80}})
	for i, seg := range frontier(cells) {
		l, _ := plotter.NewLine(seg)
		l.Color, l.Width = black, vg.Points(2)
		p.Add(l)
		if i == 0 {
			leg.Add("feasible frontier", l)
		}
	}
	if f.HasOptimum {
		sty := draw.GlyphStyle{Color: goldStar, Radius: vg.Points(7), Shape: starGlyph{}}
		sc, _ := plotter.NewScatter(plotter.XYs{{X: float64(f.OptPrompt), Y: float64(f.OptToken)}})
		sc.GlyphStyle = sty
		p.Add(sc)
		leg.Add("optimum", glyphThumb{sty})
	}
	return figure{W: vg.Inch * 8, H: vg.Inch * 6, Title: f.Title, Subtitle: f.Subtitle, Legend: leg,
		Body: withColorBar(p, f.ColorLabel, vmin, vmax)}, nil
}

// CropSpan is the widest span of machine counts a heatmap draws whole; a
// larger space is cropped around its optimum (cropHeatmap).
const CropSpan = 40

// cropHeatmap returns f cropped, when its cells span more than CropSpan
// machine counts on an axis and it has an optimum, to the window that
// holds the optimum and the feasible frontier near it (within 4× the
// optimum's counts, and at least 8 cells beyond them), with a line in the
// subtitle saying so; otherwise f unchanged.
func cropHeatmap(f HeatmapFigure) HeatmapFigure {
	if !f.HasOptimum {
		return f
	}
	xmin, xmax, ymin, ymax := math.MaxInt, math.MinInt, math.MaxInt, math.MinInt
	for _, c := range f.Cells {
		xmin, xmax = min(xmin, c.Prompt), max(xmax, c.Prompt)
		ymin, ymax = min(ymin, c.Token), max(ymax, c.Token)
	}
	if xmax-xmin <= CropSpan && ymax-ymin <= CropSpan {
		return f
	}
	wx := max(f.OptPrompt+8, 2*f.OptPrompt)
	wy := max(f.OptToken+8, 2*f.OptToken)
	for _, seg := range frontier(f.Cells) {
		for _, pt := range seg {
			x, y := int(math.Ceil(pt.X)), int(math.Ceil(pt.Y))
			if x <= 4*max(f.OptPrompt, 1) && y <= 4*max(f.OptToken, 1) {
				wx, wy = max(wx, x+2), max(wy, y+2)
			}
		}
	}
	wx, wy = min(wx, xmax), min(wy, ymax)
	if xmax-xmin <= CropSpan {
		wx = xmax
	}
	if ymax-ymin <= CropSpan {
		wy = ymax
	}
	if wx == xmax && wy == ymax {
		return f
	}
	var kept []HeatCell
	kxmin, kxmax, kymin, kymax := math.MaxInt, math.MinInt, math.MaxInt, math.MinInt
	for _, c := range f.Cells {
		if c.Prompt <= wx && c.Token <= wy {
			kept = append(kept, c)
			kxmin, kxmax = min(kxmin, c.Prompt), max(kxmax, c.Prompt)
			kymin, kymax = min(kymin, c.Token), max(kymax, c.Token)
		}
	}
	// The window ends two cells past the last point evaluated in it (a
	// margin, not a band of cells no search reached), and spans at least
	// ten counts (cells, not bars).
	wx, wy = min(wx, max(kxmax+2, kxmin+9)), min(wy, max(kymax+2, kymin+9))
	out := f
	out.Cells = kept
	out.MaxPrompt, out.MaxToken = wx, wy
	note := fmt.Sprintf("cropped to %d–%d prompt × %d–%d token machines around the optimum (the space searched: %d–%d × %d–%d); %d evaluated points outside not drawn",
		kxmin, wx, kymin, wy, xmin, xmax, ymin, ymax, len(f.Cells)-len(kept))
	if out.Subtitle != "" {
		note = out.Subtitle + "\n" + note
	}
	out.Subtitle = note
	return out
}

// trimmedTicks are gonum's default ticks with the labels' trailing zeros
// dropped ("2500" for "2500.00"), so a colour bar's labels leave it room.
type trimmedTicks struct{}

// Ticks implements plot.Ticker.
func (trimmedTicks) Ticks(lo, hi float64) []plot.Tick {
	ts := plot.DefaultTicks{}.Ticks(lo, hi)
	for i := range ts {
		if l := ts[i].Label; strings.Contains(l, ".") && !strings.ContainsAny(l, "eE") {
			ts[i].Label = strings.TrimSuffix(strings.TrimRight(l, "0"), ".")
		}
	}
	return ts
}

// withColorBar is the body of a figure drawing p with, on its right, the
// colour scale from vmin to vmax labelled label, as tall as p's data area.
func withColorBar(p *plot.Plot, label string, vmin, vmax float64) func(c draw.Canvas) {
	bar := newPlot("", "", label)
	bar.HideX()
	bar.X.Min, bar.X.Max = 0, 1
	bar.Y.Min, bar.Y.Max = vmin, vmax
	bar.Y.Tick.Marker = trimmedTicks{}
	bar.Add(colorBar{vmin, vmax})
	return func(c draw.Canvas) {
		main, side := c, c
		// Room for the bar (at least a quarter inch), its tick labels
		// and its axis label, whatever the labels' widths.
		main.Max.X = c.Max.X - vg.Inch*1.3
		side.Min.X = main.Max.X + vg.Points(10)
		side.Max.X -= vg.Points(10)
		p.Draw(main)
		dc := p.DataCanvas(main)
		side.Min.Y, side.Max.Y = dc.Min.Y, dc.Max.Y
		bar.Draw(side)
	}
}

// frontier outlines the lower-left edge of the feasible cells: for every
// prompt count, the fewest token machines that were feasible; a staircase,
// broken where a column has no feasible cell.
func frontier(cells []HeatCell) []plotter.XYs {
	low := map[int]int{}
	var xs []int
	for _, c := range cells {
		if c.State != Feasible {
			continue
		}
		if t, ok := low[c.Prompt]; !ok {
			low[c.Prompt] = c.Token
			xs = append(xs, c.Prompt)
		} else if c.Token < t {
			low[c.Prompt] = c.Token
		}
	}
	sort.Ints(xs)
	var out []plotter.XYs
	var cur plotter.XYs
	for i, x := range xs {
		if i > 0 && xs[i-1] != x-1 {
			out, cur = append(out, cur), nil
		}
		y := float64(low[x]) - 0.5
		cur = append(cur, plotter.XY{X: float64(x) - 0.5, Y: y}, plotter.XY{X: float64(x) + 0.5, Y: y})
	}
	if len(cur) > 0 {
		out = append(out, cur)
	}
	return out
}

// cellPlotter fills one square per cell.
type cellPlotter struct {
	cells      []HeatCell
	vmin, vmax float64
}

// Plot implements plot.Plotter.
func (cp *cellPlotter) Plot(c draw.Canvas, plt *plot.Plot) {
	tx, ty := plt.Transforms(&c)
	for _, cell := range cp.cells {
		x, y := float64(cell.Prompt), float64(cell.Token)
		// A quarter point of overlap hides anti-aliasing seams.
		e := vg.Points(0.25)
		pts := []vg.Point{{X: tx(x-0.5) - e, Y: ty(y-0.5) - e}, {X: tx(x+0.5) + e, Y: ty(y-0.5) - e},
			{X: tx(x+0.5) + e, Y: ty(y+0.5) + e}, {X: tx(x-0.5) - e, Y: ty(y+0.5) + e}}
		var col color.Color
		switch cell.State {
		case Feasible:
			col = colorAt((cell.Value - cp.vmin) / (cp.vmax - cp.vmin))
		case Pruned:
			col = prunedCel
		default:
			col = greyCell
		}
		c.FillPolygon(col, c.ClipPolygonXY(pts))
	}
}

// colorBar draws the colour scale.
type colorBar struct{ vmin, vmax float64 }

// Plot implements plot.Plotter.
func (cb colorBar) Plot(c draw.Canvas, plt *plot.Plot) {
	tx, ty := plt.Transforms(&c)
	const n = 64
	for i := 0; i < n; i++ {
		lo := cb.vmin + (cb.vmax-cb.vmin)*float64(i)/n
		hi := cb.vmin + (cb.vmax-cb.vmin)*float64(i+1)/n
		e := vg.Points(0.5)
		if i == n-1 {
			e = 0
		}
		pts := []vg.Point{{X: tx(0), Y: ty(lo)}, {X: tx(1), Y: ty(lo)}, {X: tx(1), Y: ty(hi) + e}, {X: tx(0), Y: ty(hi) + e}}
		c.FillPolygon(colorAt((float64(i)+0.5)/n), pts)
	}
}

// viridis anchors, interpolated linearly.
var ramp = []color.RGBA{
	{0x44, 0x01, 0x54, 0xff}, {0x3b, 0x52, 0x8b, 0xff}, {0x21, 0x91, 0x8c, 0xff},
	{0x5e, 0xc9, 0x62, 0xff}, {0xfd, 0xe7, 0x25, 0xff},
}

// colorAt maps t in [0, 1] onto the ramp.
func colorAt(t float64) color.Color {
	if !(t > 0) {
		t = 0
	}
	if t > 1 {
		t = 1
	}
	f := t * float64(len(ramp)-1)
	i := int(f)
	if i >= len(ramp)-1 {
		return ramp[len(ramp)-1]
	}
	u := f - float64(i)
	a, b := ramp[i], ramp[i+1]
	mix := func(x, y uint8) uint8 { return uint8(math.Round(float64(x) + u*(float64(y)-float64(x)))) }
	return color.RGBA{mix(a.R, b.R), mix(a.G, b.G), mix(a.B, b.B), 0xff}
}

// intTicks puts ticks on whole numbers only, about ten of them.
type intTicks struct{}

// Ticks implements plot.Ticker.
func (intTicks) Ticks(lo, hi float64) []plot.Tick {
	span := hi - lo
	step := 1.0
	for _, s := range []float64{1, 2, 5, 10, 20, 25, 50, 100, 200, 500, 1000} {
		step = s
		if span/s <= 12 {
			break
		}
	}
	var out []plot.Tick
	for v := math.Ceil(lo/step) * step; v <= hi; v += step {
		out = append(out, plot.Tick{Value: v, Label: fmt.Sprintf("%g", v)})
	}
	return out
}
