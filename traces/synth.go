package traces

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
)

// MaxSynthesized is the largest expected number of requests (rate times
// duration) Synthesize accepts.
const MaxSynthesized = 100_000_000

// pcgStream is the second PCG seed word; the first is the caller's seed.
const pcgStream = 0x5eed_5b11_7b1a_4e00

// Synthesize generates a workload of Poisson arrivals at rps requests per
// second for durationS seconds: gaps between arrivals are exponential with
// mean 1/rps, the first request arrives after the first gap, and every
// arrival is before durationS. Sizes are drawn from d with Sample (joint
// pairs), or with SampleIndependent when independent is true. The same
// seed gives the same requests. IDs are 0..n−1.
func Synthesize(d *Distribution, rps, durationS float64, seed uint64, independent bool) ([]Request, error) {
	switch {
	case d == nil || d.Len() == 0:
		return nil, errors.New("traces: synthesize: the size distribution has no requests")
	case math.IsNaN(rps) || math.IsInf(rps, 0) || rps <= 0:
		return nil, fmt.Errorf("traces: synthesize: rate %v is not a positive number of requests per second", rps)
	case math.IsNaN(durationS) || math.IsInf(durationS, 0) || durationS <= 0:
		return nil, fmt.Errorf("traces: synthesize: duration %v is not a positive number of seconds", durationS)
	case rps*durationS > MaxSynthesized:
		return nil, fmt.Errorf("traces: synthesize: %v req/s for %v s is about %.3g requests, more than %d",
			rps, durationS, rps*durationS, MaxSynthesized)
	}
	rng := rand.New(rand.NewPCG(seed, pcgStream))
	mean := rps * durationS
	reqs := make([]Request, 0, int(mean+4*math.Sqrt(mean)+16))
	t := 0.0
	for {
		t += rng.ExpFloat64() / rps
		if t >= durationS {
			return reqs, nil
		}
		var p, o int
		if independent {
			p, o = d.SampleIndependent(rng)
		} else {
			p, o = d.Sample(rng)
		}
		reqs = append(reqs, Request{ID: len(reqs), Arrival: t, PromptTokens: p, OutputTokens: o})
	}
}
