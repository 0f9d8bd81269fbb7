package plots

import (
	"fmt"
	"math"
	"sort"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
)

// CDFSeries is the time one machine role spent at each number of batched
// tokens.
type CDFSeries struct {
	// Name is the legend entry, e.g. "prompt machines".
	Name string
	// Tokens are the batched tokens of the iterations (ascending or not);
	// S the seconds spent at each. Entries with tokens ≤ 0 or no time are
	// left out.
	Tokens []int
	S      []float64
}

// CDFFigure is, per role, the fraction of busy time spent at or below
// each number of batched tokens (log x axis).
type CDFFigure struct {
	// Title and Subtitle head the figure.
	Title, Subtitle string
	// Series holds one line per role.
	Series []CDFSeries
}

// CDF writes f to path.
func CDF(path string, f CDFFigure) error {
	return writeFigure(path, f, cdfFigure)
}

// cdfFigure lays out f.
func cdfFigure(f CDFFigure) (figure, error) {
	p := newCDFPlot("batched tokens per iteration (log scale)", "fraction of busy time at or below")
	leg := newLegend()
	drawn := 0
	xmax := 1.0
	for i, s := range f.Series {
		if len(s.Tokens) != len(s.S) {
			return figure{}, fmt.Errorf("plots: series %q has %d token counts but %d times", s.Name, len(s.Tokens), len(s.S))
		}
		xy := cdfPoints(s)
		if !addStep(p, leg, i, s.Name, xy) {
			continue
		}
		drawn++
		if x := xy[len(xy)-1].X; x > xmax {
			xmax = x
		}
	}
	if drawn == 0 {
		return figure{}, fmt.Errorf("%w: no machine ran an iteration", ErrNoData)
	}
	p.X.Min, p.X.Max = 1, xmax*1.2
	return figure{W: vg.Inch * 7.5, H: vg.Inch * 5, Title: f.Title, Subtitle: f.Subtitle, Legend: leg, Body: p.Draw}, nil
}

// addStep draws xy on p as series i's step line named name, with its
// legend entry; it reports false, drawing nothing, for no points.
func addStep(p *plot.Plot, leg *plot.Legend, i int, name string, xy plotter.XYs) bool {
	if len(xy) == 0 {
		return false
	}
	l, _ := plotter.NewLine(xy)
	l.StepStyle = plotter.PostStep
	l.Color, l.Width = seriesColor(i), vg.Points(1.8)
	p.Add(l)
	leg.Add(name, l)
	return true
}

// newCDFPlot is a CDF's plot: a log x axis, fractions 0 to 1, a grid.
func newCDFPlot(x, y string) *plot.Plot {
	p := newPlot("", x, y)
	p.X.Scale = plot.LogScale{}
	p.X.Tick.Marker = plot.LogTicks{Prec: -1}
	p.Y.Min, p.Y.Max = 0, 1
	p.Add(plotter.NewGrid())
	return p
}

// cdfPoints aggregates a series by token count and accumulates the time.
func cdfPoints(s CDFSeries) plotter.XYs {
	agg := map[int]float64{}
	total := 0.0
	for i, t := range s.Tokens {
		if t <= 0 || !finite(s.S[i]) || s.S[i] <= 0 {
			continue
		}
		agg[t] += s.S[i]
		total += s.S[i]
	}
	if total == 0 {
		return nil
	}
	keys := make([]int, 0, len(agg))
	for k := range agg {
		keys = append(keys, k)
	}
	sort.Ints(keys)
	out := plotter.XYs{{X: float64(keys[0]), Y: 0}}
	cum := 0.0
	for _, k := range keys {
		cum += agg[k]
		out = append(out, plotter.XY{X: float64(k), Y: cum / total})
	}
	return out
}

// GapCDFSeries is one distribution of gaps between tokens: points (x
// seconds, fraction of values ≤ x), x ascending.
type GapCDFSeries struct {
	// Name is the legend entry, e.g. "every gap (ITL)".
	Name string
	// X are seconds, Frac the fraction of values at or below each.
	X, Frac []float64
}

// GapCDFFigure is the CDFs of the gaps between tokens of a simulation
// (log x axis, seconds).
type GapCDFFigure struct {
	// Title and Subtitle head the figure.
	Title, Subtitle string
	// Series holds one line per distribution.
	Series []GapCDFSeries
}

// GapCDF writes f to path.
func GapCDF(path string, f GapCDFFigure) error {
	return writeFigure(path, f, gapCDFFigure)
}

// gapCDFFigure lays out f.
func gapCDFFigure(f GapCDFFigure) (figure, error) {
	p := newCDFPlot("seconds (log scale)", "fraction at or below")
	leg := newLegend()
	lo, hi := math.Inf(1), 0.0
	drawn := 0
	for i, s := range f.Series {
		if len(s.X) != len(s.Frac) {
			return figure{}, fmt.Errorf("plots: series %q has %d values but %d fractions", s.Name, len(s.X), len(s.Frac))
		}
		var xy plotter.XYs
		for k, x := range s.X {
			if x > 0 && finite(x) && finite(s.Frac[k]) { // (a log axis: zeros are left out)
				if len(xy) == 0 {
					xy = append(xy, plotter.XY{X: x, Y: 0})
				}
				xy = append(xy, plotter.XY{X: x, Y: s.Frac[k]})
				lo, hi = min(lo, x), max(hi, x)
			}
		}
		if addStep(p, leg, i, s.Name, xy) {
			drawn++
		}
	}
	if drawn == 0 {
		return figure{}, fmt.Errorf("%w: no request had two output tokens", ErrNoData)
	}
	p.X.Min, p.X.Max = lo/1.2, hi*1.2
	return figure{W: vg.Inch * 7.5, H: vg.Inch * 5, Title: f.Title, Subtitle: f.Subtitle, Legend: leg, Body: p.Draw}, nil
}
