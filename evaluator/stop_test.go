package evaluator

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"splitplan/traces"
)

// stopCase is one random simulation of the Stop tests: a design, a
// policy and a load from light to hopelessly overloaded.
type stopCase struct {
	name string
	cl   Cluster
	reqs []traces.Request
	opt  Options
}

func stopCases(t *testing.T, n int) []stopCase {
	rng := rand.New(rand.NewPCG(31, 37))
	designs := []struct {
		name          string
		prompt, token int
	}{{"Baseline-H100", 4, 0}, {"Splitwise-HH", 3, 2}, {"Splitwise-HA", 2, 3}, {"Splitwise-AA", 4, 1}, {"Baseline-A100", 6, 0}, {"Splitwise-HHcap", 5, 2}}
	kinds := []PolicyKind{PolicyMixed, PolicyMixed, PolicySarathi, PolicyPrefillFirst, PolicyRequestLevel}
	var out []stopCase
	for i := range n {
		d := designs[i%len(designs)]
		cl := mustCluster(t, d.name, d.prompt, d.token, "bloom-176b", false)
		cl.Policy = Policy{Kind: kinds[i%len(kinds)]}
		rps := 2 + 60*rng.Float64()*rng.Float64()
		reqs := randomRequests(1000+rng.IntN(2000), rps, 1+rng.IntN(4000), 1+rng.IntN(1+rng.IntN(600)), uint64(500+i))
		opt := Options{Transfer: TransferMode(i % 3), LatenciesOnly: i%2 == 0}
		if i%4 == 1 {
			opt.KVCapacityTokens = 20000 + int64(rng.IntN(40000)) // memory binds: transfers wait
		}
		out = append(out, stopCase{fmt.Sprintf("case %d (%s %dP/%dT, %s, %.1f req/s)", i, d.name, d.prompt, d.token, cl.Policy, rps), cl, reqs, opt})
	}
	return out
}

// neverStop is a Stop whose limits every request with a latency above 0
// is over (every reference 0: an infinite slowdown) but that never stops
// a simulation of n requests: its checks run, and change nothing.
func neverStop(n int) *Stop {
	return &Stop{Limits: []StopLimit{{Name: "TTFT", Count: n + 1}, {Name: "E2E", Metric: StopE2E, Count: n + 1}, {Name: "TBT", Metric: StopTBT, Count: n + 1}}, Reference: make([]float64, StopMetrics*n)}
}

// TestStopBoundsHold: at every check of Options.Stop, the lower bounds of
// the TTFT, the E2E and the TBT it takes of each live request are at most
// what that request's TTFT, E2E and TBT turn out to be, on random clusters and
// policies from light to overloaded loads; and the checks change nothing
// in the simulation.
func TestStopBoundsHold(t *testing.T) {
	checked, unsure, tbtKnown := 0, 0, 0
	for _, c := range stopCases(t, 36) {
		opt := c.opt
		opt.Stop = neverStop(len(c.reqs))
		s, err := newSim(c.cl, c.reqs, opt)
		if err != nil {
			var ue *UnservableError
			if errors.As(err, &ue) {
				continue
			}
			t.Fatal(err)
		}
		ttftLB := make([]float64, len(c.reqs))
		e2eLB := make([]float64, len(c.reqs))
		tbtLB := make([]float64, len(c.reqs))
		s.onStopCheck = func(st *reqState, ttft, e2e, tbt float64) {
			checked++
			if st.phase < phTransfer {
				unsure++ // no first token yet: its TTFT bounded, not known
				if !math.IsNaN(tbt) {
					t.Fatalf("%s: request %d has a TBT bound %v before its first token", c.name, st.req, tbt)
				}
			} else if st.output > 1 {
				tbtKnown++
			}
			ttftLB[st.req] = max(ttftLB[st.req], ttft)
			e2eLB[st.req] = max(e2eLB[st.req], e2e)
			if !math.IsNaN(tbt) {
				tbtLB[st.req] = max(tbtLB[st.req], tbt)
			}
		}
		if err := s.run(context.Background()); err != nil {
			t.Fatal(err)
		}
		res := s.finishResult()
		if res.Stopped || res.Completed != len(c.reqs) {
			t.Fatalf("%s: stopped %v, %d of %d requests completed, want every one", c.name, res.Stopped, res.Completed, len(c.reqs))
		}
		for i := range c.reqs {
			l := res.Latency(i)
			if ttftLB[i] > l.TTFTS || e2eLB[i] > l.E2ES || tbtLB[i] > l.TBT() {
				t.Fatalf("%s: request %d: bounds TTFT %v, E2E %v, TBT %v over its TTFT %v, E2E %v, TBT %v",
					c.name, i, ttftLB[i], e2eLB[i], tbtLB[i], l.TTFTS, l.E2ES, l.TBT())
			}
		}
		without := c.opt
		sameSimulation(t, c.name+": the checks of a Stop that never stops", c.cl, c.reqs, without, opt)
	}
	t.Logf("%d live requests checked, %d without a first token, %d with a TBT bound", checked, unsure, tbtKnown)
	if checked < 10000 || unsure < 2000 || tbtKnown < 2000 {
		t.Errorf("%d live requests checked, %d without a first token, %d with a TBT bound: the test exercises too little", checked, unsure, tbtKnown)
	}
}

// TestStopStops: a simulation stops at the first check at which enough
// requests are over a limit, says why, and keeps what it finished.
func TestStopStops(t *testing.T) {
	t.Parallel()
	reqs := randomRequests(2000, 60, 3000, 200, 5) // far more than 1P/1T serves
	cl := mustCluster(t, "Splitwise-HH", 1, 1, "bloom-176b", false)
	full := mustEval(t, cl, reqs, Options{LatenciesOnly: true})
	// A slowdown of 5 over references of 1, 1.25 and 1.5 s in turn: over
	// from 5, 6.25 and 7.5 s of TTFT on (the E2E and TBT references are
	// never read).
	refs := make([]float64, StopMetrics*len(reqs))
	over := 0
	for i := range reqs {
		r := 1 + 0.25*float64(i%3)
		refs[StopMetrics*i+int(StopTTFT)], refs[StopMetrics*i+int(StopE2E)], refs[StopMetrics*i+int(StopTBT)] = r, math.NaN(), math.NaN()
		if full.Latency(i).TTFTS/r > 5 {
			over++
		}
	}
	if over < 200 {
		t.Fatalf("only %d requests wait over 5 times their reference: the load is not heavy enough for the test", over)
	}
	stop := &Stop{Limits: []StopLimit{{Name: "P90 TTFT", Count: 200, Factor: 5}}, Reference: refs}
	res := mustEval(t, cl, reqs, Options{LatenciesOnly: true, Stop: stop})
	if !res.Stopped || res.Aborted {
		t.Fatalf("stopped %v, aborted %v; want stopped", res.Stopped, res.Aborted)
	}
	if !strings.Contains(res.StopReason, "P90 TTFT limit") || !strings.Contains(res.StopReason, "(200 needed)") {
		t.Errorf("reason %q names neither the limit nor the count", res.StopReason)
	}
	if res.Events >= full.Events/2 {
		t.Errorf("stopped after %d events of the full run's %d: later than expected", res.Events, full.Events)
	}
	finished := 0
	for i := range reqs {
		l := res.Latency(i)
		if l.E2ES == 0 {
			continue
		}
		finished++
		if l != full.Latency(i) {
			t.Fatalf("request %d finished with %+v, the full run with %+v", i, l, full.Latency(i))
		}
	}
	if finished != res.Completed || finished == len(reqs) {
		t.Errorf("%d requests finished, Completed %d, of %d", finished, res.Completed, len(reqs))
	}
}

func TestStopErrors(t *testing.T) {
	t.Parallel()
	reqs := randomRequests(10, 1, 100, 10, 1)
	cl := mustCluster(t, "Splitwise-HH", 1, 1, "bloom-176b", false)
	for _, tc := range []struct {
		stop Stop
		want string
	}{
		{Stop{Limits: []StopLimit{{Name: "P99 TTFT", Count: 1}}, Reference: make([]float64, 9)}, "stop: 9 reference latencies for 10 requests (want 30, 3 a request)"},
		{Stop{Limits: []StopLimit{{Name: "P99 TTFT", Count: 1}, {Name: "P50 E2E", Count: 0}}, Reference: make([]float64, 30)}, "stop limit 2 (P50 E2E): count must be at least 1, got 0"},
		{Stop{Limits: []StopLimit{{Name: "P99 TTFT", Count: 1, Factor: math.NaN()}}, Reference: make([]float64, 30)}, "stop limit 1 (P99 TTFT): the limit must be a factor or a number of seconds of at least 0, got factor NaN, 0 s"},
		{Stop{Limits: []StopLimit{{Name: "P99 TTFT", Count: 1, Metric: 3}}, Reference: make([]float64, 30)}, "stop limit 1 (P99 TTFT): unknown metric 3"},
	} {
		_, err := Evaluate(cl, reqs, Options{Stop: &tc.stop})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("got %v, want %q", err, tc.want)
		}
	}
}

// TestStopCount: count adds a request to a limit exactly when its latency
// is over the limit's seconds (absolute) or its latency over its own
// reference is over the limit's factor (relative), the slowdown slo.Check
// divides; NaN latencies (no TBT yet) and quotients never count. Random
// references, factors and latencies, ties among them, zero references.
func TestStopCount(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(5, 8))
	const n = 64
	limits := []StopLimit{
		{Name: "P50 TTFT", Count: 1, Factor: 2}, {Name: "P99 TBT", Metric: StopTBT, Count: 1, Factor: 5},
		{Name: "P90 E2E", Metric: StopE2E, Count: 1, AbsoluteS: 3}, {Name: "P90 TTFT", Count: 1, Factor: 3},
		{Name: "P99 TTFT", Count: 1, AbsoluteS: 0.5}, {Name: "P50 E2E", Metric: StopE2E, Count: 1, Factor: 1.25},
		{Name: "P90 TBT", Metric: StopTBT, Count: 1, AbsoluteS: 0.05},
	}
	refs := make([]float64, StopMetrics*n)
	for i := range refs {
		refs[i] = []float64{0, 0.1, 0.25, rng.Float64()}[rng.IntN(4)]
	}
	ss := newStopState(&Stop{Limits: limits, Reference: refs})
	for trial := range 20000 {
		i := int32(rng.IntN(n))
		lat := [StopMetrics]float64{}
		for m := range lat {
			r := refs[StopMetrics*int(i)+m]
			switch rng.IntN(5) {
			case 0:
				lat[m] = r * []float64{2, 5, 3, 1.25}[rng.IntN(4)] // on a factor
			case 1:
				lat[m] = []float64{3, 0.5, 0.05, 0}[rng.IntN(4)] // on an absolute limit
			case 2:
				lat[m] = math.NaN()
			default:
				lat[m] = 4 * rng.Float64()
			}
		}
		counts := make([]int, len(limits))
		ss.count(counts, i, lat[StopTTFT], lat[StopE2E], lat[StopTBT])
		for k, l := range limits {
			x := lat[l.Metric]
			want := x/refs[StopMetrics*int(i)+int(l.Metric)] > l.Factor
			if l.AbsoluteS > 0 {
				want = x > l.AbsoluteS
			}
			if got := counts[k] == 1; got != want || counts[k] > 1 {
				t.Fatalf("trial %d: request %d, latencies %v, references %v: limit %+v counted %d, want over %v", trial, i, lat, refs[StopMetrics*int(i):StopMetrics*int(i)+StopMetrics], l, counts[k], want)
			}
		}
	}
}
