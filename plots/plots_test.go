package plots

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden SVG files under testdata/")

// keep, when set (PLOTS_KEEP=dir), copies every figure there as PNG too, to look at.
var keep = os.Getenv("PLOTS_KEEP")

func latencyFixture() LatencyFigure {
	f := LatencyFigure{Title: "Latency vs load", Subtitle: "coding, bloom-176b"}
	for _, m := range []string{"TTFT", "TBT", "E2E"} {
		for i, pc := range []string{"P50", "P90", "P99"} {
			f.Panels = append(f.Panels, LatencyPanel{Name: pc + " " + m, YLabel: "slowdown (×)", Limit: []float64{1.25, 1.5, 5}[i]})
		}
	}
	for s, name := range []string{"Splitwise-HH 6P/2T", "Baseline-H100 ×8"} {
		ls := LatencySeries{Name: name}
		for r := 10.0; r <= 50; r += 10 {
			ls.X = append(ls.X, r)
		}
		for p := range f.Panels {
			var ys []float64
			for i, x := range ls.X {
				y := 0.8 + x*x/1000*float64(p%3+1)*float64(s+1)
				if s == 1 && i == len(ls.X)-1 {
					y = math.NaN() // unsustainable
				}
				ys = append(ys, y)
			}
			ls.Y = append(ls.Y, ys)
		}
		f.Series = append(f.Series, ls)
	}
	return f
}

func heatmapFixture() HeatmapFigure {
	f := HeatmapFigure{Title: "Splitwise-HH at 70 req/s", ColorLabel: "binding SLO (measured / limit)", HasOptimum: true, OptPrompt: 5, OptToken: 3}
	for p := 1; p <= 8; p++ {
		for t := 1; t <= 6; t++ {
			c := HeatCell{Prompt: p, Token: t}
			switch {
			case p == 8 && t == 6:
				continue // not simulated
			case p < 3:
				c.State = Pruned
			case p+t < 8:
				c.State = Infeasible
			default:
				c.Value = 8 / float64(p+t)
			}
			f.Cells = append(f.Cells, c)
		}
	}
	return f
}

func paretoFixture() ParetoFigure {
	f := ParetoFigure{Title: "Cost vs throughput"}
	for d, name := range []string{"Splitwise-HH", "Baseline-H100"} {
		for i := 1; i <= 6; i++ {
			pt := ParetoPoint{Design: name, X: float64(i*10) / float64(d+1), Y: float64(i)*38 + float64(i%2)*20}
			if i == 5 {
				pt.Label = name
			}
			f.Points = append(f.Points, pt)
		}
	}
	return f
}

func cdfFixture() CDFFigure {
	return CDFFigure{Title: "Batched tokens", Series: []CDFSeries{
		{Name: "prompt", Tokens: []int{1500, 300, 2048, 1500}, S: []float64{1, 0.5, 2, 1}},
		{Name: "token", Tokens: []int{1, 2, 5, 40, 0}, S: []float64{3, 2, 1, 4, 9}},
	}}
}

func summaryFixture() SummaryFigure {
	nan := math.NaN()
	return SummaryFigure{Title: "Summary", Baseline: "Baseline-H100",
		Metrics: []string{"throughput", "cost", "power", "machines"},
		Panels: []SummaryPanel{
			{Title: "iso-power", Designs: []string{"Baseline-H100", "Splitwise-HH", "Splitwise-HA"},
				Values: [][]float64{{1, 2.05, nan}, {1, 1, nan}, {1, 1, nan}, {1, 1, nan}}},
			{Title: "iso-throughput", Designs: []string{"Baseline-H100", "Splitwise-HH"},
				Values: [][]float64{{1, 1}, {1, 0.54}, {1, 0.54}, {1, 0.54}}},
		}}
}

func pairsFixture() PairsFigure {
	return PairsFigure{Title: "Best design per GPU pair: cost", Subtitle: "70 req/s, least cost", Rows: []string{"H100", "H200", "B200"},
		Cols: []string{"H100", "H200", "B200", "co-located"}, XLabel: "token GPU", YLabel: "prompt GPU", ColorLabel: "cost ($/h)",
		Cells: []PairCell{
			{Row: 0, Col: 0, Value: 370, Text: "$370/h\ntp2/tp4 37P/1T"}, {Row: 0, Col: 1, Value: 374, Text: "$374/h"},
			{Row: 0, Col: 2, Value: 376, Text: "$376/h"}, {Row: 0, Col: 3, Value: 608, Text: "$608/h\ntp4 ×32"},
			{Row: 1, Col: 0, Value: 525, Text: "$525/h"}, {Row: 1, Col: 1, Value: math.NaN(), Text: "none"},
			{Row: 1, Col: 3, Value: math.NaN(), Text: "≥ $429/h\n(bound)", Bounded: true},
			{Row: 2, Col: 2, Value: 750, Text: "$750/h"},
		},
		HasWinner: true, WinRow: 0, WinCol: 0}
}

// golden draws a figure to SVG, compares it with testdata/NAME.svg, and
// checks that drawing it again gives the same bytes and that PNG works.
func golden(t *testing.T, name string, draw func(path string) error) {
	t.Helper()
	dir := t.TempDir()
	svg := filepath.Join(dir, name+".svg")
	if err := draw(svg); err != nil {
		t.Fatal(err)
	}
	got, _ := os.ReadFile(svg)
	if err := draw(svg); err != nil {
		t.Fatal(err)
	}
	again, _ := os.ReadFile(svg)
	if !bytes.Equal(got, again) {
		t.Errorf("%s: two drawings of the same input differ", name)
	}
	png := filepath.Join(dir, name+".png")
	if err := draw(png); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(png); !bytes.HasPrefix(b, []byte("\x89PNG")) {
		t.Errorf("%s.png is not a PNG", name)
	}
	if keep != "" {
		b, _ := os.ReadFile(png)
		os.WriteFile(filepath.Join(keep, name+".png"), b, 0o644)
	}
	file := filepath.Join("testdata", name+".svg")
	if *update {
		if err := os.WriteFile(file, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(file)
	if err != nil {
		t.Fatalf("%v (run go test ./plots -update)", err)
	}
	if !bytes.Equal(got, want) {
		os.WriteFile(file+".got", got, 0o644)
		t.Errorf("%s differs from %s: see %s.got (go test ./plots -update accepts it)", name, file, file)
	}
}

func TestGolden(t *testing.T) {
	t.Parallel()
	golden(t, "latency", func(p string) error { return Latency(p, latencyFixture()) })
	golden(t, "heatmap", func(p string) error { return Heatmap(p, heatmapFixture()) })
	golden(t, "pareto", func(p string) error { return Pareto(p, paretoFixture()) })
	golden(t, "cdf", func(p string) error { return CDF(p, cdfFixture()) })
	golden(t, "summary", func(p string) error { return Summary(p, summaryFixture()) })
	golden(t, "pairs", func(p string) error { return Pairs(p, pairsFixture()) })
	golden(t, "bars", func(p string) error {
		return Bars(p, BarsFigure{Title: "Cost", YLabel: "cost ($/h)", Names: []string{"Baseline-H100", "Splitwise-HH", "Splitwise-HA"},
			Values: []float64{2052, 1102, math.NaN()}, Labels: []string{"×54", "22+7", ""}})
	})
}

func TestRejects(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	svg := filepath.Join(dir, "x.svg")
	allBad := heatmapFixture()
	for i := range allBad.Cells {
		allBad.Cells[i].State = Infeasible
	}
	nanLatency := latencyFixture()
	for _, s := range nanLatency.Series {
		for _, ys := range s.Y {
			for i := range ys {
				ys[i] = math.NaN()
			}
		}
	}
	for _, tc := range []struct {
		name string
		err  error
		want error
	}{
		{"empty latency", Latency(svg, LatencyFigure{}), ErrNoData},
		{"all-NaN latency", Latency(svg, nanLatency), ErrNoData},
		{"empty heatmap", Heatmap(svg, HeatmapFigure{}), ErrNoData},
		{"infeasible heatmap", Heatmap(svg, allBad), ErrNoFeasible},
		{"empty pareto", Pareto(svg, ParetoFigure{}), ErrNoData},
		{"zero pareto", Pareto(svg, ParetoFigure{Points: []ParetoPoint{{Design: "x", X: 0, Y: math.Inf(1)}}}), ErrNoFeasible},
		{"empty cdf", CDF(svg, CDFFigure{Series: []CDFSeries{{Name: "x", Tokens: []int{0}, S: []float64{1}}}}), ErrNoData},
		{"empty summary", Summary(svg, SummaryFigure{}), ErrNoData},
		{"empty bars", Bars(svg, BarsFigure{}), ErrNoData},
		{"nan bars", Bars(svg, BarsFigure{Names: []string{"a"}, Values: []float64{math.NaN()}}), ErrNoFeasible},
		{"nan summary", Summary(svg, SummaryFigure{Metrics: []string{"a"}, Panels: []SummaryPanel{{Designs: []string{"d"}, Values: [][]float64{{math.NaN()}}}}}), ErrNoFeasible},
	} {
		if !errors.Is(tc.err, tc.want) {
			t.Errorf("%s: got %v, want %v", tc.name, tc.err, tc.want)
		}
	}
	if _, err := os.Stat(svg); err == nil {
		t.Error("a rejected figure left a file behind")
	}
	err := Pareto(filepath.Join(dir, "fig.pdf"), paretoFixture())
	if err == nil || !strings.Contains(err.Error(), "fig.pdf") || !strings.Contains(err.Error(), ".png or .svg") {
		t.Errorf("bad extension: %v", err)
	}
	if err := Latency(filepath.Join(dir, "no", "such", "dir.svg"), latencyFixture()); err == nil {
		t.Error("writing into a missing directory succeeded")
	}
}

// TestCropHeatmap: a large space is cropped around its optimum, the axes
// cover the window, and the subtitle says how much was left out; a small
// one is drawn whole.
func TestCropHeatmap(t *testing.T) {
	t.Parallel()
	var cells []HeatCell
	for p := 1; p <= 160; p += 3 {
		for q := 1; q <= 160; q += 3 {
			st := Infeasible
			if p >= 10 && q >= 4 {
				st = Feasible
			}
			cells = append(cells, HeatCell{Prompt: p, Token: q, State: st, Value: float64(p + q)})
		}
	}
	f := cropHeatmap(HeatmapFigure{Cells: cells, HasOptimum: true, OptPrompt: 10, OptToken: 4, Subtitle: "s"})
	if len(f.Cells) >= len(cells) || len(f.Cells) == 0 {
		t.Fatalf("kept %d of %d cells", len(f.Cells), len(cells))
	}
	for _, c := range f.Cells {
		if c.Prompt > f.MaxPrompt || c.Token > f.MaxToken {
			t.Errorf("cell %+v outside the window %d × %d", c, f.MaxPrompt, f.MaxToken)
		}
	}
	if f.MaxPrompt < 18 || f.MaxToken < 12 || f.MaxPrompt > 60 {
		t.Errorf("window %d × %d: expected at least 8 cells beyond the optimum (10, 4), well short of 160", f.MaxPrompt, f.MaxToken)
	}
	if !strings.Contains(f.Subtitle, "cropped to") || !strings.HasPrefix(f.Subtitle, "s\n") {
		t.Errorf("subtitle %q", f.Subtitle)
	}
	var few []HeatCell
	for p := 1; p <= 30; p++ {
		few = append(few, HeatCell{Prompt: p, Token: 31 - p, State: Feasible, Value: 1})
	}
	small := HeatmapFigure{Cells: few, HasOptimum: true, OptPrompt: 1, OptToken: 30}
	if g := cropHeatmap(small); len(g.Cells) != 30 || g.Subtitle != "" {
		t.Errorf("a small space was cropped: %d cells, %q", len(g.Cells), g.Subtitle)
	}
	if g := cropHeatmap(HeatmapFigure{Cells: cells}); len(g.Cells) != len(cells) {
		t.Error("a space without an optimum was cropped")
	}
}

// TestParetoFoldsManyDesigns: with more designs than MaxNamedSeries, the
// figure is written and names at most MaxNamedSeries designs.
func TestParetoFoldsManyDesigns(t *testing.T) {
	t.Parallel()
	var f ParetoFigure
	for d := 0; d < 40; d++ {
		for k := 1; k <= 3; k++ {
			pt := ParetoPoint{Design: fmt.Sprintf("design-%02d", d), X: float64(10 * k), Y: float64(100*k + d)}
			if k == 3 {
				pt.Label = pt.Design
			}
			f.Points = append(f.Points, pt)
		}
	}
	path := filepath.Join(t.TempDir(), "p.svg")
	if err := Pareto(path, f); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	named := 0
	for d := 0; d < 40; d++ {
		if strings.Contains(string(b), fmt.Sprintf("design-%02d", d)) {
			named++
		}
	}
	if named > MaxNamedSeries {
		t.Errorf("%d designs named, at most %d expected", named, MaxNamedSeries)
	}
	if !strings.Contains(string(b), "+29 more designs, see CSV") {
		t.Error("no note of the folded designs")
	}
}
