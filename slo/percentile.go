package slo

import (
	"math"
	"sort"

	"splitplan/evaluator"
)

// Percentile returns the p-th percentile (0 ≤ p ≤ 100) of sorted values by
// linear interpolation between order statistics (numpy's default "linear"
// method): rank = p/100 × (n − 1). It returns NaN for no values.
func Percentile(sorted []float64, p float64) float64 {
	n := len(sorted)
	if n == 0 {
		return math.NaN()
	}
	if p <= 0 {
		return sorted[0]
	}
	if p >= 100 {
		return sorted[n-1]
	}
	rank := p / 100 * float64(n-1)
	lo := int(math.Floor(rank))
	if lo+1 >= n {
		return sorted[n-1]
	}
	f := rank - float64(lo)
	return sorted[lo] + f*(sorted[lo+1]-sorted[lo])
}

// Dist is the distribution of one metric over requests.
type Dist struct {
	Mean, P50, P90, P99, Max float64
}

// NewDist summarizes values (which it sorts in place).
func NewDist(values []float64) Dist {
	if len(values) == 0 {
		nan := math.NaN()
		return Dist{nan, nan, nan, nan, nan}
	}
	sort.Float64s(values)
	sum := 0.0
	for _, v := range values {
		sum += v
	}
	return Dist{
		Mean: sum / float64(len(values)),
		P50:  Percentile(values, 50), P90: Percentile(values, 90), P99: Percentile(values, 99),
		Max: values[len(values)-1],
	}
}

// Latency summarizes the latencies of a simulation's requests.
type Latency struct {
	// TTFT, TBT, E2E are the time to first token, the mean time between
	// tokens (requests with one output token have none and are left out)
	// and the end-to-end latency, in seconds.
	TTFT, TBT, E2E Dist
	// TBTReference is the reference simulator's TBT, (E2E − TTFT) / output.
	TBTReference Dist
	// Queue is the queueing delay; MaxGap the longest gap between tokens.
	Queue, MaxGap Dist
}

// Summarize computes the latency distributions of res's requests.
func Summarize(res *evaluator.Result) Latency {
	n := len(res.Requests)
	buf := make([]float64, 0, n)
	pick := func(f func(r *evaluator.RequestResult) (float64, bool)) Dist {
		buf = buf[:0]
		for i := range res.Requests {
			if v, ok := f(&res.Requests[i]); ok {
				buf = append(buf, v)
			}
		}
		return NewDist(buf)
	}
	return Latency{
		TTFT:         pick(func(r *evaluator.RequestResult) (float64, bool) { return r.TTFTS, true }),
		TBT:          pick(func(r *evaluator.RequestResult) (float64, bool) { return r.TBTS, r.OutputTokens > 1 }),
		E2E:          pick(func(r *evaluator.RequestResult) (float64, bool) { return r.E2ES, true }),
		TBTReference: pick(func(r *evaluator.RequestResult) (float64, bool) { return r.TBTReferenceS, true }),
		Queue:        pick(func(r *evaluator.RequestResult) (float64, bool) { return r.QueueS, true }),
		MaxGap:       pick(func(r *evaluator.RequestResult) (float64, bool) { return r.MaxGapS, r.OutputTokens > 1 }),
	}
}
