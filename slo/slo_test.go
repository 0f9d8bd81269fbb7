package slo

import (
	"math"
	"splitplan/resolve"
	"strings"
	"testing"

	"splitplan/costpower"
	"splitplan/evaluator"
	"splitplan/evaluator/perf"
)

// flat is a reference model with round numbers: a prompt costs 1 ms per
// token, a decode 10 ms whatever the batch.
type flat struct{}

func (flat) PromptTime(tokens int) (float64, bool)         { return float64(tokens) * 1e-3, false }
func (flat) DecodeTime(batch int, _ int64) (float64, bool) { return 0.010, false }
func (flat) MixedTime(p, d int, _ int64) (float64, bool)   { return float64(p+d) * 1.1e-3, false }

func TestReferenceLatencies(t *testing.T) {
	t.Parallel()
	ttft, tbt, e2e := Reference{Perf: flat{}}.Latencies(500, 11)
	if ttft != 0.5 || tbt != 0.010 || math.Abs(e2e-0.6) > 1e-12 {
		t.Errorf("reference: %v %v %v, want 0.5 0.01 0.6", ttft, tbt, e2e)
	}
}

// TestCheckArithmetic: ten requests of 100 prompt / 11 output tokens
// (reference TTFT 0.1 s, TBT 0.01 s, E2E 0.2 s) with slowdowns 1..10.
func TestCheckArithmetic(t *testing.T) {
	t.Parallel()
	res := &evaluator.Result{}
	for i := 1; i <= 10; i++ {
		k := float64(i)
		res.Requests = append(res.Requests, evaluator.RequestResult{
			ID: i - 1, ArrivalS: k, PromptTokens: 100, OutputTokens: 11,
			TTFTS: 0.1 * k, TBTS: 0.01 * k, E2ES: 0.2 * k, TBTReferenceS: 0.01 * k * 10 / 11,
		})
	}
	v := Default().Check(res, Reference{Perf: flat{}})
	// Slowdowns 1..10: P50 = 5.5, P90 = 9.1, P99 = 9.91 for all three metrics.
	want := map[string]float64{"ttft_p50": 5.5, "ttft_p90": 9.1, "ttft_p99": 9.91, "tbt_p50": 5.5, "e2e_p99": 9.91}
	for _, f := range v.Figures {
		if w, ok := want[f.Key()]; ok && math.Abs(f.Measured-w) > 1e-9 {
			t.Errorf("%s = %v, want %v", f.Name(), f.Measured, w)
		}
	}
	// Slacks: P50 TBT (1.25 − 5.5) / 1.25 = −3.4; P90 TBT and P90 E2E
	// (1.5 − 9.1) / 1.5 = −5.07, the worst; the first of the tie binds.
	if f := v.Figures[3]; f.Key() != "tbt_p50" || math.Abs(f.Slack-(-3.4)) > 1e-9 {
		t.Errorf("%s slack %v, want −3.4", f.Name(), f.Slack)
	}
	b := v.BindingFigure()
	if v.Pass || b.Key() != "tbt_p90" || math.Abs(b.Slack-(1.5-9.1)/1.5) > 1e-9 {
		t.Errorf("pass %v, binding %s slack %v; want fail with P90 TBT at −5.07", v.Pass, b.Name(), b.Slack)
	}
	// Absolute targets: P99 TTFT ≤ 1 s holds (0.991 s), P50 E2E ≤ 1 s fails (1.1 s).
	spec := Spec{Targets: []Target{{Metric: TTFT, Percentile: 99, AbsoluteS: 1}, {Metric: E2E, Percentile: 50, AbsoluteS: 1}}, DrainRiseS: 2}
	v = spec.Check(res, Reference{Perf: flat{}})
	if !v.Figures[0].OK() || math.Abs(v.Figures[0].Slack-0.009) > 1e-9 || v.Figures[1].OK() || v.Binding != 1 || v.Pass {
		t.Errorf("absolute: %+v", v)
	}
	// Loose factors pass, and the binding one has the least slack.
	spec = Spec{Targets: []Target{{Metric: TTFT, Percentile: 99, Factor: 20}, {Metric: TBT, Percentile: 50, Factor: 11}}, DrainRiseS: 2}
	v = spec.Check(res, Reference{Perf: flat{}})
	// Slacks (20 − 9.91) / 20 = 0.5045 and (11 − 5.5) / 11 = 0.5: TBT binds.
	if !v.Pass || v.Binding != 1 || math.Abs(v.Figures[0].Slack-(20-9.91)/20) > 1e-12 {
		t.Errorf("loose: %+v", v)
	}
	// Compat compares (E2E − TTFT) / output against the token curve at the prompt size.
	v = Spec{Targets: []Target{{Metric: TBT, Percentile: 50, Factor: 10}}}.Check(res, Reference{Perf: flat{}, Compat: true})
	if math.Abs(v.Figures[0].Measured-5.5*10/11) > 1e-9 {
		t.Errorf("compat TBT slowdown %v", v.Figures[0].Measured)
	}
}

func TestDrain(t *testing.T) {
	t.Parallel()
	mk := func(delay func(i int) float64) *evaluator.Result {
		res := &evaluator.Result{}
		for i := 0; i < 100; i++ {
			res.Requests = append(res.Requests, evaluator.RequestResult{ID: i, ArrivalS: float64(i), PromptTokens: 10,
				OutputTokens: 2, TTFTS: 0.01, TBTS: 0.01, E2ES: 0.02, SchedDelayS: delay(i)})
		}
		return res
	}
	spec := Spec{Targets: []Target{{Metric: TTFT, Percentile: 50, Factor: 1e9}}, DrainRiseS: 2}
	if v := spec.Check(mk(func(int) float64 { return 0.5 }), Reference{Perf: flat{}}); !v.Drained || !v.Pass {
		t.Errorf("steady delays: %+v", v)
	}
	v := spec.Check(mk(func(i int) float64 { return float64(i) * 0.1 }), Reference{Perf: flat{}})
	if v.Drained || v.Pass || !strings.Contains(v.DrainNote, "queues grow") {
		t.Errorf("growing delays should fail: %+v", v)
	}
	ab := mk(func(int) float64 { return 0 })
	ab.Aborted, ab.AbortReason = true, "request 7 waited 31 s"
	if v := spec.Check(ab, Reference{Perf: flat{}}); v.Drained || v.Pass || v.DrainNote != "request 7 waited 31 s" {
		t.Errorf("aborted: %+v", v)
	}
}

func TestValidate(t *testing.T) {
	t.Parallel()
	if err := Default().Validate(); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		s    Spec
		want string
	}{
		{Spec{}, "no targets"},
		{Spec{Targets: []Target{{Percentile: 50, Factor: 2}}}, "metric must be"},
		{Spec{Targets: []Target{{Metric: Metric(9), Percentile: 50, Factor: 2}}}, "metric must be"},
		{Spec{Targets: []Target{{Metric: TBT, Percentile: 0, Factor: 2}}}, "percentile"},
		{Spec{Targets: []Target{{Metric: TBT, Percentile: 99, Factor: -1}}}, "slowdown factor"},
		{Spec{Targets: []Target{{Metric: TBT, Percentile: 99, Factor: 2}, {Metric: TBT, Percentile: 99, AbsoluteS: 1}}}, "given twice"},
	} {
		if err := tc.s.Validate(); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: %v, want %q", tc.s, err, tc.want)
		}
	}
}

// refPerf is BLOOM-176B's profiled model on a DGX-A100 (the compat fit
// with compat).
func refPerf(t *testing.T, compat bool) perf.IterationModel {
	t.Helper()
	cat := costpower.Default()
	m, err := cat.Model("bloom-176b")
	if err != nil {
		t.Fatal(err)
	}
	mc, err := cat.Machine("DGX-A100")
	if err != nil {
		t.Fatal(err)
	}
	src := resolve.DefaultSource()
	src.Compat = compat
	pm, _, err := src.Resolve(m, mc)
	if err != nil {
		t.Fatal(err)
	}
	return pm
}

// TestTabulatedReference: a tabulated reference gives exactly the
// latencies the plain one computes, inside and beyond its table, for the
// default and the compat reference.
func TestTabulatedReference(t *testing.T) {
	t.Parallel()
	for _, compat := range []bool{false, true} {
		ref := Reference{Perf: refPerf(t, compat), Compat: compat}
		tab := ref.Tabulated(3000)
		for _, p := range []int{0, 1, 2, 17, 512, 2999, 3000, 3001, 7000} {
			for _, o := range []int{1, 2, 250} {
				a1, b1, c1 := ref.Latencies(p, o)
				a2, b2, c2 := tab.Latencies(p, o)
				if a1 != a2 || b1 != b2 || c1 != c2 {
					t.Errorf("compat %v, prompt %d, output %d: tabulated (%v, %v, %v), computed (%v, %v, %v)", compat, p, o, a2, b2, c2, a1, b1, c1)
				}
			}
		}
	}
}
