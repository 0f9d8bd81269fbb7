package plots

import (
	"fmt"
	"image"
	"image/color"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// textBox is a string as drawn: the four corners of its box (advance
// width by ascent + descent) on the page, in points, and its text.
type textBox struct {
	Text    string
	Corners [4]vg.Point
}

// affine is a 2-D transform: x' = a·x + c·y + e, y' = b·x + d·y + f.
type affine struct{ a, b, c, d, e, f float64 }

func (m affine) mul(n affine) affine { // m then n applied first: m∘n
	return affine{
		a: m.a*n.a + m.c*n.b, b: m.b*n.a + m.d*n.b,
		c: m.a*n.c + m.c*n.d, d: m.b*n.c + m.d*n.d,
		e: m.a*n.e + m.c*n.f + m.e, f: m.b*n.e + m.d*n.f + m.f,
	}
}

func (m affine) apply(p vg.Point) vg.Point {
	x, y := float64(p.X), float64(p.Y)
	return vg.Point{X: vg.Length(m.a*x + m.c*y + m.e), Y: vg.Length(m.b*x + m.d*y + m.f)}
}

// textRecorder is a canvas that keeps the box of every string drawn on
// it, through the translations, rotations and scalings of the figure.
type textRecorder struct {
	w, h  vg.Length
	m     affine
	stack []affine
	boxes []textBox
}

func newTextRecorder(w, h vg.Length) *textRecorder {
	return &textRecorder{w: w, h: h, m: affine{a: 1, d: 1}}
}

func (r *textRecorder) Size() (vg.Length, vg.Length)        { return r.w, r.h }
func (r *textRecorder) SetLineWidth(vg.Length)              {}
func (r *textRecorder) SetLineDash([]vg.Length, vg.Length)  {}
func (r *textRecorder) SetColor(color.Color)                {}
func (r *textRecorder) Stroke(vg.Path)                      {}
func (r *textRecorder) Fill(vg.Path)                        {}
func (r *textRecorder) DrawImage(vg.Rectangle, image.Image) {}
func (r *textRecorder) Push()                               { r.stack = append(r.stack, r.m) }
func (r *textRecorder) Pop() {
	r.m = r.stack[len(r.stack)-1]
	r.stack = r.stack[:len(r.stack)-1]
}
func (r *textRecorder) Rotate(rad float64) {
	s, c := math.Sincos(rad)
	r.m = r.m.mul(affine{a: c, b: s, c: -s, d: c})
}
func (r *textRecorder) Translate(pt vg.Point) {
	r.m = r.m.mul(affine{a: 1, d: 1, e: float64(pt.X), f: float64(pt.Y)})
}
func (r *textRecorder) Scale(x, y float64) { r.m = r.m.mul(affine{a: x, d: y}) }

func (r *textRecorder) FillString(f font.Face, pt vg.Point, s string) {
	if s == "" {
		return
	}
	e := f.Extents()
	w := f.Width(s)
	lo, hi := pt.Y-e.Descent, pt.Y+e.Ascent
	r.boxes = append(r.boxes, textBox{Text: s, Corners: [4]vg.Point{
		r.m.apply(vg.Point{X: pt.X, Y: lo}), r.m.apply(vg.Point{X: pt.X + w, Y: lo}),
		r.m.apply(vg.Point{X: pt.X + w, Y: hi}), r.m.apply(vg.Point{X: pt.X, Y: hi}),
	}})
}

// shrunk is b with every side moved inwards by d (boxes that merely touch,
// as lines of a legend do, do not overlap).
func (b textBox) shrunk(d vg.Length) [4]vg.Point {
	var c vg.Point
	for _, p := range b.Corners {
		c.X += p.X / 4
		c.Y += p.Y / 4
	}
	var out [4]vg.Point
	for i, p := range b.Corners {
		u := b.Corners[(i+1)%4].Sub(b.Corners[i])
		v := b.Corners[(i+3)%4].Sub(b.Corners[i])
		lu, lv := math.Hypot(float64(u.X), float64(u.Y)), math.Hypot(float64(v.X), float64(v.Y))
		if lu > 2*float64(d) {
			p = p.Add(u.Scale(vg.Length(float64(d) / lu)))
		}
		if lv > 2*float64(d) {
			p = p.Add(v.Scale(vg.Length(float64(d) / lv)))
		}
		out[i] = p
	}
	return out
}

// convexOverlap reports whether two convex quadrilaterals intersect, by
// the separating axis theorem.
func convexOverlap(p, q [4]vg.Point) bool {
	for _, poly := range [][4]vg.Point{p, q} {
		for i := range poly {
			e := poly[(i+1)%4].Sub(poly[i])
			ax := vg.Point{X: -e.Y, Y: e.X}
			pmin, pmax := project(p, ax)
			qmin, qmax := project(q, ax)
			if pmax <= qmin || qmax <= pmin {
				return false
			}
		}
	}
	return true
}

func project(poly [4]vg.Point, ax vg.Point) (lo, hi float64) {
	lo, hi = math.Inf(1), math.Inf(-1)
	for _, p := range poly {
		v := float64(p.X*ax.X + p.Y*ax.Y)
		lo, hi = math.Min(lo, v), math.Max(hi, v)
	}
	return lo, hi
}

// layoutProblems draws fig on a recorder and lists every string that
// leaves the page (with its width grown by slack, the room an SVG viewer's
// wider font needs) and every two strings whose boxes overlap.
func layoutProblems(fig figure, slack float64) []string {
	rec := newTextRecorder(fig.W, fig.H)
	fig.draw(draw.New(rec))
	var out []string
	for _, b := range rec.boxes {
		wide := b.Corners
		u := wide[1].Sub(wide[0])
		wide[1] = wide[1].Add(u.Scale(vg.Length(slack)))
		wide[2] = wide[2].Add(u.Scale(vg.Length(slack)))
		for _, p := range wide {
			if p.X < -0.01 || p.Y < -0.01 || p.X > fig.W+0.01 || p.Y > fig.H+0.01 {
				out = append(out, fmt.Sprintf("%q leaves the %.0f×%.0f pt page at (%.1f, %.1f)", b.Text, fig.W, fig.H, p.X, p.Y))
				break
			}
		}
	}
	for i := range rec.boxes {
		for j := i + 1; j < len(rec.boxes); j++ {
			if convexOverlap(rec.boxes[i].shrunk(0.5), rec.boxes[j].shrunk(0.5)) {
				out = append(out, fmt.Sprintf("%q overlaps %q", rec.boxes[i].Text, rec.boxes[j].Text))
			}
		}
	}
	return out
}

// gpuDesigns are the names of a --gpus space of 11 GPU·TP instances: 11
// baselines and 121 Splitwise pairs, 132 designs.
func gpuDesigns() []string {
	var inst []string
	for _, g := range []struct {
		name string
		tps  []int
	}{{"H100", []int{2, 4, 8}}, {"H200", []int{2, 4, 8}}, {"B200", []int{1, 2, 4, 8}}, {"L40S", []int{8}}} {
		for _, tp := range g.tps {
			inst = append(inst, fmt.Sprintf("%s·tp%d", g.name, tp))
		}
	}
	var out []string
	for _, i := range inst {
		out = append(out, "Baseline "+i)
	}
	for _, p := range inst {
		for _, t := range inst {
			out = append(out, "Splitwise "+p+" / "+t)
		}
	}
	return out
}

// largeSummary is three searches of 25 designs each (a summary of 132
// designs keeps the baseline and the 24 best), with the longest names.
func largeSummary() SummaryFigure {
	names := gpuDesigns()
	f := SummaryFigure{Title: "Optima relative to Baseline H100·tp8", Baseline: "Baseline H100·tp8",
		Subtitle: "each design's optimum per search; no bars: no optimum within the bounds",
		Metrics:  []string{"throughput (req/s)", "cost ($/h)", "power (kW)", "machines"}}
	for s, title := range []string{"iso-power (455 kW)", "iso-cost ($1520/h)", "iso-throughput (70 req/s)"} {
		pan := SummaryPanel{Title: title + ": Baseline H100·tp8 and the 24 best; +107 more designs, see CSV", Values: make([][]float64, 4)}
		for i := 0; i < 25; i++ {
			pan.Designs = append(pan.Designs, names[len(names)-1-i*3-s])
			for m := range pan.Values {
				pan.Values[m] = append(pan.Values[m], 0.5+float64((i*7+m*3+s)%11)/4)
			}
		}
		f.Panels = append(f.Panels, pan)
	}
	return f
}

// largePareto is an iso-power search of 132 designs: every optimum at the
// 455-kW budget, each design a handful of points.
func largePareto() ParetoFigure {
	f := ParetoFigure{Title: "Power vs throughput", Subtitle: "iso-power.csv; 132 designs; each point at its capacity", YLabel: "power (kW)"}
	for d, name := range gpuDesigns() {
		for k := 1; k <= 4; k++ {
			pt := ParetoPoint{Design: name, X: float64(200 + (d*37)%600 + 40*k), Y: 455 - float64(4-k)*float64(1+d%5)}
			if k == 4 {
				pt.Y, pt.Label = 455-float64(d%3)*0.4, name
			}
			f.Points = append(f.Points, pt)
		}
	}
	return f
}

// largeHeatmap is a 160 × 160 space whose optimum is near a corner.
func largeHeatmap() HeatmapFigure {
	f := HeatmapFigure{Title: "Splitwise B200·tp1 / H200·tp8 at most throughput within 455 kW", Subtitle: "iso-power.csv; llama3.1-70b, coding request sizes, 60s per simulation, seed 1",
		ColorLabel: "binding SLO (measured / limit)", HasOptimum: true, OptPrompt: 21, OptToken: 7}
	for p := 1; p <= 160; p++ {
		for t := 1; t <= 160; t++ {
			c := HeatCell{Prompt: p, Token: t, Value: float64(p+t) / 40}
			if p+t > 28 {
				c.State = Infeasible
			}
			f.Cells = append(f.Cells, c)
		}
	}
	return f
}

// largePairs is a 6 × 6 power-cap pairs figure with a co-located column,
// two lines in every cell (as optimize --power-caps 0.5:1.0:0.1 draws).
func largePairs() PairsFigure {
	caps := []string{"H100", "H100@90", "H100@80", "H100@70", "H100@60", "H100@50"}
	f := PairsFigure{Title: "Best design per GPU pair: GPU energy", Subtitle: "iso-throughput 70 req/s, least energy; bloom-176b, coding request sizes, 120s per simulation, seed 0",
		Rows: caps, Cols: append(append([]string(nil), caps...), "co-located"), XLabel: "token GPU", YLabel: "prompt GPU", ColorLabel: "GPU energy (kWh/day)",
		HasWinner: true, WinRow: 5, WinCol: 5}
	for r := range f.Rows {
		for c := range f.Cols {
			f.Cells = append(f.Cells, PairCell{Row: r, Col: c, Value: 2190 + float64((r*7+c*5)%160), Text: fmt.Sprintf("%d kWh/day\ntp8/tp8 %dP/%dT", 2190+(r*7+c*5)%160, 23+r+c, 1+c)})
		}
	}
	f.Cells[6].Value, f.Cells[6].Text, f.Cells[6].Bounded = math.NaN(), "≥ 2228 kWh/day\n(bound)", true
	return f
}

// manyBars is the cost of 25 designs' optima (a bars figure keeps at most
// 25), with their machine counts.
func manyBars(n int) BarsFigure {
	f := BarsFigure{Title: "Cost of each design's optimum", YLabel: "cost ($/h)", Subtitle: "iso-throughput 70 req/s, least cost\nno bar: no optimum within the bounds"}
	caps := []string{"100", "90", "80", "70", "60", "50"}
	for i := 0; i < n; i++ {
		f.Names = append(f.Names, fmt.Sprintf("Splitwise-HH@%s-%s", caps[i%6], caps[(i/6)%6]))
		f.Values = append(f.Values, 1400+float64((i*37)%300))
		f.Labels = append(f.Labels, fmt.Sprintf("%d+%d", 20+i%9, 3+i%5))
	}
	return f
}

// TestLayout draws every figure, the goldens' and those of a 132-design
// --gpus search, and checks that no text leaves the page (with 8% more
// width, an SVG viewer's wider font) and that no two strings overlap.
// dayFixture is a day of n intervals with three plans (a baseline's
// when baseline), one missing an SLO in the peak interval.
func dayFixture(n int, baseline bool) DayFigure {
	f := DayFigure{Title: "A day of Splitwise-HH", Subtitle: "diurnal:peak=100,trough=30,period=24h,phase=14h (mean 65, peak 100, trough 30 req/s, period 24h)", EndH: 24}
	for i := range n {
		f.StartsH = append(f.StartsH, 24*float64(i)/float64(n))
		r := 65 + 35*math.Cos(2*math.Pi*(float64(i)-float64(n)*14/24)/float64(n))
		f.MeanRPS, f.PeakRPS = append(f.MeanRPS, r), append(f.PeakRPS, r*1.05)
	}
	for k, name := range []string{"static", "scheduled", "ideal"} {
		s := DaySeries{Name: name}
		for i := range n {
			p := 33.0
			if k > 0 {
				p = math.Ceil(f.PeakRPS[i] / 3)
			}
			t := math.Ceil(p / 3)
			if baseline {
				p, t = 2.5*p, 0
			}
			s.Prompt, s.Token, s.Met = append(s.Prompt, p), append(s.Token, t), append(s.Met, !(k == 2 && i == n*14/24))
		}
		f.Plans = append(f.Plans, s)
	}
	return f
}

func TestLayout(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		lay  func() (figure, error)
	}{
		{"latency", func() (figure, error) { return latencyFigure(latencyFixture()) }},
		{"heatmap", func() (figure, error) { return heatmapFigure(heatmapFixture()) }},
		{"pareto", func() (figure, error) { return paretoFigure(paretoFixture()) }},
		{"cdf", func() (figure, error) { return cdfFigure(cdfFixture()) }},
		{"summary", func() (figure, error) { return summaryFigure(summaryFixture()) }},
		{"pairs", func() (figure, error) { return pairsFigure(pairsFixture()) }},
		{"summary-132", func() (figure, error) { return summaryFigure(largeSummary()) }},
		{"pareto-132", func() (figure, error) { return paretoFigure(largePareto()) }},
		{"heatmap-160", func() (figure, error) { return heatmapFigure(largeHeatmap()) }},
		{"bars-6", func() (figure, error) { return barsFigure(manyBars(6)) }},
		{"bars-25", func() (figure, error) { return barsFigure(manyBars(25)) }},
		{"pairs-6x7", func() (figure, error) { return pairsFigure(largePairs()) }},
		{"day-24", func() (figure, error) { return dayFigure(dayFixture(24, false)) }},
		{"day-baseline", func() (figure, error) { return dayFigure(dayFixture(8, true)) }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			fig, err := c.lay()
			if err != nil {
				t.Fatal(err)
			}
			for _, p := range layoutProblems(fig, 0.08) {
				t.Error(p)
			}
			if keep != "" {
				if err := fig.save(filepath.Join(keep, "layout-"+c.name+".png")); err != nil {
					t.Error(err)
				}
			}
		})
	}
}

// TestLayoutCatchesCrowding: the check finds the faults it looks for — the
// names of 132 designs in one panel run into each other, and a title wider
// than the page leaves it.
func TestLayoutCatchesCrowding(t *testing.T) {
	t.Parallel()
	names := gpuDesigns()
	f := SummaryFigure{Title: "crowded", Baseline: names[0], Metrics: []string{"throughput"},
		Panels: []SummaryPanel{{Title: "all", Designs: names, Values: [][]float64{make([]float64, len(names))}}}}
	for i := range names {
		f.Panels[0].Values[0][i] = 1
	}
	fig, err := summaryFigure(f)
	if err != nil {
		t.Fatal(err)
	}
	overlaps := 0
	for _, p := range layoutProblems(fig, 0) {
		if strings.Contains(p, "overlaps") {
			overlaps++
		}
	}
	if overlaps < 50 {
		t.Errorf("132 slanted names in one panel: %d overlaps found", overlaps)
	}
	long := strings.Repeat("a very long title ", 12)
	fig, err = cdfFigure(CDFFigure{Title: long, Series: cdfFixture().Series})
	if err != nil {
		t.Fatal(err)
	}
	if p := layoutProblems(fig, 0); len(p) == 0 || !strings.Contains(p[0], "leaves the") {
		t.Errorf("a title wider than the page: %v", p)
	}
}

// TestWrapTextBalanced: a subtitle that needs two lines gets two of about
// the same width, none wider than the limit, every word kept in order.
func TestWrapTextBalanced(t *testing.T) {
	t.Parallel()
	sty := textStyle(9, draw.XCenter)
	s := "21 points evaluated (7 feasible) of 900 in the design space; white cells were not simulated (pruned search; --exhaustive fills the grid)"
	width := sty.Rectangle(s).Size().X * 0.97
	lines := wrapText(sty, s, width)
	if len(lines) != 2 {
		t.Fatalf("%d lines: %q", len(lines), lines)
	}
	if strings.Join(lines, " ") != s {
		t.Errorf("words changed: %q", lines)
	}
	w0, w1 := sty.Rectangle(lines[0]).Size().X, sty.Rectangle(lines[1]).Size().X
	if w0 > width || w1 > width || math.Abs(float64(w0-w1)) > 0.25*float64(w0+w1)/2 {
		t.Errorf("line widths %.0f and %.0f (limit %.0f): %q", w0, w1, width, lines)
	}
	if got := wrapText(sty, "short\nline two", width); len(got) != 2 || got[0] != "short" {
		t.Errorf("newlines: %q", got)
	}
}

// TestSVGTextLengths: every string of an SVG figure carries the width it
// was laid out with, so a viewer's other font cannot widen it; a count
// that does not match is an error, not a figure with lengths shifted.
func TestSVGTextLengths(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "p.svg")
	if err := Pareto(path, largePareto()); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	n, withLen := strings.Count(string(b), "<text "), strings.Count(string(b), `<text textLength="`)
	if n < 20 || withLen != n {
		t.Errorf("%d of %d text elements have a textLength", withLen, n)
	}
	if !strings.Contains(string(b), `textLength="116.66" lengthAdjust="spacingAndGlyphs" x=`) {
		t.Errorf("the title (Power vs throughput, 14 pt: 116.66 pt) has no textLength of its width")
	}
	if _, err := fixTextLengths([]byte(`<text x="1">a</text><text x="2">b</text>`), []vg.Length{3}); err == nil {
		t.Error("2 text elements and 1 width: no error")
	}
}
