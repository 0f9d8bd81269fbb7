package plots

import (
	"fmt"
	"image/color"
	"math"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// PairCell is one cell of a GPU-pair figure: the best design of a
// (prompt GPU, token GPU) pair.
type PairCell struct {
	// Row and Col index PairsFigure.Rows and Cols.
	Row, Col int
	// Value colours the cell (NaN: no design of the pair met the goal).
	Value float64
	// Text is written in the cell, e.g. "$370/h\ntp2/tp4".
	Text string
	// Bounded marks a pair none of whose designs was searched: the
	// analytic bound showed none can beat the best (left white).
	Bounded bool
}

// PairsFigure is the GPU-pair comparison of a search: prompt GPU (rows) ×
// token GPU (columns, the last of which may be "co-located" for the
// baselines), each cell coloured by its best design's merit, the winner
// starred.
type PairsFigure struct {
	// Title and Subtitle head the figure.
	Title, Subtitle string
	// Rows and Cols label the axes' categories.
	Rows, Cols []string
	// XLabel and YLabel name the axes.
	XLabel, YLabel string
	// ColorLabel names Value with its unit, e.g. "cost ($/h)".
	ColorLabel string
	// Cells are the pairs with a result.
	Cells []PairCell
	// HasWinner stars the cell (WinRow, WinCol).
	HasWinner      bool
	WinRow, WinCol int
}

// Pairs writes f to path.
func Pairs(path string, f PairsFigure) error {
	return writeFigure(path, f, pairsFigure)
}

// pairsFigure lays out f.
func pairsFigure(f PairsFigure) (figure, error) {
	if len(f.Rows) == 0 || len(f.Cols) == 0 || len(f.Cells) == 0 {
		return figure{}, fmt.Errorf("%w: no GPU pairs", ErrNoData)
	}
	vmin, vmax := math.Inf(1), math.Inf(-1)
	for _, c := range f.Cells {
		if c.Row < 0 || c.Row >= len(f.Rows) || c.Col < 0 || c.Col >= len(f.Cols) {
			return figure{}, fmt.Errorf("pairs figure: cell (%d, %d) outside the %d×%d grid", c.Row, c.Col, len(f.Rows), len(f.Cols))
		}
		if !c.Bounded && finite(c.Value) {
			vmin, vmax = math.Min(vmin, c.Value), math.Max(vmax, c.Value)
		}
	}
	if math.IsInf(vmin, 1) {
		return figure{}, fmt.Errorf("%w: no GPU pair meets the goal", ErrNoFeasible)
	}
	if vmin == vmax {
		vmin, vmax = vmin-0.5, vmax+0.5
	}
	p := newPlot("", f.XLabel, f.YLabel)
	p.X.Min, p.X.Max = -0.5, float64(len(f.Cols))-0.5
	p.Y.Min, p.Y.Max = -0.5, float64(len(f.Rows))-0.5
	p.X.Tick.Marker = categoryTicks(f.Cols)
	p.Y.Tick.Marker = categoryTicks(f.Rows)
	var cells []HeatCell
	for _, c := range f.Cells {
		if c.Bounded {
			continue
		}
		st := Feasible
		if !finite(c.Value) {
			st = Infeasible
		}
		cells = append(cells, HeatCell{Prompt: c.Col, Token: c.Row, State: st, Value: c.Value})
	}
	p.Add(&cellPlotter{cells: cells, vmin: vmin, vmax: vmax})
	p.Add(&cellText{cells: f.Cells, vmin: vmin, vmax: vmax})
	leg := newLegend()
	leg.Add("no design meets the goal", swatch{Fill: greyCell})
	leg.Add("bounded out (cannot win)", swatch{Fill: color.White, Outline: color.Gray{0x80}})
	if f.HasWinner {
		sty := draw.GlyphStyle{Color: goldStar, Radius: vg.Points(7), Shape: starGlyph{}}
		sc, _ := plotter.NewScatter(plotter.XYs{{X: float64(f.WinCol) + 0.38, Y: float64(f.WinRow) + 0.32}})
		sc.GlyphStyle = sty
		p.Add(sc)
		leg.Add("best", glyphThumb{sty})
	}
	w := vg.Inch * vg.Length(math.Max(8, 2.2+1.3*float64(len(f.Cols))))
	h := vg.Inch * vg.Length(math.Max(5, 1.8+0.8*float64(len(f.Rows))))
	return figure{W: w, H: h, Title: f.Title, Subtitle: f.Subtitle, Legend: leg,
		Body: withColorBar(p, f.ColorLabel, vmin, vmax)}, nil
}

// categoryTicks labels the whole numbers 0..n−1 with names.
type categoryTicks []string

// Ticks implements plot.Ticker.
func (ct categoryTicks) Ticks(lo, hi float64) []plot.Tick {
	out := make([]plot.Tick, len(ct))
	for i, n := range ct {
		out[i] = plot.Tick{Value: float64(i), Label: n}
	}
	return out
}

// cellText writes each cell's text, dark on light cells and light on dark.
type cellText struct {
	cells      []PairCell
	vmin, vmax float64
}

// Plot implements plot.Plotter.
func (ct *cellText) Plot(c draw.Canvas, plt *plot.Plot) {
	tx, ty := plt.Transforms(&c)
	for _, cell := range ct.cells {
		if cell.Text == "" {
			continue
		}
		sty := textStyle(8, draw.XCenter)
		sty.YAlign = draw.YCenter
		if !cell.Bounded && finite(cell.Value) && (cell.Value-ct.vmin)/(ct.vmax-ct.vmin) < 0.55 {
			sty.Color = color.White
		}
		c.FillText(sty, vg.Point{X: tx(float64(cell.Col)), Y: ty(float64(cell.Row))}, cell.Text)
	}
}
