package plots

import (
	"bytes"
	"errors"
	"fmt"
	"image"
	"image/color"
	imgdraw "image/draw"
	"image/png"
	"io"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
	_ "gonum.org/v1/plot/vg/vgsvg" // svg
)

// ErrNoData reports an input with nothing to draw.
var ErrNoData = errors.New("plots: nothing to plot")

// ErrNoFeasible reports an input whose every point failed its SLOs, where
// the figure shows feasible points only.
var ErrNoFeasible = errors.New("plots: no feasible point")

// Formats lists the accepted file extensions.
var Formats = []string{".png", ".svg"}

// CheckPath reports whether path names a file format the package writes
// (by its extension: .png or .svg, any case).
func CheckPath(path string) error {
	_, err := formatOf(path)
	return err
}

func formatOf(path string) (string, error) {
	ext := strings.ToLower(filepath.Ext(path))
	for _, f := range Formats {
		if ext == f {
			return ext[1:], nil
		}
	}
	return "", fmt.Errorf("plots: %s: unknown figure format %q: the name must end in %s", path, filepath.Ext(path), strings.Join(Formats, " or "))
}

// Colors used for series, in order (a colour-blind-friendly set).
var palette = []color.Color{
	color.RGBA{0x1f, 0x77, 0xb4, 0xff}, // blue
	color.RGBA{0xff, 0x7f, 0x0e, 0xff}, // orange
	color.RGBA{0x2c, 0xa0, 0x2c, 0xff}, // green
	color.RGBA{0xd6, 0x27, 0x28, 0xff}, // red
	color.RGBA{0x94, 0x67, 0xbd, 0xff}, // purple
	color.RGBA{0x8c, 0x56, 0x4b, 0xff}, // brown
	color.RGBA{0xe3, 0x77, 0xc2, 0xff}, // pink
	color.RGBA{0x7f, 0x7f, 0x7f, 0xff}, // grey
	color.RGBA{0xbc, 0xbd, 0x22, 0xff}, // olive
	color.RGBA{0x17, 0xbe, 0xcf, 0xff}, // cyan
}

func seriesColor(i int) color.Color { return palette[i%len(palette)] }

var (
	black     = color.Black
	sloColor  = color.RGBA{0xb0, 0x00, 0x00, 0xff}
	greyCell  = color.RGBA{0xb4, 0xb4, 0xb4, 0xff}
	prunedCel = color.RGBA{0xdd, 0xdd, 0xdd, 0xff}
)

func textStyle(size float64, align text.XAlignment) text.Style {
	return text.Style{
		Color:   black,
		Font:    font.From(plot.DefaultFont, vg.Points(size)),
		XAlign:  align,
		YAlign:  draw.YTop,
		Handler: plot.DefaultTextHandler,
	}
}

// newPlot is a plot with the house fonts.
func newPlot(title, xlabel, ylabel string) *plot.Plot {
	p := plot.New()
	p.Title.Text = title
	p.Title.TextStyle.Font.Size = vg.Points(11)
	p.X.Label.Text = xlabel
	p.Y.Label.Text = ylabel
	p.X.Label.TextStyle.Font.Size = vg.Points(10)
	p.Y.Label.TextStyle.Font.Size = vg.Points(10)
	p.X.Tick.Label.Font.Size = vg.Points(9)
	p.Y.Tick.Label.Font.Size = vg.Points(9)
	p.BackgroundColor = nil
	return p
}

// newLegend is a legend drawn outside the data area, in a column of its own.
func newLegend() *plot.Legend {
	l := plot.NewLegend()
	l.Top, l.Left = true, true
	l.TextStyle.Font.Size = vg.Points(9)
	l.ThumbnailWidth = vg.Points(20)
	l.Padding = vg.Points(3)
	return &l
}

// figure is the layout of every figure: a title and subtitle at the top, a
// legend column on the right, and the body in the rest.
type figure struct {
	W, H            vg.Length
	Title, Subtitle string
	Legend          *plot.Legend
	Body            func(c draw.Canvas)
}

// save draws f and writes it to path atomically.
func (f figure) save(path string) error {
	format, err := formatOf(path)
	if err != nil {
		return err
	}
	var cw vg.CanvasWriterTo
	var img *vgimg.Canvas
	if format == "png" {
		img = vgimg.NewWith(vgimg.UseWH(f.W, f.H), vgimg.UseDPI(96))
		cw = vgimg.PngCanvas{Canvas: img}
	} else if cw, err = draw.NewFormattedCanvas(f.W, f.H, format); err != nil {
		return fmt.Errorf("plots: %s: %w", path, err)
	}
	if img != nil {
		f.draw(draw.New(cw))
		return writeAtomic(path, compactPNG{img.Image()})
	}
	tw := &textWidths{CanvasWriterTo: cw}
	f.draw(draw.New(tw))
	var buf bytes.Buffer
	if _, err := cw.WriteTo(&buf); err != nil {
		return fmt.Errorf("plots: %s: %w", path, err)
	}
	out, err := fixTextLengths(buf.Bytes(), tw.widths)
	if err != nil {
		return fmt.Errorf("plots: %s: %w", path, err)
	}
	return writeAtomic(path, bytes.NewBuffer(out))
}

// textWidths is an SVG canvas that keeps the width, in the font it was
// laid out with, of every string drawn, in order.
type textWidths struct {
	vg.CanvasWriterTo
	widths []vg.Length
}

// FillString implements vg.Canvas.
func (t *textWidths) FillString(f font.Face, pt vg.Point, s string) {
	t.widths = append(t.widths, f.Width(s))
	t.CanvasWriterTo.FillString(f, pt, s)
}

// fixTextLengths gives every <text> element of an SVG the width its
// string was laid out with (textLength, glyphs and spacing adjusted): a
// viewer without the layout's font (Liberation Serif) draws the text in
// a wider or narrower one, which would otherwise run out of the figure
// or into its neighbours.
func fixTextLengths(svg []byte, widths []vg.Length) ([]byte, error) {
	tag := []byte("<text ")
	if n := bytes.Count(svg, tag); n != len(widths) {
		return nil, fmt.Errorf("the SVG has %d text elements, %d strings were drawn", n, len(widths))
	}
	var out bytes.Buffer
	for _, w := range widths {
		i := bytes.Index(svg, tag)
		out.Write(svg[:i+len(tag)])
		fmt.Fprintf(&out, `textLength="%.5g" lengthAdjust="spacingAndGlyphs" `, w.Points())
		svg = svg[i+len(tag):]
	}
	out.Write(svg)
	return out.Bytes(), nil
}

// draw draws f on dc, which is f.W by f.H.
func (f figure) draw(dc draw.Canvas) {
	dc.SetColor(color.White)
	dc.Fill(dc.Rectangle.Path())
	pad := vg.Points(8)
	dc = draw.Crop(dc, pad, -pad, pad, -pad)
	if f.Title != "" {
		sty := textStyle(14, draw.XCenter)
		dc.FillText(sty, vg.Point{X: dc.Center().X, Y: dc.Max.Y}, f.Title)
		dc.Max.Y -= sty.Rectangle(f.Title).Size().Y + vg.Points(4)
	}
	if f.Subtitle != "" {
		sty := textStyle(9, draw.XCenter)
		sty.Color = color.Gray{0x40}
		// Lines are wrapped at 85% of the width: an SVG viewer may draw
		// the text in a font wider than the one it was measured with.
		for _, line := range wrapText(sty, f.Subtitle, (dc.Max.X-dc.Min.X)*0.85) {
			dc.FillText(sty, vg.Point{X: dc.Center().X, Y: dc.Max.Y}, line)
			dc.Max.Y -= sty.Rectangle(line).Size().Y + vg.Points(2)
		}
	}
	dc.Max.Y -= vg.Points(6)
	if f.Legend != nil {
		// A tenth more than the legend's width: room for an SVG viewer's
		// wider font at the right edge.
		w := f.Legend.Rectangle(dc).Size().X*1.1 + vg.Points(10)
		lc := dc
		lc.Min.X = dc.Max.X - w + vg.Points(10)
		lc.Max.Y -= vg.Points(14)
		f.Legend.Draw(lc)
		dc.Max.X -= w
	}
	f.Body(dc)
}

// wrapText splits text at its newlines and then at spaces so that no line
// is wider than width in style sty (a single word wider than width keeps a
// line of its own). A paragraph that needs several lines gets lines of
// even widths (the narrowest width that still needs no more lines), not
// a full line and a last word alone.
func wrapText(sty text.Style, s string, width vg.Length) []string {
	var out []string
	for _, para := range strings.Split(s, "\n") {
		lines := wrapGreedy(sty, para, width)
		if len(lines) > 1 {
			lo, hi := vg.Length(0), width
			for range 24 {
				mid := (lo + hi) / 2
				if len(wrapGreedy(sty, para, mid)) > len(lines) {
					lo = mid
				} else {
					hi = mid
				}
			}
			lines = wrapGreedy(sty, para, hi)
		}
		out = append(out, lines...)
	}
	return out
}

// wrapGreedy fills each line of para with as many words as fit in width.
func wrapGreedy(sty text.Style, para string, width vg.Length) []string {
	var out []string
	line := ""
	for _, w := range strings.Fields(para) {
		try := w
		if line != "" {
			try = line + " " + w
		}
		if line != "" && sty.Rectangle(try).Size().X > width {
			out = append(out, line)
			line = w
			continue
		}
		line = try
	}
	return append(out, line)
}

// writeAtomic writes w to path through a temporary file in the same
// directory and a rename; a symlink's target is replaced (the symlink
// stays), and a FIFO or device is written directly.
func writeAtomic(path string, w io.WriterTo) error {
	if resolved, err := filepath.EvalSymlinks(path); err == nil {
		path = resolved
	}
	if st, err := os.Stat(path); err == nil && !st.Mode().IsRegular() && !st.IsDir() {
		f, err := os.OpenFile(path, os.O_WRONLY, 0)
		if err != nil {
			return fmt.Errorf("plots: cannot write %s: %w", path, err)
		}
		if _, err := w.WriteTo(f); err != nil {
			f.Close()
			return fmt.Errorf("plots: writing %s: %w", path, err)
		}
		return f.Close()
	}
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp*")
	if err != nil {
		return fmt.Errorf("plots: cannot write %s: %w", path, err)
	}
	tmp := f.Name()
	defer os.Remove(tmp)
	if err := f.Chmod(0o644); err != nil {
		f.Close()
		return fmt.Errorf("plots: writing %s: %w", path, err)
	}
	if _, err := w.WriteTo(f); err != nil {
		f.Close()
		return fmt.Errorf("plots: writing %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("plots: writing %s: %w", path, err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("plots: writing %s: %w", path, err)
	}
	return nil
}

// finite reports whether v is a number gonum/plot can draw.
func finite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }

// swatch is a legend thumbnail: a filled square with an optional outline.
type swatch struct {
	Fill    color.Color
	Outline color.Color
}

// Thumbnail implements plot.Thumbnailer.
func (s swatch) Thumbnail(c *draw.Canvas) {
	side := c.Max.Y - c.Min.Y
	r := vg.Rectangle{Min: vg.Point{X: c.Min.X, Y: c.Min.Y}, Max: vg.Point{X: c.Min.X + side, Y: c.Max.Y}}
	pts := []vg.Point{r.Min, {X: r.Max.X, Y: r.Min.Y}, r.Max, {X: r.Min.X, Y: r.Max.Y}}
	if s.Fill != nil {
		c.FillPolygon(s.Fill, pts)
	}
	if s.Outline != nil {
		c.StrokeLines(draw.LineStyle{Color: s.Outline, Width: vg.Points(0.5)}, append(pts, pts[0]))
	}
}

// glyphThumb is a legend thumbnail of one glyph.
type glyphThumb struct{ draw.GlyphStyle }

// Thumbnail implements plot.Thumbnailer.
func (g glyphThumb) Thumbnail(c *draw.Canvas) { c.DrawGlyph(g.GlyphStyle, c.Center()) }

// starGlyph draws a five-pointed star.
type starGlyph struct{}

// DrawGlyph implements draw.GlyphDrawer.
func (starGlyph) DrawGlyph(c *draw.Canvas, sty draw.GlyphStyle, pt vg.Point) {
	var pts []vg.Point
	for i := 0; i < 10; i++ {
		r := sty.Radius
		if i%2 == 1 {
			r *= 0.45
		}
		a := math.Pi/2 + float64(i)*math.Pi/5
		pts = append(pts, vg.Point{X: pt.X + r*vg.Length(math.Cos(a)), Y: pt.Y + r*vg.Length(math.Sin(a))})
	}
	c.FillPolygon(sty.Color, pts)
	c.StrokeLines(draw.LineStyle{Color: black, Width: vg.Points(0.6)}, append(pts, pts[0]))
}

var goldStar = color.RGBA{0xff, 0xd7, 0x00, 0xff}

// fade lightens a colour for background points.
func fade(c color.Color) color.Color {
	r, g, b, _ := c.RGBA()
	l := func(v uint32) uint8 { return uint8(((v >> 8) + 2*0xff) / 3) }
	return color.RGBA{l(r), l(g), l(b), 0xff}
}

// colorAlpha returns c with alpha a (premultiplied).
func colorAlpha(c color.Color, a uint8) color.Color {
	r, g, b, _ := c.RGBA()
	f := float64(a) / 0xff
	return color.RGBA{uint8(float64(r>>8) * f), uint8(float64(g>>8) * f), uint8(float64(b>>8) * f), a}
}

// compactPNG encodes an image as a paletted PNG of at most 256 colours
// (the most used ones; the rest map to the nearest), which keeps figures
// a few tens of kilobytes.
type compactPNG struct{ img image.Image }

// WriteTo implements io.WriterTo.
func (c compactPNG) WriteTo(w io.Writer) (int64, error) {
	b := c.img.Bounds()
	count := map[color.RGBA]int{}
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			r, g, bl, a := c.img.At(x, y).RGBA()
			count[color.RGBA{uint8(r >> 8), uint8(g >> 8), uint8(bl >> 8), uint8(a >> 8)}]++
		}
	}
	cols := make([]color.RGBA, 0, len(count))
	for k := range count {
		cols = append(cols, k)
	}
	sort.Slice(cols, func(i, j int) bool {
		if count[cols[i]] != count[cols[j]] {
			return count[cols[i]] > count[cols[j]]
		}
		a, b := cols[i], cols[j]
		return uint32(a.R)<<24|uint32(a.G)<<16|uint32(a.B)<<8|uint32(a.A) < uint32(b.R)<<24|uint32(b.G)<<16|uint32(b.B)<<8|uint32(b.A)
	})
	if len(cols) > 256 {
		cols = cols[:256]
	}
	pal := make(color.Palette, len(cols))
	for i, c := range cols {
		pal[i] = c
	}
	out := image.NewPaletted(b, pal)
	imgdraw.Draw(out, b, c.img, b.Min, imgdraw.Src)
	cw := &countWriter{w: w}
	err := (&png.Encoder{CompressionLevel: png.BestCompression}).Encode(cw, out)
	return cw.n, err
}

type countWriter struct {
	w io.Writer
	n int64
}

func (c *countWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

// writeFigure checks path, lays f out with layout and writes the figure
// there: what every figure's writer (Bars, CDF, Heatmap, ...) does.
func writeFigure[F any](path string, f F, layout func(F) (figure, error)) error {
	if err := CheckPath(path); err != nil {
		return err
	}
	fig, err := layout(f)
	if err != nil {
		return err
	}
	return fig.save(path)
}
