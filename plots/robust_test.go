package plots

import (
	"errors"
	"math"
	"testing"
)

func certaintyFixture() CertaintyFigure {
	c := []float64{0.5, 0.6, 0.7, 0.8, 0.9, 0.95, 0.99}
	return CertaintyFigure{Title: "Price of certainty: the robust plan's $/h against the confidence", Subtitle: "iso-throughput 70 req/s, least cost; 32 scenarios",
		YLabel: "robust plan, $/h", Series: []CertaintySeries{
			{Name: "Splitwise-HH", Confidence: c, Objective: []float64{1140, 1140, 1178, 1178, 1216, 1254, 1292}},
			{Name: "Splitwise-HA", Confidence: c, Objective: []float64{1167.6, 1188, 1188, 1226, 1226, 1264, math.NaN()}},
			{Name: "Baseline-H100", Confidence: c, Objective: []float64{2204, 2204, 2242, 2242, 2280, 2318, 2470}},
		}}
}

func spreadFixture() SpreadFigure {
	return SpreadFigure{Title: "Optimal machines per design across the scenarios", Subtitle: "32 scenarios; bar: P10–P90", YLabel: "machines (prompt + token)",
		Designs: []SpreadDesign{
			{Name: "Splitwise-HH", Scenarios: []float64{29, 29, 30, 31, 29, 28, 35, 30}, Nominal: 30, Robust: 32, P10: 28, P50: 29.5, P90: 35},
			{Name: "Baseline-H100", Scenarios: []float64{55, 58, 58, 60, 57}, Nominal: 58, Robust: 60, P10: 55, P50: 58, P90: 60},
			{Name: "Splitwise-AA", Scenarios: []float64{70}, Nominal: math.NaN(), Robust: math.NaN(), P10: 70, P50: math.Inf(1), P90: math.Inf(1)},
		}}
}

func tornadoFixture() TornadoFigure {
	st := []float64{0.1, 0.25}
	return TornadoFigure{Title: "What the answer hinges on", Subtitle: "70 req/s, least cost", XLabel: "change of the best plan's $/h, %",
		Inputs: []TornadoInput{
			{Name: "KV-transfer bandwidth", Steps: st, Down: []float64{0, 0}, Up: []float64{0, 0}},
			{Name: "decode time", Steps: st, Down: []float64{-1.7, -6.7}, Up: []float64{3.3, 6.7}},
			{Name: "arrival rate", Steps: st, Down: []float64{-6.7, math.NaN()}, Up: []float64{13.3, 26.7}},
		}}
}

// TestRobustFigures: the robust figures' goldens and layouts, and their
// refusals of empty input.
func TestRobustFigures(t *testing.T) {
	t.Parallel()
	golden(t, "certainty", func(p string) error { return Certainty(p, certaintyFixture()) })
	golden(t, "spread", func(p string) error { return Spread(p, spreadFixture()) })
	golden(t, "tornado", func(p string) error { return Tornado(p, tornadoFixture()) })
	for name, lay := range map[string]func() (figure, error){
		"certainty": func() (figure, error) { return certaintyFigure(certaintyFixture()) },
		"spread":    func() (figure, error) { return spreadFigure(spreadFixture()) },
		"tornado":   func() (figure, error) { return tornadoFigure(tornadoFixture()) },
	} {
		fig, err := lay()
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range layoutProblems(fig, 0.08) {
			t.Errorf("%s: %s", name, p)
		}
	}
	dir := t.TempDir()
	if err := Certainty(dir+"/c.svg", CertaintyFigure{Series: []CertaintySeries{{Name: "x", Confidence: []float64{0.5}, Objective: []float64{math.NaN()}}}}); !errors.Is(err, ErrNoFeasible) {
		t.Errorf("certainty without a plan: %v, want ErrNoFeasible", err)
	}
	if err := Spread(dir+"/s.svg", SpreadFigure{}); !errors.Is(err, ErrNoData) {
		t.Errorf("spread without designs: %v, want ErrNoData", err)
	}
	if err := Tornado(dir+"/t.svg", TornadoFigure{}); !errors.Is(err, ErrNoData) {
		t.Errorf("tornado without inputs: %v, want ErrNoData", err)
	}
}
