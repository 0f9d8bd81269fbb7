package htmlreport

import (
	"fmt"
	"html"
	"math"
	"sort"
	"strconv"
	"strings"
)

// Palette is the Okabe–Ito colour-blind-safe palette, in the order series
// take their colours (black last, kept for frontiers and limits).
var Palette = []string{"#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00", "#F0E442", "#000000"}

// otherColour draws the series beyond the palette's first seven.
const otherColour = "#999999"

// seriesColour is the colour of the i-th series.
func seriesColour(i int) string {
	if i < len(Palette)-1 {
		return Palette[i]
	}
	return otherColour
}

// Pt is one point of a series: its coordinates, the tooltip shown on
// hover and, optionally, the detail shown when it is clicked.
type Pt struct {
	X, Y        float64
	Tip, Detail string
}

// Series is one named set of points of a chart.
type Series struct {
	// Name is the legend entry.
	Name string
	// Points are drawn in order.
	Points []Pt
	// Line joins the points; Step joins them as a staircase (a CDF);
	// Markers draws each point as a dot that shows its tooltip.
	Line, Step, Markers bool
	// Dashed draws the line dashed (an SLO limit).
	Dashed bool
	// Colour overrides the palette's colour (empty: the palette's).
	Colour string
	// Big draws larger markers (an optimum).
	Big bool
}

// Chart is an x–y figure: scatter, lines or CDFs.
type Chart struct {
	// ID names the figure in the page (an HTML id).
	ID string
	// Title heads it; Note follows it in small print.
	Title, Note string
	// XLabel and YLabel name the axes with their units.
	XLabel, YLabel string
	// LogX draws the x axis on a log scale (values ≤ 0 left out).
	LogX bool
	// YMin0 starts the y axis at zero.
	YMin0 bool
	// YMax, when positive, caps the y axis: a point above it is drawn at
	// the top edge (its tooltip keeps its value), so that a limit stays
	// readable beside a runaway line.
	YMax float64
	// Series are drawn in order.
	Series []Series
}

// Figure geometry, in SVG user units (the SVG scales to its box).
const (
	chartW, chartH           = 640.0, 360.0
	padL, padR, padT, padB   = 64.0, 16.0, 12.0, 48.0
	maxTicks                 = 7
	markerR, bigMarkerR      = 4.0, 7.0
	heatmapMaxW, heatmapMinH = 640.0, 200.0
)

// num formats a number for axes and labels: at most four significant
// digits, no exponent for everyday magnitudes.
func num(v float64) string {
	if v == 0 {
		return "0"
	}
	a := math.Abs(v)
	if a >= 1e-3 && a < 1e6 {
		return trimZeros(strconv.FormatFloat(v, 'f', decimals(a), 64))
	}
	return strconv.FormatFloat(v, 'g', 4, 64)
}

// decimals is how many decimals show four significant digits of a.
func decimals(a float64) int {
	d := 3 - int(math.Floor(math.Log10(a)))
	if d < 0 {
		return 0
	}
	return d
}

func trimZeros(s string) string {
	if strings.Contains(s, ".") {
		s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	}
	return s
}

// coord formats an SVG coordinate.
func coord(v float64) string { return strconv.FormatFloat(v, 'f', 1, 64) }

// esc escapes text for HTML content and attributes.
func esc(s string) string { return html.EscapeString(s) }

// linearTicks are round ticks covering [lo, hi].
func linearTicks(lo, hi float64) []float64 {
	if hi <= lo {
		return []float64{lo}
	}
	raw := (hi - lo) / float64(maxTicks-1)
	mag := math.Pow(10, math.Floor(math.Log10(raw)))
	step := mag
	for _, m := range []float64{1, 2, 2.5, 5, 10} {
		if m*mag >= raw {
			step = m * mag
			break
		}
	}
	var out []float64
	for k := math.Ceil(lo/step - 1e-9); k*step <= hi+step*1e-9; k++ {
		out = append(out, math.Round(k*step*1e12)/1e12) // (0.6, not 6 × 0.1)
	}
	return out
}

// logTicks are the powers of ten (and, over a short range, 2× and 5×)
// covering [lo, hi], lo > 0.
func logTicks(lo, hi float64) []float64 {
	var out []float64
	short := math.Log10(hi/lo) < 2
	for e := math.Floor(math.Log10(lo)); e <= math.Ceil(math.Log10(hi)); e++ {
		for _, m := range []float64{1, 2, 5} {
			if m != 1 && !short {
				continue
			}
			v := m * math.Pow(10, e)
			if v >= lo*(1-1e-9) && v <= hi*(1+1e-9) {
				out = append(out, v)
			}
		}
	}
	return out
}

// axis maps data values to pixels.
type axis struct {
	lo, hi, p0, p1 float64
	log            bool
}

func (a axis) at(v float64) float64 {
	if a.log {
		v, a.lo, a.hi = math.Log10(v), math.Log10(a.lo), math.Log10(a.hi)
	}
	if a.hi == a.lo {
		return (a.p0 + a.p1) / 2
	}
	return a.p0 + (v-a.lo)/(a.hi-a.lo)*(a.p1-a.p0)
}

func (a axis) ticks() []float64 {
	if a.log {
		return logTicks(a.lo, a.hi)
	}
	return linearTicks(a.lo, a.hi)
}

// usable reports whether a point can be drawn on the chart's axes.
func (c *Chart) usable(p Pt) bool {
	return !math.IsNaN(p.X) && !math.IsInf(p.X, 0) && !math.IsNaN(p.Y) && !math.IsInf(p.Y, 0) && (!c.LogX || p.X > 0)
}

// bounds are the data's extent, widened a little so that no marker sits on
// an axis.
func (c *Chart) bounds() (xa, ya axis, ok bool) {
	xlo, xhi, ylo, yhi := math.Inf(1), math.Inf(-1), math.Inf(1), math.Inf(-1)
	for _, s := range c.Series {
		for _, p := range s.Points {
			if !c.usable(p) {
				continue
			}
			xlo, xhi = math.Min(xlo, p.X), math.Max(xhi, p.X)
			ylo, yhi = math.Min(ylo, p.Y), math.Max(yhi, p.Y)
		}
	}
	if math.IsInf(xlo, 0) {
		return axis{}, axis{}, false
	}
	if c.YMin0 && ylo > 0 {
		ylo = 0
	}
	if c.YMax > 0 && yhi > c.YMax {
		yhi = c.YMax
	}
	if c.LogX {
		if xhi == xlo {
			xlo, xhi = xlo/2, xhi*2
		} else {
			xlo, xhi = xlo/math.Pow(xhi/xlo, 0.03), xhi*math.Pow(xhi/xlo, 0.03)
		}
	} else {
		xlo, xhi = widen(xlo, xhi, false)
	}
	ylo, yhi = widen(ylo, yhi, c.YMin0)
	xa = axis{lo: xlo, hi: xhi, p0: padL, p1: chartW - padR, log: c.LogX}
	ya = axis{lo: ylo, hi: yhi, p0: chartH - padB, p1: padT}
	return xa, ya, true
}

// widen pads [lo, hi] by 5% each side (keeping a zero floor when asked).
func widen(lo, hi float64, zero bool) (float64, float64) {
	d := hi - lo
	if d == 0 {
		d = math.Max(math.Abs(hi), 1)
	}
	if !(zero && lo == 0) {
		lo -= 0.05 * d
	}
	return lo, hi + 0.05*d
}

// svgAxes draws the frame, ticks, grid and axis labels.
func svgAxes(b *strings.Builder, xa, ya axis, xlabel, ylabel string) {
	fmt.Fprintf(b, `<rect class="plot" x="%s" y="%s" width="%s" height="%s"/>`, coord(padL), coord(padT), coord(chartW-padL-padR), coord(chartH-padT-padB))
	for _, t := range xa.ticks() {
		x := xa.at(t)
		fmt.Fprintf(b, `<line class="grid" x1="%s" y1="%s" x2="%s" y2="%s"/><text class="tick" x="%s" y="%s" text-anchor="middle">%s</text>`,
			coord(x), coord(padT), coord(x), coord(chartH-padB), coord(x), coord(chartH-padB+16), num(t))
	}
	for _, t := range ya.ticks() {
		y := ya.at(t)
		fmt.Fprintf(b, `<line class="grid" x1="%s" y1="%s" x2="%s" y2="%s"/><text class="tick" x="%s" y="%s" text-anchor="end">%s</text>`,
			coord(padL), coord(y), coord(chartW-padR), coord(y), coord(padL-6), coord(y+4), num(t))
	}
	fmt.Fprintf(b, `<text class="label" x="%s" y="%s" text-anchor="middle">%s</text>`, coord((padL+chartW-padR)/2), coord(chartH-8), esc(xlabel))
	fmt.Fprintf(b, `<text class="label" transform="translate(14 %s) rotate(-90)" text-anchor="middle">%s</text>`, coord((padT+chartH-padB)/2), esc(ylabel))
}

// SVG draws the chart: an inline SVG whose markers carry data-tip (and
// data-detail) attributes for the page's script, then its legend as HTML
// (so that no label overlaps the data).
func (c *Chart) SVG() string {
	var b strings.Builder
	xa, ya, ok := c.bounds()
	if !ok {
		return `<p class="empty">no data to draw</p>`
	}
	fmt.Fprintf(&b, `<svg class="chart" viewBox="0 0 %s %s" role="img" aria-label="%s">`, coord(chartW), coord(chartH), esc(c.Title))
	svgAxes(&b, xa, ya, c.XLabel, c.YLabel)
	for i, s := range c.Series {
		col := s.Colour
		if col == "" {
			col = seriesColour(i)
		}
		var pts []Pt
		for _, p := range s.Points {
			if c.usable(p) {
				if c.YMax > 0 && p.Y > c.YMax {
					p.Y = c.YMax
				}
				pts = append(pts, p)
			}
		}
		if (s.Line || s.Step) && len(pts) > 0 {
			var path strings.Builder
			start := true
			for _, p := range s.Points {
				if !c.usable(p) {
					start = true // a gap: an unsustainable run
					continue
				}
				if c.YMax > 0 && p.Y > c.YMax {
					p.Y = c.YMax
				}
				x, y := xa.at(p.X), ya.at(p.Y)
				switch {
				case start:
					start = false
					fmt.Fprintf(&path, "M%s %s", coord(x), coord(y))
				case s.Step:
					fmt.Fprintf(&path, "H%sV%s", coord(x), coord(y))
				default:
					fmt.Fprintf(&path, "L%s %s", coord(x), coord(y))
				}
			}
			dash := ""
			if s.Dashed {
				dash = ` stroke-dasharray="6 4"`
			}
			fmt.Fprintf(&b, `<path class="line" d="%s" stroke="%s"%s data-tip="%s"/>`, path.String(), col, dash, esc(s.Name))
		}
		if s.Markers {
			r, cls := markerR, "pt"
			if s.Big {
				r, cls = bigMarkerR, "pt big"
			}
			for _, p := range pts {
				fmt.Fprintf(&b, `<circle class="%s" cx="%s" cy="%s" r="%s" fill="%s" data-tip="%s"`, cls, coord(xa.at(p.X)), coord(ya.at(p.Y)), coord(r), col, esc(p.Tip))
				if p.Detail != "" {
					fmt.Fprintf(&b, ` data-detail="%s" tabindex="0"`, esc(p.Detail))
				}
				b.WriteString("/>")
			}
		}
	}
	b.WriteString("</svg>")
	b.WriteString(legend(c.Series))
	return b.String()
}

// legend lists the named series with their colours.
func legend(series []Series) string {
	var b strings.Builder
	b.WriteString(`<ul class="legend">`)
	for i, s := range series {
		if s.Name == "" {
			continue
		}
		col := s.Colour
		if col == "" {
			col = seriesColour(i)
		}
		cls := "sw"
		if s.Big {
			cls = "sw ring"
		}
		if (s.Line || s.Step) && !s.Markers {
			cls = "sw ln"
		}
		if s.Dashed {
			cls += " dash"
		}
		fmt.Fprintf(&b, `<li><span class="%s" style="--c:%s"></span>%s</li>`, cls, col, esc(s.Name))
	}
	b.WriteString("</ul>")
	return b.String()
}

// Cell is one cell of a heatmap.
type Cell struct {
	// X and Y are the cell's column and row values (machine counts).
	X, Y int
	// Value colours a feasible cell; NaN draws it as infeasible.
	Value float64
	// State is the legend class: "ok", "fail" or "pruned".
	State string
	// Tip is shown on hover.
	Tip string
	// Star marks the optimum.
	Star bool
}

// Heatmap is a design space: one cell per point, feasible cells coloured
// by value on a one-hue scale, the others grey.
type Heatmap struct {
	// ID names the figure in the page.
	ID string
	// Title heads it; Note follows it.
	Title, Note string
	// XLabel, YLabel and ValueLabel name the axes and the colour, with
	// units.
	XLabel, YLabel, ValueLabel string
	// Cells are the points.
	Cells []Cell
}

// ramp is a light-to-dark blue scale (one hue: readable without colour
// vision), low values light.
var ramp = [][3]float64{{0xde, 0xeb, 0xf7}, {0x9e, 0xca, 0xe1}, {0x42, 0x92, 0xc6}, {0x08, 0x45, 0x94}}

func rampColour(t float64) string {
	t = math.Max(0, math.Min(1, t))
	f := t * float64(len(ramp)-1)
	i := int(math.Min(f, float64(len(ramp)-2)))
	u := f - float64(i)
	var c [3]int
	for k := range c {
		c[k] = int(math.Round(ramp[i][k] + u*(ramp[i+1][k]-ramp[i][k])))
	}
	return fmt.Sprintf("#%02x%02x%02x", c[0], c[1], c[2])
}

// SVG draws the heatmap with its colour key.
func (h *Heatmap) SVG() string {
	if len(h.Cells) == 0 {
		return `<p class="empty">no points to draw</p>`
	}
	xs, ys := map[int]bool{}, map[int]bool{}
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, c := range h.Cells {
		xs[c.X], ys[c.Y] = true, true
		if !math.IsNaN(c.Value) {
			lo, hi = math.Min(lo, c.Value), math.Max(hi, c.Value)
		}
	}
	xv, yv := sortedKeys(xs), sortedKeys(ys)
	xi, yi := index(xv), index(yv)
	plotW := chartW - padL - padR
	cw := plotW / float64(len(xv))
	ch := math.Min(28, math.Max(heatmapMinH/float64(len(yv)), 8))
	if ch*float64(len(yv)) < heatmapMinH {
		ch = heatmapMinH / float64(len(yv))
	}
	plotH := ch * float64(len(yv))
	height := padT + plotH + padB
	var b strings.Builder
	fmt.Fprintf(&b, `<svg class="chart heat" viewBox="0 0 %s %s" role="img" aria-label="%s">`, coord(chartW), coord(height), esc(h.Title))
	for _, c := range h.Cells {
		x := padL + float64(xi[c.X])*cw
		y := padT + float64(len(yv)-1-yi[c.Y])*ch
		fill := "#bbbbbb"
		switch {
		case c.State == "pruned":
			fill = "#e8e8e8"
		case !math.IsNaN(c.Value):
			t := 0.0
			if hi > lo {
				t = (c.Value - lo) / (hi - lo)
			}
			fill = rampColour(t)
		}
		fmt.Fprintf(&b, `<rect class="cell" x="%s" y="%s" width="%s" height="%s" fill="%s" data-tip="%s"/>`, coord(x), coord(y), coord(cw), coord(ch), fill, esc(c.Tip))
		if c.Star {
			fmt.Fprintf(&b, `<text class="star" x="%s" y="%s" text-anchor="middle" data-tip="%s">★</text>`, coord(x+cw/2), coord(y+ch/2+5), esc(c.Tip))
		}
	}
	fmt.Fprintf(&b, `<rect class="frame" x="%s" y="%s" width="%s" height="%s"/>`, coord(padL), coord(padT), coord(plotW), coord(plotH))
	for _, k := range thin(len(xv), 16) {
		x := padL + (float64(k)+0.5)*cw
		fmt.Fprintf(&b, `<text class="tick" x="%s" y="%s" text-anchor="middle">%d</text>`, coord(x), coord(padT+plotH+16), xv[k])
	}
	for _, k := range thin(len(yv), int(plotH/14)) {
		y := padT + (float64(len(yv)-1-k)+0.5)*ch
		fmt.Fprintf(&b, `<text class="tick" x="%s" y="%s" text-anchor="end">%d</text>`, coord(padL-6), coord(y+4), yv[k])
	}
	fmt.Fprintf(&b, `<text class="label" x="%s" y="%s" text-anchor="middle">%s</text>`, coord(padL+plotW/2), coord(padT+plotH+40), esc(h.XLabel))
	fmt.Fprintf(&b, `<text class="label" transform="translate(14 %s) rotate(-90)" text-anchor="middle">%s</text>`, coord(padT+plotH/2), esc(h.YLabel))
	b.WriteString("</svg>")
	b.WriteString(`<ul class="legend">`)
	if !math.IsInf(lo, 0) {
		fmt.Fprintf(&b, `<li><span class="ramp" style="--a:%s;--b:%s"></span>%s: %s (light) to %s (dark)</li>`, rampColour(0), rampColour(1), esc(h.ValueLabel), num(lo), num(hi))
	}
	b.WriteString(`<li><span class="sw" style="--c:#bbbbbb"></span>fails an SLO</li><li><span class="sw" style="--c:#e8e8e8"></span>pruned (bound)</li><li>★ optimum</li></ul>`)
	return b.String()
}

// thin picks at most n evenly spaced indices of 0..count-1, always the
// first and the last, so that tick labels never overlap.
func thin(count, n int) []int {
	if n < 2 {
		n = 2
	}
	step := 1
	for count/step > n {
		step++
	}
	var out []int
	for k := 0; k < count; k += step {
		out = append(out, k)
	}
	if out[len(out)-1] != count-1 && count-1-out[len(out)-1] >= step/2+1 {
		out = append(out, count-1)
	}
	return out
}

func sortedKeys(m map[int]bool) []int {
	out := make([]int, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Ints(out)
	return out
}

func index(v []int) map[int]int {
	m := make(map[int]int, len(v))
	for i, x := range v {
		m[x] = i
	}
	return m
}

// Bars is a horizontal bar chart: one bar per name, its label at the left
// (long names never overlap).
type Bars struct {
	// ID names the figure in the page.
	ID string
	// Title heads it; Note follows it.
	Title, Note string
	// XLabel names the value with its unit.
	XLabel string
	// Names, Values and Tips are the bars.
	Names  []string
	Values []float64
	Tips   []string
}

// SVG draws the bars.
func (c *Bars) SVG() string {
	if len(c.Names) == 0 {
		return `<p class="empty">no data to draw</p>`
	}
	const barH, left = 22.0, 230.0
	hi := 0.0
	for _, v := range c.Values {
		if !math.IsNaN(v) {
			hi = math.Max(hi, v)
		}
	}
	if hi == 0 {
		hi = 1
	}
	xa := axis{lo: 0, hi: hi * 1.05, p0: left, p1: chartW - padR}
	plotH := barH * float64(len(c.Names))
	height := padT + plotH + padB
	var b strings.Builder
	fmt.Fprintf(&b, `<svg class="chart bars" viewBox="0 0 %s %s" role="img" aria-label="%s">`, coord(chartW), coord(height), esc(c.Title))
	xGrid(&b, xa, plotH)
	for i, n := range c.Names {
		y := padT + float64(i)*barH
		fmt.Fprintf(&b, `<text class="tick" x="%s" y="%s" text-anchor="end">%s</text>`, coord(left-6), coord(y+barH/2+4), esc(clip(n, 32)))
		v := c.Values[i]
		if math.IsNaN(v) {
			continue
		}
		fmt.Fprintf(&b, `<rect class="bar" x="%s" y="%s" width="%s" height="%s" fill="%s" data-tip="%s"/>`, coord(left), coord(y+3), coord(math.Max(xa.at(v)-left, 1)), coord(barH-6), Palette[0], esc(c.Tips[i]))
	}
	fmt.Fprintf(&b, `<text class="label" x="%s" y="%s" text-anchor="middle">%s</text>`, coord((left+chartW-padR)/2), coord(padT+plotH+40), esc(c.XLabel))
	b.WriteString("</svg>")
	return b.String()
}

// xGrid draws a bar chart's vertical grid lines over a plot plotH high,
// with their ticks under it.
func xGrid(b *strings.Builder, xa axis, plotH float64) {
	for _, t := range xa.ticks() {
		x := xa.at(t)
		fmt.Fprintf(b, `<line class="grid" x1="%s" y1="%s" x2="%s" y2="%s"/><text class="tick" x="%s" y="%s" text-anchor="middle">%s</text>`,
			coord(x), coord(padT), coord(x), coord(padT+plotH), coord(x), coord(padT+plotH+16), num(t))
	}
}

// clip shortens s to n runes with an ellipsis.
func clip(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}
