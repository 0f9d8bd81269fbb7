package slo

import (
	"math/rand/v2"
	"testing"

	"splitplan/evaluator"
)

// BenchmarkMeasureJudge measures and judges the paper's nine SLOs on a
// 20,000-request result (the search's per-simulation SLO cost).
func BenchmarkMeasureJudge(b *testing.B) {
	rng := rand.New(rand.NewPCG(4, 4))
	res := &evaluator.Result{}
	for i := 0; i < 20000; i++ {
		ttft := 0.1 + rng.ExpFloat64()*0.2
		res.Latencies = append(res.Latencies, evaluator.RequestLatency{TTFTS: ttft, QueueS: 0.01 * rng.Float64(), E2ES: ttft + 2*rng.Float64(),
			SchedDelayS: 0.05 * rng.Float64(), PromptTokens: int32(1 + rng.IntN(4000)), OutputTokens: int32(1 + rng.IntN(600))})
	}
	ref := Reference{Perf: flat{}}
	spec := Default()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if v := spec.Judge(Measure(res, ref)); len(v.Figures) != 9 {
			b.Fatal("figures")
		}
	}
}
