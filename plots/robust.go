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

// CertaintySeries is one design's robust objective at each confidence.
type CertaintySeries struct {
	Name string
	// Confidence and Objective are the points (NaN objective: no plan at
	// that confidence, left out).
	Confidence, Objective []float64
}

// CertaintyFigure is the price of certainty: the objective of the robust
// plan against the confidence it is asked for, a line per design.
type CertaintyFigure struct {
	Title, Subtitle, YLabel string
	Series                  []CertaintySeries
}

// Certainty writes f to path.
func Certainty(path string, f CertaintyFigure) error {
	return writeFigure(path, f, certaintyFigure)
}

func certaintyFigure(f CertaintyFigure) (figure, error) {
	p := newPlot("", "confidence (share of scenarios meeting every SLO)", f.YLabel)
	p.Add(plotter.NewGrid())
	leg := newLegend()
	drawn := 0
	for i, s := range f.Series {
		var xy plotter.XYs
		for j, c := range s.Confidence {
			if j < len(s.Objective) && finite(s.Objective[j]) && finite(c) {
				xy = append(xy, plotter.XY{X: c, Y: s.Objective[j]})
			}
		}
		if len(xy) == 0 {
			continue
		}
		l, pts, err := plotter.NewLinePoints(xy)
		if err != nil {
			return figure{}, fmt.Errorf("plots: %w", err)
		}
		l.Color, pts.Color = seriesColor(i), seriesColor(i)
		l.Width = vg.Points(1.5)
		pts.Shape = draw.CircleGlyph{}
		p.Add(l, pts)
		leg.Add(strings.TrimPrefix(s.Name, "Splitwise-"), l, pts)
		drawn++
	}
	if drawn == 0 {
		return figure{}, fmt.Errorf("%w: no design has a robust plan", ErrNoFeasible)
	}
	return figure{W: vg.Inch * 7, H: vg.Inch * 4.5, Title: f.Title, Subtitle: f.Subtitle, Legend: leg, Body: p.Draw}, nil
}

// SpreadDesign is one design's machines: the optimum of each scenario,
// the nominal optimum and the robust plan (NaN: none).
type SpreadDesign struct {
	Name            string
	Scenarios       []float64
	Nominal, Robust float64
	P10, P50, P90   float64
}

// SpreadFigure is the spread of the optimal machine counts per design
// over the scenarios, with the nominal and robust plans.
type SpreadFigure struct {
	Title, Subtitle, YLabel string
	Designs                 []SpreadDesign
}

// Spread writes f to path.
func Spread(path string, f SpreadFigure) error {
	return writeFigure(path, f, spreadFigure)
}

func spreadFigure(f SpreadFigure) (figure, error) {
	if len(f.Designs) == 0 {
		return figure{}, fmt.Errorf("%w: no design", ErrNoData)
	}
	p := newPlot("", "", f.YLabel)
	p.Add(plotter.NewGrid())
	names := make([]string, len(f.Designs))
	var scen, nom, rob plotter.XYs
	var bars []plot.Plotter
	top := 0.0
	for i, d := range f.Designs {
		names[i] = strings.TrimPrefix(d.Name, "Splitwise-")
		x := float64(i)
		// Equal counts side by side, so every scenario shows.
		seen := map[float64]int{}
		for _, v := range d.Scenarios {
			if !finite(v) {
				continue
			}
			k := seen[v]
			seen[v]++
			scen = append(scen, plotter.XY{X: x - 0.25 + 0.04*float64(k%12), Y: v})
			top = math.Max(top, v)
		}
		if finite(d.Nominal) {
			nom = append(nom, plotter.XY{X: x + 0.25, Y: d.Nominal})
			top = math.Max(top, d.Nominal)
		}
		if finite(d.Robust) {
			rob = append(rob, plotter.XY{X: x + 0.25, Y: d.Robust})
			top = math.Max(top, d.Robust)
		}
		if finite(d.P10) && finite(d.P90) {
			l, err := plotter.NewLine(plotter.XYs{{X: x - 0.3, Y: d.P10}, {X: x - 0.3, Y: d.P90}})
			if err != nil {
				return figure{}, fmt.Errorf("plots: %w", err)
			}
			l.Width, l.Color = vg.Points(3), colorAlpha(seriesColor(0), 120)
			bars = append(bars, l)
		}
	}
	if top == 0 {
		return figure{}, fmt.Errorf("%w: no scenario optimum", ErrNoFeasible)
	}
	p.Add(bars...)
	leg := newLegend()
	add := func(xy plotter.XYs, name string, c int, shape draw.GlyphDrawer, r vg.Length) error {
		if len(xy) == 0 {
			return nil
		}
		s, err := plotter.NewScatter(xy)
		if err != nil {
			return fmt.Errorf("plots: %w", err)
		}
		s.Color, s.Shape, s.Radius = seriesColor(c), shape, r
		p.Add(s)
		leg.Add(name, s)
		return nil
	}
	if err := add(scen, "scenario optimum", 0, draw.CircleGlyph{}, vg.Points(2)); err != nil {
		return figure{}, err
	}
	if err := add(nom, "nominal", 1, draw.BoxGlyph{}, vg.Points(3.5)); err != nil {
		return figure{}, err
	}
	if err := add(rob, "robust", 2, draw.PyramidGlyph{}, vg.Points(4)); err != nil {
		return figure{}, err
	}
	p.NominalX(names...)
	if len(names) > 4 {
		p.X.Tick.Label.Rotation = math.Pi / 5
		p.X.Tick.Label.XAlign = draw.XRight
		p.X.Tick.Label.YAlign = draw.YCenter
	}
	p.X.Min, p.X.Max = -0.6, float64(len(names))-0.4
	p.Y.Min, p.Y.Max = 0, top*1.1
	return figure{W: vg.Inch * 7, H: vg.Inch * 4.5, Title: f.Title, Subtitle: f.Subtitle, Legend: leg, Body: p.Draw}, nil
}

// TornadoInput is one input of a sensitivity analysis: the change of the
// optimum's objective, in percent of the nominal, when the input moves
// down and up by each step (NaN: nothing met the SLOs there).
type TornadoInput struct {
	Name string
	// Steps are the relative moves, e.g. 0.1 and 0.25; Down and Up the
	// objective's change in percent at −step and +step.
	Steps    []float64
	Down, Up []float64
}

// TornadoFigure ranks the inputs by how far the optimum moves when each
// moves alone: a horizontal bar per input and step, the largest moves on
// top.
type TornadoFigure struct {
	Title, Subtitle, XLabel string
	Inputs                  []TornadoInput
}

// Tornado writes f to path.
func Tornado(path string, f TornadoFigure) error {
	return writeFigure(path, f, tornadoFigure)
}

func tornadoFigure(f TornadoFigure) (figure, error) {
	if len(f.Inputs) == 0 {
		return figure{}, fmt.Errorf("%w: no input", ErrNoData)
	}
	p := newPlot("", f.XLabel, "")
	p.Add(plotter.NewGrid())
	names := make([]string, len(f.Inputs))
	leg := newLegend()
	moved := false
	nsteps := len(f.Inputs[0].Steps)
	// The largest step first (widest, drawn behind), then the smaller.
	for si := nsteps - 1; si >= 0; si-- {
		for dir, pick := range []func(TornadoInput) []float64{func(t TornadoInput) []float64 { return t.Down }, func(t TornadoInput) []float64 { return t.Up }} {
			vals := make(plotter.Values, len(f.Inputs))
			for i, in := range f.Inputs {
				v := pick(in)
				if si < len(v) && finite(v[si]) {
					vals[i] = v[si]
					moved = moved || v[si] != 0
				}
			}
			w := vg.Points(22 - 8*float64(nsteps-1-si))
			b, err := plotter.NewBarChart(vals, w)
			if err != nil {
				return figure{}, fmt.Errorf("plots: %w", err)
			}
			b.Horizontal = true
			b.LineStyle.Width = 0
			c := seriesColor(dir)
			if si == nsteps-1 && nsteps > 1 {
				c = fade(c)
			}
			b.Color = c
			p.Add(b)
			sign := "−"
			if dir == 1 {
				sign = "+"
			}
			step := 0.0
			if si < len(f.Inputs[0].Steps) {
				step = f.Inputs[0].Steps[si]
			}
			leg.Add(fmt.Sprintf("input %s%g%%", sign, 100*step), b)
		}
	}
	for i, in := range f.Inputs {
		names[i] = in.Name
	}
	if !moved {
		// Still a figure: every move leaves the optimum where it is.
		p.X.Min, p.X.Max = -1, 1
	}
	p.NominalY(names...)
	return figure{W: vg.Inch * 7, H: vg.Inch * vg.Length(1.5+0.45*float64(len(names))), Title: f.Title, Subtitle: f.Subtitle, Legend: leg, Body: p.Draw}, nil
}
