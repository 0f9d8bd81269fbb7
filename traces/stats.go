package traces

import "slices"

// Summary describes one size (prompt or output tokens) over a workload.
// Percentiles interpolate linearly between order statistics: the
// p-quantile of n sorted values x is x[⌊h⌋] + (h−⌊h⌋)·(x[⌊h⌋+1] − x[⌊h⌋])
// with h = (n−1)·p (numpy's default, "type 7"), so P50 of an even count is
// the mean of the two middle values.
type Summary struct {
	// Mean is the arithmetic mean.
	Mean float64
	// P50, P90 and P99 are the 50th, 90th and 99th percentiles.
	P50, P90, P99 float64
	// Max is the largest value.
	Max int
}

// Stats summarizes a workload.
type Stats struct {
	// Requests is the number of requests.
	Requests int
	// DurationS is the last arrival minus the first, in seconds: 0 for a
	// single request.
	DurationS float64
	// RateRPS is the mean arrival rate, Requests / DurationS, in requests
	// per second; 0 when DurationS is 0.
	RateRPS float64
	// Prompt and Output summarize the prompt and output token counts.
	Prompt, Output Summary
}

// Summarize computes the statistics of reqs, which must be in arrival
// order (as Read and Synthesize return them). The zero Stats describes no
// requests.
func Summarize(reqs []Request) Stats {
	n := len(reqs)
	if n == 0 {
		return Stats{}
	}
	s := Stats{Requests: n, DurationS: reqs[n-1].Arrival - reqs[0].Arrival}
	if s.DurationS > 0 {
		s.RateRPS = float64(n) / s.DurationS
	}
	x := make([]float64, n)
	for i, r := range reqs {
		x[i] = float64(r.PromptTokens)
	}
	s.Prompt = summarize(x)
	for i, r := range reqs {
		x[i] = float64(r.OutputTokens)
	}
	s.Output = summarize(x)
	return s
}

// summarize sorts x in place and summarizes it; x is not empty.
func summarize(x []float64) Summary {
	sum := 0.0
	for _, v := range x {
		sum += v
	}
	slices.Sort(x)
	return Summary{
		Mean: sum / float64(len(x)),
		P50:  quantileSorted(x, 0.50),
		P90:  quantileSorted(x, 0.90),
		P99:  quantileSorted(x, 0.99),
		Max:  int(x[len(x)-1]),
	}
}
