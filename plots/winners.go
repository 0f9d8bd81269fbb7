package plots

import (
	"fmt"
	"image/color"
	"math"
	"sort"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// WinnerCell is one cell of a winners figure: the best design of one job
// of a study.
type WinnerCell struct {
	// Row and Col index WinnersFigure.Rows and Cols.
	Row, Col int
	// Design is the winning design; "" when no design met the goal.
	Design string
	// Text is written under the design's name, e.g. "$76/h".
	Text string
}

// WinnersFigure is a study's winning design per cell: one row per
// combination of some axes (e.g. model × GPU set), one column per value of
// another (e.g. the rate); each cell is coloured by its winning design and
// names it. Cells with no job are left white.
type WinnersFigure struct {
	// Title and Subtitle head the figure.
	Title, Subtitle string
	// Rows and Cols label the categories, top row first.
	Rows, Cols []string
	// XLabel and YLabel name the axes.
	XLabel, YLabel string
	// Cells are the jobs with a result.
	Cells []WinnerCell
}

// Winners writes f to path.
func Winners(path string, f WinnersFigure) error {
	return writeFigure(path, f, winnersFigure)
}

// winnersFigure lays out f: the designs take the palette's colours in
// name order, lightened so that the names stay readable on them.
func winnersFigure(f WinnersFigure) (figure, error) {
	if len(f.Rows) == 0 || len(f.Cols) == 0 || len(f.Cells) == 0 {
		return figure{}, fmt.Errorf("%w: no study cells", ErrNoData)
	}
	var designs []string
	seen := map[string]bool{}
	taken := map[[2]int]bool{}
	for _, c := range f.Cells {
		if c.Row < 0 || c.Row >= len(f.Rows) || c.Col < 0 || c.Col >= len(f.Cols) {
			return figure{}, fmt.Errorf("winners figure: cell (%d, %d) outside the %d×%d grid", c.Row, c.Col, len(f.Rows), len(f.Cols))
		}
		if taken[[2]int{c.Row, c.Col}] {
			return figure{}, fmt.Errorf("winners figure: two cells at (%s, %s)", f.Rows[c.Row], f.Cols[c.Col])
		}
		taken[[2]int{c.Row, c.Col}] = true
		if c.Design != "" && !seen[c.Design] {
			seen[c.Design] = true
			designs = append(designs, c.Design)
		}
	}
	sort.Strings(designs)
	fill := map[string]color.Color{"": greyCell}
	leg := newLegend()
	for i, d := range designs {
		fill[d] = fade(seriesColor(i))
		leg.Add(d, swatch{Fill: fill[d], Outline: color.Gray{0x80}})
	}
	leg.Add("no design meets the goal", swatch{Fill: greyCell})
	if len(taken) < len(f.Rows)*len(f.Cols) {
		leg.Add("no job", swatch{Fill: color.White, Outline: color.Gray{0x80}})
	}
	// Rows run top to bottom: row r sits at y = n−1−r.
	n := len(f.Rows)
	rev := make([]string, n)
	for i, r := range f.Rows {
		rev[n-1-i] = r
	}
	p := newPlot("", f.XLabel, f.YLabel)
	p.X.Min, p.X.Max = -0.5, float64(len(f.Cols))-0.5
	p.Y.Min, p.Y.Max = -0.5, float64(n)-0.5
	p.X.Tick.Marker = categoryTicks(f.Cols)
	p.Y.Tick.Marker = categoryTicks(rev)
	p.Add(&winnerCells{cells: f.Cells, fill: fill, rows: n})
	w := vg.Inch * vg.Length(math.Max(7, 3+1.3*float64(len(f.Cols))))
	h := vg.Inch * vg.Length(math.Max(4, 1.6+0.5*float64(n)))
	return figure{W: w, H: h, Title: f.Title, Subtitle: f.Subtitle, Legend: leg, Body: p.Draw}, nil
}

// winnerCells draws each cell filled with its design's colour, outlined,
// with the design's name and its text.
type winnerCells struct {
	cells []WinnerCell
	fill  map[string]color.Color
	rows  int
}

// Plot implements plot.Plotter.
func (wc *winnerCells) Plot(c draw.Canvas, plt *plot.Plot) {
	tx, ty := plt.Transforms(&c)
	for _, cell := range wc.cells {
		x, y := float64(cell.Col), float64(wc.rows-1-cell.Row)
		pts := []vg.Point{
			{X: tx(x - 0.5), Y: ty(y - 0.5)}, {X: tx(x + 0.5), Y: ty(y - 0.5)},
			{X: tx(x + 0.5), Y: ty(y + 0.5)}, {X: tx(x - 0.5), Y: ty(y + 0.5)},
		}
		c.FillPolygon(wc.fill[cell.Design], pts)
		c.StrokeLines(draw.LineStyle{Color: color.White, Width: vg.Points(1.5)}, append(pts, pts[0]))
		label := cell.Design
		if label == "" {
			label = "none"
		}
		sty := textStyle(8, draw.XCenter)
		sty.YAlign = draw.YCenter
		// A long design name (Splitwise H100·tp2 / H200·tp8) wraps at its
		// spaces to the cell's width.
		lines := wrapText(sty, label, (tx(x+0.5)-tx(x-0.5))*0.85)
		if cell.Text != "" {
			lines = append(lines, cell.Text)
		}
		c.FillText(sty, vg.Point{X: tx(x), Y: ty(y)}, strings.Join(lines, "\n"))
	}
}
