package plots

import (
	"fmt"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// DaySeries is one plan's machines per interval.
type DaySeries struct {
	// Name names the plan, e.g. "scheduled".
	Name string
	// Prompt and Token are its machines per interval (Token all 0 for a
	// baseline).
	Prompt, Token []float64
	// Met reports, per interval, that its requests met every SLO.
	Met []bool
}

// DayFigure is a rate profile over a day and the machines each plan runs
// through it: the rate on top, the machines of each pool below, with the
// intervals whose requests missed an SLO marked.
type DayFigure struct {
	// Title and Subtitle head the figure.
	Title, Subtitle string
	// StartsH are the intervals' starts in hours and EndH the last one's
	// end; MeanRPS and PeakRPS the profile's rate over each.
	StartsH          []float64
	EndH             float64
	MeanRPS, PeakRPS []float64
	// Plans are drawn in order.
	Plans []DaySeries
}

// Day writes f to path.
func Day(path string, f DayFigure) error {
	return writeFigure(path, f, dayFigure)
}

// steps is the step line of values over intervals starting at starts and
// ending at end.
func steps(starts []float64, end float64, values []float64) plotter.XYs {
	var xy plotter.XYs
	for i, v := range values {
		next := end
		if i+1 < len(starts) {
			next = starts[i+1]
		}
		xy = append(xy, plotter.XY{X: starts[i], Y: v}, plotter.XY{X: next, Y: v})
	}
	return xy
}

// dayFigure lays out f.
func dayFigure(f DayFigure) (figure, error) {
	n := len(f.StartsH)
	if n == 0 || len(f.MeanRPS) != n || len(f.PeakRPS) != n || len(f.Plans) == 0 {
		return figure{}, fmt.Errorf("%w: %d intervals, %d plans", ErrNoData, n, len(f.Plans))
	}
	leg := newLegend()
	rate := newPlot("", "", "arrival rate (req/s)")
	rate.Add(plotter.NewGrid())
	for i, s := range []struct {
		name string
		v    []float64
	}{{"mean rate in the interval", f.MeanRPS}, {"peak rate in the interval", f.PeakRPS}} {
		l, err := plotter.NewLine(steps(f.StartsH, f.EndH, s.v))
		if err != nil {
			return figure{}, fmt.Errorf("plots: %w", err)
		}
		l.Color, l.Width = black, vg.Points(1.2)
		if i == 1 {
			l.Dashes = []vg.Length{vg.Points(4), vg.Points(3)}
		}
		rate.Add(l)
		leg.Add(s.name, l)
	}
	rate.Y.Min = 0
	baseline := true
	for _, p := range f.Plans {
		for _, t := range p.Token {
			baseline = baseline && t == 0
		}
	}
	pools := []string{"prompt", "token"}
	if baseline {
		pools = []string{"baseline"}
	}
	var panels [][]*plot.Plot
	panels = append(panels, []*plot.Plot{rate})
	for pi, pool := range pools {
		xlabel := ""
		if pi == len(pools)-1 {
			xlabel = "time (h)"
		}
		p := newPlot("", xlabel, pool+" machines")
		p.Add(plotter.NewGrid())
		for si, s := range f.Plans {
			v := s.Prompt
			if pool == "token" {
				v = s.Token
			}
			if len(v) != n || len(s.Met) != n {
				return figure{}, fmt.Errorf("plots: plan %s has %d values for %d intervals", s.Name, len(v), n)
			}
			l, err := plotter.NewLine(steps(f.StartsH, f.EndH, v))
			if err != nil {
				return figure{}, fmt.Errorf("plots: %w", err)
			}
			l.Color, l.Width = seriesColor(si), vg.Points(1.6)
			p.Add(l)
			var missed plotter.XYs
			for i, ok := range s.Met {
				if !ok {
					next := f.EndH
					if i+1 < n {
						next = f.StartsH[i+1]
					}
					missed = append(missed, plotter.XY{X: (f.StartsH[i] + next) / 2, Y: v[i]})
				}
			}
			if len(missed) > 0 {
				sc, err := plotter.NewScatter(missed)
				if err != nil {
					return figure{}, fmt.Errorf("plots: %w", err)
				}
				sc.GlyphStyle.Color, sc.GlyphStyle.Shape, sc.GlyphStyle.Radius = seriesColor(si), draw.CrossGlyph{}, vg.Points(4)
				p.Add(sc)
			}
			if pi == 0 {
				leg.Add(s.Name+" plan", l)
			}
		}
		p.Y.Min = 0
		panels = append(panels, []*plot.Plot{p})
	}
	for _, row := range panels {
		row[0].X.Min, row[0].X.Max = 0, f.EndH
	}
	rows := len(panels)
	return figure{W: vg.Inch * 9, H: vg.Length(rows)*vg.Inch*2.2 + vg.Inch*0.9, Title: f.Title, Subtitle: f.Subtitle + "; × an interval whose requests missed an SLO",
		Legend: leg, Body: func(c draw.Canvas) {
			cs := plot.Align(panels, draw.Tiles{Rows: rows, Cols: 1, PadY: vg.Points(10)}, c)
			for r := range panels {
				panels[r][0].Draw(cs[r][0])
			}
		}}, nil
}
