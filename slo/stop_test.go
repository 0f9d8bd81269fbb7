package slo

import (
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"slices"
	"splitplan/resolve"
	"strings"
	"testing"

	"splitplan/costpower"
	"splitplan/evaluator"
	"splitplan/traces"
)

// TestCertainlyOver: whenever CertainlyOver(n, p) of a series' n values
// are over a limit, its p-th percentile is over it too, on random series
// (ties, values at the limit) and percentiles, the paper's among them.
func TestCertainlyOver(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(3, 5))
	ps := []float64{50, 90, 99, 0, 100, 99.9, 1, 33.3}
	for trial := range 20000 {
		n := 1 + rng.IntN(300)
		p := ps[trial%len(ps)]
		if trial%3 == 0 {
			p = 100 * rng.Float64()
		}
		limit := float64(rng.IntN(5))
		k := CertainlyOver(n, p)
		if k < 1 || k > n {
			t.Fatalf("CertainlyOver(%d, %v) = %d, want 1..n", n, p, k)
		}
		v := make([]float64, n)
		for i := range v {
			if i < k {
				v[i] = limit + float64(1+rng.IntN(3))*rng.Float64() + 1e-9 // over
			} else {
				v[i] = float64(rng.IntN(8)) // anything: under, at or over
			}
		}
		rng.Shuffle(n, func(i, j int) { v[i], v[j] = v[j], v[i] })
		sorted := slices.Clone(v)
		slices.Sort(sorted)
		if got := Percentile(sorted, p); !(got > limit) {
			t.Fatalf("n %d, P%v: %d values over %v, yet the percentile is %v", n, p, k, limit, got)
		}
		if got := percentileOf(v, p); !(got > limit) {
			t.Fatalf("n %d, P%v: %d values over %v, yet percentileOf gives %v", n, p, k, limit, got)
		}
	}
	// The paper's targets on the coding workload's 8,400 requests.
	for _, c := range []struct {
		p    float64
		want int
	}{{50, 4201}, {90, 841}, {99, 85}, {100, 1}, {0, 8400}} {
		if got := CertainlyOver(8400, c.p); got != c.want {
			t.Errorf("CertainlyOver(8400, %v) = %d, want %d", c.p, got, c.want)
		}
	}
}

// TestStopKeepsVerdicts: a simulation given the Stop of the spec stops
// only when the full run fails the target it names, and a simulation it
// does not stop is the full run; over random Splitwise and baseline
// clusters at loads from light to hopeless, with relative and absolute
// targets. Enough of the failing runs stop for the test to mean something.
func TestStopKeepsVerdicts(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(11, 13))
	cat, src := costpower.Default(), resolve.DefaultSource()
	ref := Reference{Perf: refPerf(t, false)}
	specs := []Spec{Default(), {Targets: []Target{
		{Metric: TTFT, Percentile: 90, AbsoluteS: 2}, {Metric: E2E, Percentile: 50, AbsoluteS: 8},
		{Metric: TBT, Percentile: 99, Factor: 5}, {Metric: E2E, Percentile: 99, Factor: 4}}, DrainRiseS: 2}}
	designs := []struct {
		name          string
		prompt, token int
	}{{"Splitwise-HH", 3, 2}, {"Baseline-H100", 4, 0}, {"Splitwise-HA", 2, 4}, {"Splitwise-AA", 5, 1}}
	failed, stopped := 0, 0
	for i := range 32 {
		d := designs[i%len(designs)]
		cl, err := resolve.NamedCluster(cat, src, d.name, d.prompt, d.token, "bloom-176b")
		if err != nil {
			t.Fatal(err)
		}
		if i%5 == 4 {
			cl.Policy = evaluator.Policy{Kind: evaluator.PolicySarathi}
		}
		rps := 0.5 + 30*rng.Float64()*rng.Float64()*rng.Float64()
		reqs := make([]traces.Request, 400+rng.IntN(1200))
		at := 0.0
		for j := range reqs {
			at += rng.ExpFloat64() / rps
			reqs[j] = traces.Request{ID: j, Arrival: at, PromptTokens: 1 + rng.IntN(3000), OutputTokens: 1 + rng.IntN(400)}
		}
		spec := specs[i%len(specs)]
		name := fmt.Sprintf("case %d (%s %dP/%dT, %.1f req/s)", i, d.name, d.prompt, d.token, rps)
		opt := evaluator.Options{LatenciesOnly: true}
		full, err := evaluator.Evaluate(cl.Sim(), reqs, opt)
		if err != nil {
			t.Fatal(err)
		}
		v := spec.Check(full, ref)
		opt.Stop = spec.Stop(ref, reqs)
		cut, err := evaluator.Evaluate(cl.Sim(), reqs, opt)
		if err != nil {
			t.Fatal(err)
		}
		if !v.Pass {
			failed++
		}
		if !cut.Stopped {
			if !reflect.DeepEqual(cut, full) {
				t.Errorf("%s: not stopped, yet its result differs from the full run's", name)
			}
			continue
		}
		stopped++
		if v.Pass {
			t.Fatalf("%s: stopped (%s), but the full run passes", name, cut.StopReason)
		}
		named := false
		for _, f := range v.Figures {
			if strings.Contains(cut.StopReason, "the "+f.Name()+" limit") {
				named = true
				if f.OK() {
					t.Errorf("%s: stopped for %s, which the full run meets (%v ≤ %v)", name, f.Name(), f.Measured, f.Limit)
				}
			}
		}
		if !named {
			t.Errorf("%s: the reason %q names no target", name, cut.StopReason)
		}
		if cut.Events >= full.Events {
			t.Errorf("%s: stopped after %d events, the full run took %d", name, cut.Events, full.Events)
		}
		if c := spec.Check(cut, ref); c.Pass || c.Drained || c.DrainNote != cut.StopReason {
			t.Errorf("%s: a stopped run checks as pass %v, drained %v (%q)", name, c.Pass, c.Drained, c.DrainNote)
		}
	}
	t.Logf("%d runs of 32 failed, %d stopped", failed, stopped)
	if stopped < 8 || failed < stopped || failed == 32 {
		t.Errorf("%d runs failed, %d stopped: the test does not exercise both", failed, stopped)
	}
}

// TestStopLimits: the limits Spec.Stop gives, target by target, and the
// reference latencies request by request: TTFT and E2E limits count every
// request, the TBT the requests of more than one output token (counted
// among those alone); none on the compat mode's TBT.
func TestStopLimits(t *testing.T) {
	t.Parallel()
	reqs := []traces.Request{{PromptTokens: 100, OutputTokens: 11}, {PromptTokens: 200, OutputTokens: 2}, {PromptTokens: 300, OutputTokens: 1}}
	tbtOnly := Spec{Targets: []Target{{Metric: TBT, Percentile: 50, Factor: 2}}}
	if st := tbtOnly.Stop(Reference{Perf: flat{}, Compat: true}, reqs); st != nil {
		t.Errorf("a TBT target alone in the compat mode gives %+v, want nil", st)
	}
	st := tbtOnly.Stop(Reference{Perf: flat{}}, append(slices.Clone(reqs), traces.Request{PromptTokens: 50, OutputTokens: 1}))
	// Reference TBT 10 ms, a factor of 2; of the two requests with a TBT,
	// both must be over for the P50 to be (of four, three would).
	if st == nil || len(st.Limits) != 1 || st.Limits[0] != (evaluator.StopLimit{Name: "P50 TBT", Metric: evaluator.StopTBT, Count: 2, Factor: 2}) ||
		len(st.Reference) != 4*evaluator.StopMetrics || math.Abs(st.Reference[evaluator.StopTBT]-0.01) > 1e-15 {
		t.Errorf("a P50 TBT 2× target gives %+v, want one TBT limit of factor 2 over two requests", st)
	}
	st = Default().Stop(Reference{Perf: flat{}}, reqs)
	if st == nil || len(st.Limits) != 9 || len(st.Reference) != 3*evaluator.StopMetrics {
		t.Fatalf("the paper's SLOs give %+v, want nine limits and three reference latencies a request", st)
	}
	ref := func(req int, m evaluator.StopMetric) float64 { return st.Reference[req*evaluator.StopMetrics+int(m)] }
	byName := map[string]evaluator.StopLimit{}
	for _, l := range st.Limits {
		byName[l.Name] = l
	}
	// References: TTFT 0.1 s and 0.2 s, E2E 0.2 s and 0.21 s, TBT 10 ms;
	// of three values (two for the TBT), two must be over for a P99 or a
	// P90 to be.
	for _, c := range []struct {
		name   string
		metric evaluator.StopMetric
		factor float64
		refs   []float64
	}{
		{"P50 TTFT", evaluator.StopTTFT, 2, []float64{0.1, 0.2}},
		{"P99 E2E", evaluator.StopE2E, 5, []float64{0.2, 0.21}},
		{"P90 TBT", evaluator.StopTBT, 1.5, []float64{0.01, 0.01}},
	} {
		l := byName[c.name]
		if l.Metric != c.metric || l.Factor != c.factor || l.AbsoluteS != 0 || l.Count != 2 {
			t.Errorf("%s limit %+v, want factor %v, count 2", c.name, l, c.factor)
		}
		for i, want := range c.refs {
			if got := ref(i, c.metric); math.Abs(got-want) > 1e-15 {
				t.Errorf("%s: request %d's reference %v, want %v", c.name, i, got, want)
			}
		}
	}
	abs := Spec{Targets: []Target{{Metric: TTFT, Percentile: 90, AbsoluteS: 2}}}.Stop(Reference{Perf: flat{}}, reqs[:2])
	if l := abs.Limits; len(l) != 1 || l[0].AbsoluteS != 2 || l[0].Count != 2 {
		t.Errorf("an absolute limit of 2 s gives %+v", l)
	}
}

// TestStopperRemembers: a Stopper asked for workload after workload —
// prefixes of one sequence, longer and shorter, and other requests —
// gives each time what Spec.Stop computes afresh, and what it gave
// before stays as it was.
func TestStopperRemembers(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(1, 2))
	seq := func(seed uint64, n int) []traces.Request {
		r := rand.New(rand.NewPCG(seed, 3))
		out := make([]traces.Request, n)
		for i := range out {
			out[i] = traces.Request{ID: i, Arrival: float64(i), PromptTokens: 1 + r.IntN(3000), OutputTokens: 1 + r.IntN(300)}
		}
		return out
	}
	spec := Default()
	ref := Reference{Perf: flat{}}
	p := spec.Stopper(ref)
	type given struct {
		st   *evaluator.Stop
		want []float64
	}
	var seen []given
	for trial := range 60 {
		reqs := seq(uint64(trial/20), 1+rng.IntN(400)) // 20 prefixes of a sequence, then another
		if trial%10 == 9 {
			reqs[rng.IntN(len(reqs))].PromptTokens++ // one request differs
		}
		got, want := p.Stop(reqs), spec.Stopper(ref).Stop(reqs)
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("trial %d (%d requests): the Stopper gives other limits than a fresh one", trial, len(reqs))
		}
		seen = append(seen, given{got, append([]float64(nil), got.Reference...)})
	}
	for i, g := range seen {
		if !reflect.DeepEqual(g.st.Reference, g.want) {
			t.Fatalf("the Stop of trial %d changed after later ones", i)
		}
	}
}
