package plots

import (
	"fmt"
	"math"
	"strings"

	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// BarsFigure is one value per design, e.g. the cost of each design's
// optimum.
type BarsFigure struct {
	// Title and Subtitle head the figure; YLabel names the value and unit.
	Title, Subtitle, YLabel string
	// Names are the bars; Values their heights (NaN: no bar); Labels
	// are written above the bars (may be empty).
	Names  []string
	Values []float64
	Labels []string
}

// Bars writes f to path.
func Bars(path string, f BarsFigure) error {
	return writeFigure(path, f, barsFigure)
}

// barsFigure lays out f.
func barsFigure(f BarsFigure) (figure, error) {
	if len(f.Names) == 0 || len(f.Values) != len(f.Names) {
		return figure{}, fmt.Errorf("%w: %d names and %d values", ErrNoData, len(f.Names), len(f.Values))
	}
	vals := make(plotter.Values, len(f.Values))
	var lab plotter.XYLabels
	top := 0.0
	for i, v := range f.Values {
		if finite(v) && v > 0 {
			vals[i] = v
			top = math.Max(top, v)
			text := fmt.Sprintf("%.4g", v)
			if i < len(f.Labels) && f.Labels[i] != "" {
				text += "\n" + f.Labels[i]
			}
			lab.XYs = append(lab.XYs, plotter.XY{X: float64(i), Y: v})
			lab.Labels = append(lab.Labels, text)
		}
	}
	if top == 0 {
		return figure{}, fmt.Errorf("%w: no value to draw", ErrNoFeasible)
	}
	p := newPlot("", "", f.YLabel)
	names := make([]string, len(f.Names))
	for i, n := range f.Names {
		names[i] = strings.TrimPrefix(n, "Splitwise-")
	}
	p.NominalX(names...)
	p.Add(plotter.NewGrid())
	width := vg.Points(28)
	many := len(names) > 8
	if many {
		// Slanted names that do not run into each other, bars that fit
		// their slots, and no value labels over them (the CSV has them).
		p.X.Tick.Label.Rotation = math.Pi / 5
		p.X.Tick.Label.XAlign = draw.XRight
		p.X.Tick.Label.YAlign = draw.YCenter
		p.X.Tick.Label.Font.Size = vg.Points(8)
		width = min(width, vg.Points(0.7*420/float64(len(names))))
	}
	b, err := plotter.NewBarChart(vals, width)
	if err != nil {
		return figure{}, fmt.Errorf("plots: %w", err)
	}
	b.Color = seriesColor(0)
	b.LineStyle.Width = 0
	p.Add(b)
	h := vg.Inch * 4.5
	if many {
		h = vg.Inch * 5.5 // room for the slanted names
	} else {
		lb, err := plotter.NewLabels(lab)
		if err != nil {
			return figure{}, fmt.Errorf("plots: %w", err)
		}
		for i := range lb.TextStyle {
			lb.TextStyle[i].Font.Size = vg.Points(8)
			lb.TextStyle[i].XAlign = draw.XCenter
		}
		lb.Offset = vg.Point{Y: vg.Points(3)}
		p.Add(lb)
	}
	p.Y.Min, p.Y.Max = 0, top*1.2
	p.X.Min, p.X.Max = -0.5, float64(len(names))-0.5
	return figure{W: vg.Inch * 7, H: h, Title: f.Title, Subtitle: f.Subtitle, Body: p.Draw}, nil
}
