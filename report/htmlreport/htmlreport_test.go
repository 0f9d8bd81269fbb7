package htmlreport

import (
	"bytes"
	"encoding/csv"
	"io"
	"math"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"splitplan/search"
)

func TestLinearTicksRound(t *testing.T) {
	for _, tc := range []struct {
		lo, hi float64
		want   []float64
	}{
		{0, 10, []float64{0, 2, 4, 6, 8, 10}},
		{1140, 2204, []float64{1200, 1400, 1600, 1800, 2000, 2200}},
		{0.5, 0.9, []float64{0.5, 0.6, 0.7, 0.8, 0.9}},
	} {
		got := linearTicks(tc.lo, tc.hi)
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("linearTicks(%g, %g) = %v, want %v", tc.lo, tc.hi, got, tc.want)
		}
	}
	if got := logTicks(0.02, 30); !reflect.DeepEqual(got, []float64{0.1, 1, 10}) {
		t.Errorf("logTicks(0.02, 30) = %v", got)
	}
}

func TestNum(t *testing.T) {
	for v, want := range map[float64]string{0: "0", 1140: "1140", 341.25: "341.2", 0.0544: "0.0544", 2.5e7: "2.5e+07", -3: "-3", 70: "70"} {
		if got := num(v); got != want {
			t.Errorf("num(%g) = %q, want %q", v, got, want)
		}
	}
}

// TestFrontier: the frontier keeps exactly the points no other beats on
// both axes, sorted by x.
func TestFrontier(t *testing.T) {
	pts := []*search.Point{
		{Design: "a", CostUSDPerH: 10, PowerKW: 5},
		{Design: "b", CostUSDPerH: 8, PowerKW: 7},
		{Design: "c", CostUSDPerH: 12, PowerKW: 6}, // beaten by a
		{Design: "d", CostUSDPerH: 15, PowerKW: 4},
		{Design: "e", CostUSDPerH: 8, PowerKW: 9}, // beaten by b
	}
	xy := func(p *search.Point) (float64, float64) { return p.CostUSDPerH, p.PowerKW }
	var got []string
	for _, p := range frontier(pts, xy, false) {
		got = append(got, p.Design)
	}
	if want := []string{"b", "a", "d"}; !reflect.DeepEqual(got, want) {
		t.Errorf("frontier %v, want %v", got, want)
	}
	// Throughput: less cost and more rate wins (e beats every other).
	rate := func(p *search.Point) (float64, float64) { return p.CostUSDPerH, p.PowerKW }
	got = nil
	for _, p := range frontier(pts, rate, true) {
		got = append(got, p.Design)
	}
	if want := []string{"e"}; !reflect.DeepEqual(got, want) {
		t.Errorf("max-y frontier %v, want %v", got, want)
	}
}

// TestCDFPoints: the thinned CDF keeps the first and last values, rises,
// and ends at 1.
func TestCDFPoints(t *testing.T) {
	var v []float64
	for i := 1000; i >= 1; i-- {
		v = append(v, float64(i%97)+0.5)
	}
	pts := cdfPoints(v, 50, "x", "s")
	if len(pts) > 60 || len(pts) < 20 {
		t.Fatalf("%d points for n=50", len(pts))
	}
	if pts[len(pts)-1].Y != 1 || pts[len(pts)-1].X != 96.5 {
		t.Errorf("last point %+v, want the maximum at fraction 1", pts[len(pts)-1])
	}
	for i := 1; i < len(pts); i++ {
		if pts[i].X <= pts[i-1].X || pts[i].Y <= pts[i-1].Y {
			t.Fatalf("not increasing at %d: %+v %+v", i, pts[i-1], pts[i])
		}
	}
}

// TestTextFields: the labelled lines of a printed report become the
// question, the best line the answer, the timing is dropped and the
// tables are skipped.
func TestTextFields(t *testing.T) {
	text := "goal      least cost serving 70 req/s\n\nDESIGN  PROMPT\nBaseline-A100  125\n\nbest      Splitwise-HH: 23 prompt + 7 token machines\n" +
		"perf      profiled (x; held-out MAPE 3.06% prompt): HH\nsearch    137 simulations of 137 points out of 102720 in the design spaces (0.1%), 1.968s on 2 workers\n"
	fields, answer := textFields(text)
	want := []Field{{"goal", "least cost serving 70 req/s"}, {"perf", "profiled (x; held-out MAPE 3.06% prompt): HH"},
		{"search", "137 simulations of 137 points out of 102720 in the design spaces (0.1%)"}}
	if !reflect.DeepEqual(fields, want) {
		t.Errorf("fields %q, want %q", fields, want)
	}
	if answer != "Best: Splitwise-HH: 23 prompt + 7 token machines" {
		t.Errorf("answer %q", answer)
	}
}

// TestTableOfIsTheCSV: a table holds the writer's CSV cell for cell,
// quoting and all.
func TestTableOfIsTheCSV(t *testing.T) {
	write := func(w io.Writer) error {
		cw := csv.NewWriter(w)
		cw.Write([]string{"design", "note"})
		cw.Write([]string{"HH", `a "quoted", note`})
		cw.Write([]string{"Baseline-H100", ""})
		cw.Flush()
		return cw.Error()
	}
	tb, err := TableOf("t", "--out", write)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	write(&buf)
	recs, _ := ReadCSV(&buf)
	if !reflect.DeepEqual(append([][]string{tb.Columns}, tb.Rows...), recs) {
		t.Errorf("table %q, CSV %q", tb, recs)
	}
}

// TestWriteEscapes: text from the run is escaped in the page and the
// embedded JSON cannot close its script element.
func TestWriteEscapes(t *testing.T) {
	r := &Report{Title: "<b>x</b>", Answer: "a & b", Tables: []Table{{Name: "t", Flag: "--out", Columns: []string{"c"}, Rows: [][]string{{"</script><script>alert(1)</script>"}}}},
		Sections: []Section{{Title: "s", Figures: []Figure{&Chart{ID: "c", Title: "t", Series: []Series{{Name: "<i>", Markers: true, Points: []Pt{{X: 1, Y: 2, Tip: `"quoted"`}, {X: math.NaN(), Y: 1}}}}}}}}}
	var b strings.Builder
	if err := r.Write(&b); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	if strings.Count(out, "</script>") != 2 || strings.Contains(out, "<b>x</b>") || strings.Contains(out, "<i>") || strings.Contains(out, `data-tip=""quoted""`) {
		t.Errorf("unescaped text in the page:\n%s", out)
	}
	if strings.Count(out, `<circle class="pt"`) != 1 {
		t.Error("the NaN point was drawn or the finite one was not")
	}
}

// TestTornadoSVG: a cheaper plan is a bar left of the zero axis, a dearer
// one right of it, an unchanged one a hoverable sliver on the axis, an
// input with no plan says so; lowered inputs sit above raised ones; the
// largest step is drawn first (behind) in the pale colour; no rows, no
// figure.
func TestTornadoSVG(t *testing.T) {
	if s := (&Tornado{}).SVG(); !strings.Contains(s, "no data") {
		t.Errorf("empty tornado: %q", s)
	}
	tr := &Tornado{Title: "t", Rows: []TornadoRow{
		{Name: "prompt time", Bars: []TornadoBar{{Step: -0.25, Change: -20, Tip: "a"}, {Step: -0.1, Change: -5, Tip: "b"}, {Step: 0.1, Change: 0, Tip: "c"}, {Step: 0.25, Change: 30, Tip: "d"}}},
		{Name: "arrival rate", Bars: []TornadoBar{{Step: -0.25, Change: math.NaN(), Tip: "e"}}},
	}}
	s := tr.SVG()
	rect := func(tip string) (x, y, w float64, fill string) {
		t.Helper()
		i := strings.Index(s, `data-tip="`+tip+`"`)
		if i < 0 {
			t.Fatalf("no element with tip %s", tip)
		}
		j := strings.LastIndex(s[:i], "<rect ")
		if j < 0 {
			t.Fatalf("tip %s is not on a bar", tip)
		}
		attr := func(name string) string {
			k := strings.Index(s[j:i], name+`="`)
			if k < 0 {
				t.Fatalf("tip %s: no %s", tip, name)
			}
			v := s[j+k+len(name)+2:]
			return v[:strings.IndexByte(v, '"')]
		}
		f := func(name string) float64 {
			v, err := strconv.ParseFloat(attr(name), 64)
			if err != nil {
				t.Fatal(err)
			}
			return v
		}
		return f("x"), f("y"), f("width"), attr("fill")
	}
	ax, _, aw, afill := rect("a")
	bx, by, bw, bfill := rect("b")
	cx, cy, cw, _ := rect("c")
	dx, _, dw, _ := rect("d")
	zero := cx + cw/2
	if !(ax+aw <= zero+0.1 && bx+bw <= zero+0.1 && ax < bx) {
		t.Errorf("cheaper plans: bars at %v+%v and %v+%v, want left of the axis at %v, the larger further", ax, aw, bx, bw, zero)
	}
	if !(dx >= zero-0.1 && dw > aw) {
		t.Errorf("the dearer plan: bar at %v+%v, want right of %v and wider than the 20%% one", dx, dw, zero)
	}
	if cw != 2 {
		t.Errorf("unchanged plan: width %v, want a 2-unit sliver", cw)
	}
	if !(by < cy) {
		t.Errorf("the lowered input's bar (y %v) is not above the raised one's (y %v)", by, cy)
	}
	if afill == bfill || afill != tornadoDown[1] || bfill != tornadoDown[0] {
		t.Errorf("fills %s (25%%) and %s (10%%), want pale %s and full %s", afill, bfill, tornadoDown[1], tornadoDown[0])
	}
	if strings.Index(s, `data-tip="a"`) > strings.Index(s, `data-tip="b"`) {
		t.Error("the 10% bar is drawn before the 25% one: the wider bar would hide it")
	}
	if !strings.Contains(s, `data-tip="e">no plan</text>`) {
		t.Error("an input with no plan does not say so")
	}
}
