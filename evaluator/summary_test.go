package evaluator

import (
	"math"
	"slices"
	"testing"

	"splitplan/internal/quantile"
)

// TestStreamedSummary: a streamed run (Options.Streamed) keeps no request
// and summarizes the same simulation as one that keeps every request's
// latencies: the same counts, output tokens, energy and ITL, each
// distribution's quantiles within the sketch's error of the exact ones,
// and its mean and maximum exact (within rounding) — in the default and
// the compat scheduler.
func TestStreamedSummary(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		design        string
		prompt, token int
		compat        bool
	}{{"Splitwise-HH", 3, 1, false}, {"Baseline-A100", 2, 0, false}, {"Splitwise-HA", 2, 2, true}} {
		cl := mustCluster(t, tc.design, tc.prompt, tc.token, "bloom-176b", tc.compat)
		reqs := randomRequests(3000, 6, 3000, 400, 17)
		exact := mustEval(t, cl, reqs, Options{Compat: tc.compat, LatenciesOnly: true, Energy: true})
		res := mustEval(t, cl, reqs, Options{Compat: tc.compat, Streamed: true, Energy: true})
		sm := res.Summary
		if sm == nil || res.Latencies != nil || res.Requests != nil || res.RequestCount() != 0 {
			t.Fatalf("%s: a streamed run kept requests", tc.design)
		}
		if sm.Finished != exact.Completed || res.Completed != exact.Completed || res.OutputTokens() != exact.OutputTokens() ||
			res.EnergyJ != exact.EnergyJ || !res.ITL.Equal(&exact.ITL) || res.Preempted != exact.Preempted {
			t.Errorf("%s: streamed run differs: %d finished, %d tokens, %v J; exact %d, %d, %v J", tc.design,
				sm.Finished, res.OutputTokens(), res.EnergyJ, exact.Completed, exact.OutputTokens(), exact.EnergyJ)
		}
		for _, c := range []struct {
			name string
			sk   *quantile.Sketch
			f    func(l RequestLatency) (float64, bool)
		}{
			{"TTFT", &sm.TTFT, func(l RequestLatency) (float64, bool) { return l.TTFTS, true }},
			{"TBT", &sm.TBT, func(l RequestLatency) (float64, bool) { return l.TBT(), l.OutputTokens > 1 }},
			{"E2E", &sm.E2E, func(l RequestLatency) (float64, bool) { return l.E2ES, true }},
			{"stall", &sm.MaxGap, func(l RequestLatency) (float64, bool) { return l.MaxGapS, l.OutputTokens > 1 }},
			{"scheduling delay", &sm.SchedDelay, func(l RequestLatency) (float64, bool) { return l.SchedDelayS, true }},
		} {
			var v []float64
			sum := 0.0
			for i := range exact.RequestCount() {
				if x, ok := c.f(exact.Latency(i)); ok {
					v, sum = append(v, x), sum+x
				}
			}
			slices.Sort(v)
			if uint64(len(v)) != c.sk.Count() || c.sk.Max() != v[len(v)-1] || math.Abs(c.sk.Mean()-sum/float64(len(v))) > 1e-9*math.Abs(sum/float64(len(v))) {
				t.Errorf("%s %s: %d values, max %v, mean %v; exact %d, %v, %v", tc.design, c.name, c.sk.Count(), c.sk.Max(), c.sk.Mean(), len(v), v[len(v)-1], sum/float64(len(v)))
			}
			for _, q := range []float64{0.5, 0.9, 0.99} {
				rank := q * float64(len(v)-1)
				lo := int(rank)
				want := v[lo]
				if lo+1 < len(v) {
					want += (rank - float64(lo)) * (v[lo+1] - v[lo])
				}
				if got := c.sk.Quantile(q); math.Abs(got-want) > quantile.RelativeError*want+1e-12 {
					t.Errorf("%s %s P%g: %v, exact %v", tc.design, c.name, 100*q, got, want)
				}
			}
		}
	}
}
