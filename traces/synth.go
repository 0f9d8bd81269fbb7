package traces

import (
	"context"
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
	reqs, _, err := synthesize(context.Background(), d, rps, durationS, seed, independent, false, nil)
	return reqs, err
}

// synthCheck is how many requests synthesis draws between two looks at
// its context and its progress callback.
const synthCheck = 1 << 16

// SynthesizeContext is Synthesize stopping with ctx's error (and no
// requests) soon after ctx is done, calling progress, when not nil, with
// the number of requests drawn so far every few tens of thousands of
// requests. The requests are those Synthesize returns.
func SynthesizeContext(ctx context.Context, d *Distribution, rps, durationS float64, seed uint64, independent bool, progress func(drawn int)) ([]Request, error) {
	reqs, _, err := synthesize(ctx, d, rps, durationS, seed, independent, false, progress)
	return reqs, err
}

// SynthesizeSources is Synthesize that also returns, for each request, the
// index in d of the size pair it took: for a distribution made by
// FromRequests, the index of the trace request (in file order) whose sizes
// it has. Sizes drawn independently have no source: their index is -1.
// The requests are those Synthesize returns.
func SynthesizeSources(d *Distribution, rps, durationS float64, seed uint64, independent bool) ([]Request, []int32, error) {
	return synthesize(context.Background(), d, rps, durationS, seed, independent, true, nil)
}

// synthesize is SynthesizeContext, recording each request's source index
// when sources is set.
func synthesize(ctx context.Context, d *Distribution, rps, durationS float64, seed uint64, independent, sources bool, progress func(int)) ([]Request, []int32, error) {
	switch {
	case d == nil || d.Len() == 0:
		return nil, nil, errors.New("traces: synthesize: the size distribution has no requests")
	case math.IsNaN(rps) || math.IsInf(rps, 0) || rps <= 0:
		return nil, nil, fmt.Errorf("traces: synthesize: rate %v is not a positive number of requests per second", rps)
	case math.IsNaN(durationS) || math.IsInf(durationS, 0) || durationS <= 0:
		return nil, nil, fmt.Errorf("traces: synthesize: duration %v is not a positive number of seconds", durationS)
	case rps*durationS > MaxSynthesized:
		return nil, nil, fmt.Errorf("traces: synthesize: %v req/s for %v s is about %.3g requests, more than %d",
			rps, durationS, rps*durationS, MaxSynthesized)
	}
	rng := rand.New(rand.NewPCG(seed, pcgStream))
	mean := rps * durationS
	reqs := make([]Request, 0, int(mean+4*math.Sqrt(mean)+16))
	var src []int32
	if sources {
		src = make([]int32, 0, cap(reqs))
	}
	t := 0.0
	for {
		t += rng.ExpFloat64() / rps
		if t >= durationS {
			return reqs, src, nil
		}
		if len(reqs)%synthCheck == synthCheck-1 {
			if err := ctx.Err(); err != nil {
				return nil, nil, err
			}
			if progress != nil {
				progress(len(reqs))
			}
		}
		var p, o int
		idx := -1
		if independent {
			p, o = d.SampleIndependent(rng)
		} else {
			idx = d.sampleIndex(rng)
			p, o = int(d.pairs[idx].prompt), int(d.pairs[idx].output)
		}
		if sources {
			src = append(src, int32(idx))
		}
		reqs = append(reqs, Request{ID: len(reqs), Arrival: t, PromptTokens: p, OutputTokens: o})
	}
}
