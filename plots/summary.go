package plots

import (
	"fmt"
	"math"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// SummaryPanel is one search's designs, each metric normalized to the
// baseline design (the baseline's bars are 1).
type SummaryPanel struct {
	// Title names the search, e.g. "iso-power (455 kW)".
	Title string
	// Designs are the groups, in order.
	Designs []string
	// Values holds, per metric of the figure, one value per design;
	// NaN marks a design with no optimum (no bar).
	Values [][]float64
}

// SummaryFigure is grouped bars: per design, one bar per metric
// (throughput, cost, power, machines…) normalized to a baseline, one panel
// per search.
type SummaryFigure struct {
	// Title and Subtitle head the figure.
	Title, Subtitle string
	// Baseline names the design every value is divided by.
	Baseline string
	// Metrics name the bars of a group, with what they measure.
	Metrics []string
	// Panels are stacked top to bottom.
	Panels []SummaryPanel
}

// Summary writes f to path.
func Summary(path string, f SummaryFigure) error {
	return writeFigure(path, f, summaryFigure)
}

// summaryFigure lays out f.
func summaryFigure(f SummaryFigure) (figure, error) {
	if len(f.Panels) == 0 || len(f.Metrics) == 0 {
		return figure{}, fmt.Errorf("%w: no searches or no metrics", ErrNoData)
	}
	leg := newLegend()
	var plots [][]*plot.Plot
	any := false
	for pi, pan := range f.Panels {
		if len(pan.Values) != len(f.Metrics) {
			return figure{}, fmt.Errorf("plots: panel %q has %d metrics, the figure %d", pan.Title, len(pan.Values), len(f.Metrics))
		}
		if len(pan.Designs) == 0 {
			return figure{}, fmt.Errorf("%w: panel %q has no designs", ErrNoData, pan.Title)
		}
		p := newPlot(pan.Title, "", "relative to "+f.Baseline+" (×)")
		names := make([]string, len(pan.Designs))
		for i, d := range pan.Designs {
			// "Splitwise-HH" is HH and "Splitwise H200·tp2 / H100·tp4" a
			// pair of pools: the prefix only widens the names.
			names[i] = strings.TrimPrefix(strings.TrimPrefix(d, "Splitwise-"), "Splitwise ")
		}
		p.NominalX(names...)
		p.X.Tick.Label.Font.Size = vg.Points(9)
		many := len(pan.Designs) > 8
		if many {
			// Slanted names that do not run into each other; no value
			// labels over the bars (the CSV has the figures).
			p.X.Tick.Label.Rotation = math.Pi / 5
			p.X.Tick.Label.XAlign = draw.XRight
			p.X.Tick.Label.YAlign = draw.YCenter
			p.X.Tick.Label.Font.Size = vg.Points(8)
		}
		p.Add(plotter.NewGrid())
		n := len(f.Metrics)
		width := vg.Points(60 / float64(n))
		if len(pan.Designs) > 6 {
			width = vg.Points(40 / float64(n))
		}
		if g := vg.Points(460 / float64(len(pan.Designs)) * 0.8 / float64(n)); g < width {
			width = g // groups that do not run into each other
		}
		ymax := 1.0
		for m := range f.Metrics {
			var labels plotter.XYLabels
			vals := make(plotter.Values, len(pan.Designs))
			for i := range pan.Designs {
				if i < len(pan.Values[m]) && finite(pan.Values[m][i]) {
					v := pan.Values[m][i]
					vals[i] = v
					ymax = math.Max(ymax, v)
					labels.XYs = append(labels.XYs, plotter.XY{X: float64(i), Y: v})
					labels.Labels = append(labels.Labels, fmt.Sprintf("%.2f", v))
					any = true
				}
			}
			b, err := plotter.NewBarChart(vals, width)
			if err != nil {
				return figure{}, fmt.Errorf("plots: %s: %w", pan.Title, err)
			}
			b.Color = seriesColor(m)
			b.LineStyle.Width = 0
			b.Offset = vg.Length(float64(m)-float64(n-1)/2) * width
			p.Add(b)
			if pi == 0 {
				leg.Add(f.Metrics[m], b)
			}
			if len(labels.XYs) > 0 && !many {
				lb, err := plotter.NewLabels(labels)
				if err != nil {
					return figure{}, fmt.Errorf("plots: %s: %w", pan.Title, err)
				}
				for i := range lb.TextStyle {
					lb.TextStyle[i].Font.Size = vg.Points(7)
					lb.TextStyle[i].XAlign = draw.XCenter
				}
				lb.Offset = vg.Point{X: b.Offset, Y: vg.Points(2)}
				p.Add(lb)
			}
		}
		one, _ := plotter.NewLine(plotter.XYs{{X: -0.5, Y: 1}, {X: float64(len(pan.Designs)) - 0.5, Y: 1}})
		one.Color, one.Width = black, vg.Points(1)
		one.Dashes = []vg.Length{vg.Points(4), vg.Points(3)}
		p.Add(one)
		if pi == 0 {
			leg.Add(f.Baseline+" = 1", one)
		}
		p.Y.Min, p.Y.Max = 0, ymax*1.15
		p.X.Min, p.X.Max = -0.5, float64(len(pan.Designs))-0.5
		plots = append(plots, []*plot.Plot{p})
	}
	if !any {
		return figure{}, fmt.Errorf("%w: no design has an optimum to compare", ErrNoFeasible)
	}
	rows := len(plots)
	h := vg.Inch * 2.6
	for _, pan := range f.Panels {
		if len(pan.Designs) > 8 {
			h = vg.Inch * 3.6 // room for the slanted names
		}
	}
	return figure{W: vg.Inch * 9, H: vg.Length(rows)*h + vg.Inch*0.9, Title: f.Title, Subtitle: f.Subtitle, Legend: leg,
		Body: func(c draw.Canvas) {
			cs := plot.Align(plots, draw.Tiles{Rows: rows, Cols: 1, PadY: vg.Points(14)}, c)
			for r := range plots {
				plots[r][0].Draw(cs[r][0])
			}
		}}, nil
}
