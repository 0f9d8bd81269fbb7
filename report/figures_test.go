package report

import (
	"errors"
	"fmt"
	"math"
	"reflect"
	"slices"
	"strings"
	"testing"

	"splitplan/plots"
)

// pt is a hand-made point; slack NaN when none.
func pt(design string, prompt, token int, rps, cost float64, feasible bool, slack float64) PointRec {
	return PointRec{Design: design, Prompt: prompt, Token: token, RPS: rps, Cost: cost, Power: cost / 4,
		Feasible: feasible, Slack: slack, Binding: "ttft_p99"}
}

// pruned is a hand-made point rejected by the capacity bound.
func pruned(design string, prompt, token int, rps, cost float64) PointRec {
	return PointRec{Design: design, Prompt: prompt, Token: token, RPS: rps, Cost: cost, Power: cost / 4,
		Pruned: true, Binding: "capacity_bound", Slack: math.NaN()}
}

// cellsEqual compares cells, NaN values equal.
func cellsEqual(a, b []plots.HeatCell) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].Prompt != b[i].Prompt || a[i].Token != b[i].Token || a[i].State != b[i].State || !same(a[i].Value, b[i].Value) {
			return false
		}
	}
	return true
}

// onePoints is one design at one rate, with a point of another design.
func onePoints() []PointRec {
	return []PointRec{
		pt("Splitwise-HH", 1, 1, 5, 76, false, -0.5),
		pt("Baseline-H100", 2, 0, 5, 76, true, 0.9),
		pt("Splitwise-HH", 2, 1, 5, 114, true, 0.2),
		pt("Splitwise-HH", 1, 2, 5, 100, true, 0.1),
		pt("Splitwise-HH", 2, 2, 5, 152, true, 0.25),
		pruned("Splitwise-HH", 3, 1, 5, 152),
	}
}

func TestHeatmapFigureOneRate(t *testing.T) {
	t.Parallel()
	f, err := HeatmapFigure(HeatmapInput{Points: onePoints(), Design: "splitwise-hh", RPS: math.NaN(), GridPoints: 9, Source: "test points"})
	if err != nil {
		t.Fatal(err)
	}
	nan := math.NaN()
	want := []plots.HeatCell{
		{Prompt: 1, Token: 1, State: plots.Infeasible, Value: nan},
		{Prompt: 2, Token: 1, State: plots.Feasible, Value: 0.8},
		{Prompt: 1, Token: 2, State: plots.Feasible, Value: 0.9},
		{Prompt: 2, Token: 2, State: plots.Feasible, Value: 0.75},
		{Prompt: 3, Token: 1, State: plots.Pruned, Value: nan},
	}
	if !cellsEqual(f.Cells, want) {
		t.Errorf("cells\n%+v\nwant\n%+v", f.Cells, want)
	}
	// No optimum given: the cheapest feasible cell, (1, 2) at $100/h.
	if !f.HasOptimum || f.OptPrompt != 1 || f.OptToken != 2 {
		t.Errorf("star at %v (%d, %d), want (1, 2)", f.HasOptimum, f.OptPrompt, f.OptToken)
	}
	if f.Title != "Design space of splitwise-hh, at 5 req/s" {
		t.Errorf("title %q", f.Title)
	}
	wantSub := "test points\n5 points evaluated (3 feasible, 1 pruned by a capacity bound) of 9 in the design space;" +
		" white cells were not simulated (pruned search; --exhaustive fills the grid)\n★ cheapest feasible point;"
	if !strings.HasPrefix(f.Subtitle, wantSub) {
		t.Errorf("subtitle\n%s\nwant it to start\n%s", f.Subtitle, wantSub)
	}
	if !strings.Contains(f.ColorLabel, "measured / limit") {
		t.Errorf("colour label %q", f.ColorLabel)
	}

	// Coloured by cost, with the search's optimum starred.
	f, err = HeatmapFigure(HeatmapInput{Points: onePoints(), Design: "Splitwise-HH", RPS: 5, Color: ColorCost, Source: "s",
		Optimum: &OptimumRec{Design: "Splitwise-HH", Prompt: 2, Token: 2, Feasible: true}, GridPoints: 5, Exhaustive: true})
	if err != nil {
		t.Fatal(err)
	}
	want[1].Value, want[2].Value, want[3].Value = 114, 100, 152
	if !cellsEqual(f.Cells, want) {
		t.Errorf("cost cells\n%+v\nwant\n%+v", f.Cells, want)
	}
	if !f.HasOptimum || f.OptPrompt != 2 || f.OptToken != 2 {
		t.Errorf("star at (%d, %d), want the given optimum (2, 2)", f.OptPrompt, f.OptToken)
	}
	if wantSub := "s\n5 points evaluated (3 feasible, 1 pruned by a capacity bound)\n★ the search's optimum;"; !strings.HasPrefix(f.Subtitle, wantSub) {
		t.Errorf("subtitle\n%s\nwant it to start\n%s", f.Subtitle, wantSub)
	}
	if f.ColorLabel != "cost of feasible points ($/h)" {
		t.Errorf("colour label %q", f.ColorLabel)
	}

	// A baseline: one pool, labelled so; nothing feasible, no star.
	f, err = HeatmapFigure(HeatmapInput{Points: []PointRec{pt("Baseline-A100", 2, 0, 5, 50, false, -1), pt("Baseline-A100", 3, 0, 5, 75, false, -0.2)},
		Design: "Baseline-A100", RPS: math.NaN(), Source: "s", Baseline: true})
	if err != nil {
		t.Fatal(err)
	}
	if f.XLabel != "machines" || f.HasOptimum || len(f.Cells) != 2 || f.Cells[0].State != plots.Infeasible {
		t.Errorf("baseline figure: x label %q, star %v, cells %+v", f.XLabel, f.HasOptimum, f.Cells)
	}
	if !strings.Contains(f.Subtitle, "2 points evaluated (0 feasible)") {
		t.Errorf("baseline subtitle %q", f.Subtitle)
	}
}

// ratePoints is one design at three rates.
func ratePoints() []PointRec {
	return []PointRec{
		pt("Splitwise-HA", 1, 1, 3, 60, false, -0.1),
		pt("Splitwise-HA", 2, 1, 3, 90, true, 0.5),
		pt("Splitwise-HA", 2, 1, 5, 90, true, 0.2),
		pt("Splitwise-HA", 2, 1, 7, 90, false, -0.3),
		pt("Splitwise-HA", 1, 2, 3, 80, true, 0.3),
		pt("Splitwise-HA", 1, 2, 5, 80, false, -0.2),
		pt("Splitwise-HA", 2, 2, 7, 120, true, 0.05),
		pt("Splitwise-HA", 2, 2, 3, 120, true, 0.6),
	}
}

func TestHeatmapFigureRates(t *testing.T) {
	t.Parallel()
	// Several rates: coloured by capacity, the highest feasible rate.
	f, err := HeatmapFigure(HeatmapInput{Points: ratePoints(), Design: "Splitwise-HA", RPS: math.NaN(), Source: "s"})
	if err != nil {
		t.Fatal(err)
	}
	nan := math.NaN()
	want := []plots.HeatCell{
		{Prompt: 1, Token: 1, State: plots.Infeasible, Value: nan},
		{Prompt: 2, Token: 1, State: plots.Feasible, Value: 5},
		{Prompt: 1, Token: 2, State: plots.Feasible, Value: 3},
		{Prompt: 2, Token: 2, State: plots.Feasible, Value: 7},
	}
	if !cellsEqual(f.Cells, want) {
		t.Errorf("capacity cells\n%+v\nwant\n%+v", f.Cells, want)
	}
	if !f.HasOptimum || f.OptPrompt != 2 || f.OptToken != 2 {
		t.Errorf("star at (%d, %d), want the highest capacity (2, 2)", f.OptPrompt, f.OptToken)
	}
	if !strings.Contains(f.Title, "capacity within every SLO") || !strings.Contains(f.Subtitle, "★ highest capacity") {
		t.Errorf("title %q subtitle %q", f.Title, f.Subtitle)
	}
	// One rate picked: only its points; (2, 2) was not simulated at 5.
	f, err = HeatmapFigure(HeatmapInput{Points: ratePoints(), Design: "Splitwise-HA", RPS: 5, Source: "s"})
	if err != nil {
		t.Fatal(err)
	}
	want = []plots.HeatCell{
		{Prompt: 2, Token: 1, State: plots.Feasible, Value: 0.8},
		{Prompt: 1, Token: 2, State: plots.Infeasible, Value: nan},
	}
	if !cellsEqual(f.Cells, want) || f.OptPrompt != 2 || f.OptToken != 1 {
		t.Errorf("cells at 5 req/s\n%+v (star %d, %d)\nwant\n%+v (star 2, 1)", f.Cells, f.OptPrompt, f.OptToken, want)
	}
	if !strings.Contains(f.Subtitle, "2 points evaluated (1 feasible)") {
		t.Errorf("subtitle %q", f.Subtitle)
	}
}

func TestHeatmapFigureBadInput(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		in   HeatmapInput
		want []string
	}{
		{"design absent", HeatmapInput{Points: onePoints(), Design: "Splitwise-AA", RPS: math.NaN(), Source: "p.csv"},
			[]string{"no points of design Splitwise-AA in p.csv", "it holds: Splitwise-HH, Baseline-H100"}},
		{"rate not simulated", HeatmapInput{Points: ratePoints(), Design: "Splitwise-HA", RPS: 4, Source: "p.csv"},
			[]string{"--rps 4", "simulated at 3, 5, 7 req/s in p.csv"}},
		{"cost at several rates", HeatmapInput{Points: ratePoints(), Design: "Splitwise-HA", RPS: math.NaN(), Color: ColorCost, Source: "p.csv"},
			[]string{"at 3 rates (3, 5, 7 req/s)", "--rps", "--color capacity"}},
		{"capacity at one rate", HeatmapInput{Points: onePoints(), Design: "Splitwise-HH", RPS: math.NaN(), Color: ColorCapacity, Source: "p.csv"},
			[]string{"--color capacity", "one rate only"}},
		{"capacity with a rate", HeatmapInput{Points: ratePoints(), Design: "Splitwise-HA", RPS: 5, Color: ColorCapacity, Source: "p.csv"},
			[]string{"--color capacity", "drop --rps"}},
	} {
		_, err := HeatmapFigure(tc.in)
		if err == nil || !IsInput(err) {
			t.Errorf("%s: error %v, want an InputError", tc.name, err)
			continue
		}
		for _, w := range tc.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s: error %q lacks %q", tc.name, err, w)
			}
		}
	}
}

func TestSummaryFigure(t *testing.T) {
	t.Parallel()
	optima := []OptimumRec{
		{Design: "Splitwise-HH", Prompt: 3, Token: 2, Machines: 5, Cost: 190, Power: 56.875, RPS: 4, Capacity: 12, Feasible: true},
		{Design: "Baseline-H100", Prompt: 4, Machines: 4, Cost: 152, Power: 45.5, RPS: 4, Capacity: 8, Feasible: true, Baseline: true},
		{Design: "Splitwise-AA", Prompt: 3, Token: 3, Machines: 6, Cost: 105.6, Power: 39, RPS: 4, Capacity: math.NaN()},
		// No capacity: its throughput is the rate it served.
		{Design: "Splitwise-HA", Prompt: 2, Token: 2, Machines: 4, Cost: 136, Power: 40, RPS: 6, Capacity: math.NaN(), Feasible: true},
	}
	f, err := SummaryFigure([]NamedOptima{{Title: "iso-power", Optima: optima}}, "baseline-h100")
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Panels) != 1 || !reflect.DeepEqual(f.Panels[0].Designs, []string{"Splitwise-HH", "Baseline-H100", "Splitwise-AA", "Splitwise-HA"}) {
		t.Fatalf("panels %+v", f.Panels)
	}
	nan := math.NaN()
	want := [][]float64{
		{12.0 / 8, 1, nan, 6.0 / 8},        // throughput
		{190.0 / 152, 1, nan, 136.0 / 152}, // cost
		{56.875 / 45.5, 1, nan, 40 / 45.5}, // power
		{5.0 / 4, 1, nan, 1},               // machines
	}
	got := f.Panels[0].Values
	if len(got) != len(want) {
		t.Fatalf("%d metrics, want %d", len(got), len(want))
	}
	for m := range want {
		for d := range want[m] {
			if !same(got[m][d], want[m][d]) {
				t.Errorf("%s of %s: %v, want %v", f.Metrics[m], f.Panels[0].Designs[d], got[m][d], want[m][d])
			}
		}
	}
	// The baseline absent: an InputError naming the designs present.
	_, err = SummaryFigure([]NamedOptima{{Title: "run A", Optima: optima}}, "Baseline-A100")
	if err == nil || !IsInput(err) || !strings.Contains(err.Error(), "run A: no design Baseline-A100") ||
		!strings.Contains(err.Error(), "Splitwise-HH, Baseline-H100, Splitwise-AA, Splitwise-HA") {
		t.Errorf("baseline absent: %v", err)
	}
	// The baseline without an optimum: nothing to normalize to.
	_, err = SummaryFigure([]NamedOptima{{Title: "run B", Optima: optima}}, "Splitwise-AA")
	if err == nil || !errors.Is(err, plots.ErrNoFeasible) || IsInput(err) {
		t.Errorf("infeasible baseline: %v, want ErrNoFeasible", err)
	}
}

func TestParetoFigure(t *testing.T) {
	t.Parallel()
	points := append(ratePoints(),
		pt("Baseline-H100", 3, 0, 4, 114, true, 0.1),
		pt("Baseline-H100", 3, 0, 6, 114, false, -0.1),
		pt("Baseline-H100", 2, 0, 4, 76, false, -0.3),
	)
	f := ParetoFigure(points, nil, false, "src")
	// Each feasible cluster once, at its highest feasible rate.
	want := []plots.ParetoPoint{
		{Design: "Splitwise-HA", X: 5, Y: 90},
		{Design: "Splitwise-HA", X: 3, Y: 80},
		{Design: "Splitwise-HA", X: 7, Y: 120, Label: "Splitwise-HA"},
		{Design: "Baseline-H100", X: 4, Y: 114, Label: "Baseline-H100"},
	}
	if !reflect.DeepEqual(f.Points, want) {
		t.Errorf("points\n%+v\nwant\n%+v", f.Points, want)
	}
	if f.YLabel != "cost ($/h)" || !strings.HasPrefix(f.Subtitle, "src\n") {
		t.Errorf("y label %q subtitle %q", f.YLabel, f.Subtitle)
	}
	// Power, with optima: one labels its point, one outside the points
	// is added at its capacity.
	optima := [][]OptimumRec{{
		{Design: "Splitwise-HA", Goal: "throughput", Prompt: 2, Token: 1, Cost: 90, Power: 22.5, Capacity: 5, Feasible: true},
		{Design: "Baseline-H100", Goal: "throughput", Prompt: 4, Cost: 152, Power: 45.5, RPS: 4, Capacity: 5.5, Feasible: true},
		{Design: "Splitwise-AA", Goal: "throughput", Prompt: 1, Token: 1, Cost: 50, Power: 20, Capacity: math.NaN()},
	}}
	f = ParetoFigure(points, optima, true, "src")
	want = []plots.ParetoPoint{
		{Design: "Splitwise-HA", X: 5, Y: 22.5, Label: "Splitwise-HA"},
		{Design: "Splitwise-HA", X: 3, Y: 20},
		{Design: "Splitwise-HA", X: 7, Y: 30},
		{Design: "Baseline-H100", X: 4, Y: 28.5},
		{Design: "Baseline-H100", X: 5.5, Y: 45.5, Label: "Baseline-H100"},
	}
	if !reflect.DeepEqual(f.Points, want) {
		t.Errorf("power points\n%+v\nwant\n%+v", f.Points, want)
	}
	if f.YLabel != "provisioned power (kW)" {
		t.Errorf("y label %q", f.YLabel)
	}
}

// TestSummaryFoldsManyDesigns: a summary of more than MaxSummaryDesigns
// designs draws the baseline and the cheapest others, says how many it
// left out, and the default baseline is one the optima have.
func TestSummaryFoldsManyDesigns(t *testing.T) {
	t.Parallel()
	var optima []OptimumRec
	for i := 0; i < 60; i++ {
		optima = append(optima, OptimumRec{Design: fmt.Sprintf("Splitwise X%02d", i), Goal: "cost", Cost: float64(100 + (i*37)%60),
			Power: 10, RPS: 70, Prompt: 2, Token: 1, Machines: 3, Feasible: i%7 != 3})
	}
	optima[5].Design, optima[5].Baseline = "Baseline Y·tp2", true
	sets := []NamedOptima{{Title: "t", Optima: optima}}
	base := DefaultBaseline(sets, PreferredBaseline)
	if base != "Baseline Y·tp2" {
		t.Fatalf("default baseline %q", base)
	}
	f, err := SummaryFigure(sets, base)
	if err != nil {
		t.Fatal(err)
	}
	pan := f.Panels[0]
	if len(pan.Designs) != MaxSummaryDesigns || !strings.Contains(pan.Title, "and the 24 best; +35 more designs, see CSV") {
		t.Fatalf("%d designs, title %q", len(pan.Designs), pan.Title)
	}
	maxKept := 0.0
	for i, d := range pan.Designs {
		if d == base {
			continue
		}
		if math.IsNaN(pan.Values[1][i]) {
			t.Errorf("an infeasible design %s was kept over feasible ones", d)
		}
		maxKept = math.Max(maxKept, pan.Values[1][i])
	}
	for _, o := range optima {
		if o.Feasible && !slices.Contains(pan.Designs, o.Design) && o.Cost/optima[5].Cost < maxKept {
			t.Errorf("%s (cost %v) left out, while a dearer design was kept", o.Design, o.Cost)
		}
	}
}

// TestDesignBarsFolds: a bars figure of more than MaxSummaryDesigns
// designs keeps the cheapest feasible ones, in their order, and says how
// many it left out.
func TestDesignBarsFolds(t *testing.T) {
	t.Parallel()
	var optima []OptimumRec
	for i := 0; i < 40; i++ {
		optima = append(optima, OptimumRec{Design: fmt.Sprintf("Splitwise-HH@%d", i), Goal: "cost", Cost: float64(1000 + (i*37)%40),
			Power: 10, RPS: 70, Prompt: 2, Token: 1, Machines: 3, Feasible: i%5 != 0})
	}
	f := designBarsFigure(optima, false, "src")
	if len(f.Names) != MaxSummaryDesigns || !strings.Contains(f.Subtitle, "+15 more designs, see CSV") {
		t.Fatalf("%d bars, subtitle %q", len(f.Names), f.Subtitle)
	}
	worst, last := 0.0, -1
	for i, n := range f.Names {
		if !finite(f.Values[i]) {
			t.Errorf("%s: an infeasible design kept over feasible ones", n)
		}
		worst = math.Max(worst, f.Values[i])
		var k int
		fmt.Sscanf(n, "Splitwise-HH@%d", &k)
		if k <= last {
			t.Errorf("%s out of the optima's order", n)
		}
		last = k
	}
	for _, o := range optima {
		if o.Feasible && o.Cost < worst && !slices.Contains(f.Names, o.Design) {
			t.Errorf("%s ($%g/h) left out while a $%g/h design is shown", o.Design, o.Cost, worst)
		}
	}
	if g := designBarsFigure(optima[:10], false, "src"); len(g.Names) != 10 || strings.Contains(g.Subtitle, "more designs") {
		t.Errorf("10 designs: %d bars, subtitle %q", len(g.Names), g.Subtitle)
	}
}
