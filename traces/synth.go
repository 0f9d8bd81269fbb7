package traces

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"

	"gonum.org/v1/gonum/stat/distuv"
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

// Arrivals shapes synthesized arrival times beyond a constant Poisson
// rate: a rate profile and burstiness. The zero value is a constant rate.
type Arrivals struct {
	// Profile, when not nil, varies the rate over time: the rate at t is
	// rps/Profile.Mean() times the profile's (rps the mean rate).
	Profile *Profile
	// BurstCV is the coefficient of variation of the gaps between
	// arrivals (gamma distributed, in the profile's warped time): 1 (or 0,
	// unset) is Poisson, above 1 burstier, below 1 more regular.
	BurstCV float64
}

// poisson reports whether a are plain Poisson arrivals at a constant rate
// (a profile whose rate never changes is one: scaled to a mean, it is that
// rate).
func (a Arrivals) poisson() bool {
	return (a.Profile == nil || a.Profile.Constant()) && (a.BurstCV == 0 || a.BurstCV == 1)
}

// Shaped returns a without a profile whose rate never changes (the same
// arrivals at any mean rate, exactly).
func (a Arrivals) Shaped() Arrivals {
	if a.Profile != nil && a.Profile.Constant() {
		a.Profile = nil
	}
	return a
}

// Check validates a (a BurstCV of 0, the zero value, is Poisson).
func (a Arrivals) Check() error {
	if a.BurstCV == 0 {
		return nil
	}
	return CheckBurstCV(a.BurstCV)
}

// MinBurstCV is the least burstiness (coefficient of variation of the
// gaps) taken.
const MinBurstCV = 0.01

// CheckBurstCV validates a burstiness given (a flag's or a plan's value):
// a coefficient of variation of the gaps in [MinBurstCV, 10]. Below
// MinBurstCV the gaps are a clock's (gamma shape 1/cv² beyond 10⁴), and a
// shape of 1/cv² overflowing to +Inf left the gamma sampler looping.
func CheckBurstCV(cv float64) error {
	if !(cv >= MinBurstCV && cv <= 10) {
		return fmt.Errorf("burstiness %v: expected a coefficient of variation of the gaps from %g (nearly a clock's) to 10 (1 is Poisson)", cv, MinBurstCV)
	}
	return nil
}

// Describe says how the arrivals at mean rate rps are shaped, e.g.
// "Poisson at 70 req/s" or "diurnal:… (mean 65, …) scaled to a mean of
// 70 req/s, gaps CV 2".
func (a Arrivals) Describe(rps float64) string {
	s := fmt.Sprintf("%g req/s", rps)
	if a.Profile != nil {
		s = a.Profile.String()
		if math.Abs(rps-a.Profile.Mean()) > 1e-9*rps {
			s += fmt.Sprintf(" scaled to a mean of %g req/s", rps)
		}
	}
	if a.BurstCV != 0 && a.BurstCV != 1 {
		s += fmt.Sprintf(", bursty (gaps CV %g)", a.BurstCV)
	}
	return s
}

// SynthesizeArrivals is SynthesizeContext with arrivals shaped by arr at a
// mean rate of rps; sources also returns each request's size source (see
// SynthesizeSources). A request arrives at t = arr.Profile.Warp(u, rps),
// u its arrival in a unit-rate sequence of gaps (exponential, or gamma
// with arr.BurstCV), so with a constant rate it is Synthesize's workload.
func SynthesizeArrivals(ctx context.Context, d *Distribution, rps, durationS float64, seed uint64, independent, sources bool, arr Arrivals, progress func(drawn int)) ([]Request, []int32, error) {
	if err := arr.Check(); err != nil {
		return nil, nil, fmt.Errorf("traces: synthesize: %w", err)
	}
	if arr.poisson() {
		return synthesize(ctx, d, rps, durationS, seed, independent, sources, progress)
	}
	return synthesizeShaped(ctx, d, rps, durationS, seed, independent, sources, arr, progress)
}

// synthesizeShaped is SynthesizeArrivals for a profile or burstiness.
func synthesizeShaped(ctx context.Context, d *Distribution, rps, durationS float64, seed uint64, independent, sources bool, arr Arrivals, progress func(int)) ([]Request, []int32, error) {
	if err := checkSynth(d, rps, durationS); err != nil {
		return nil, nil, err
	}
	rng := rand.New(rand.NewPCG(seed, pcgStream))
	gap := rng.ExpFloat64
	if cv := arr.BurstCV; cv != 0 && cv != 1 {
		g := distuv.Gamma{Alpha: 1 / (cv * cv), Beta: 1 / (cv * cv), Src: rng}
		gap = g.Rand
	}
	at := func(u float64) float64 { return u / rps }
	if arr = arr.Shaped(); arr.Profile != nil {
		at = func(u float64) float64 { return arr.Profile.Warp(u, rps) }
	}
	u := 0.0
	return drawRequests(ctx, d, rps*durationS, durationS, rng, independent, sources, progress, func() float64 {
		u += gap()
		return at(u)
	})
}

// drawRequests draws requests arriving at the times next returns (in
// order) until one reaches durationS, their sizes from d; mean is the
// number expected (room is made for it). It looks at ctx and calls
// progress every synthCheck requests.
func drawRequests(ctx context.Context, d *Distribution, mean, durationS float64, rng *rand.Rand, independent, sources bool, progress func(int), next func() float64) ([]Request, []int32, error) {
	reqs := make([]Request, 0, int(mean+4*math.Sqrt(mean)+16))
	var src []int32
	if sources {
		src = make([]int32, 0, cap(reqs))
	}
	for {
		t := next()
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
		p, o, idx := d.draw(rng, independent)
		if sources {
			src = append(src, int32(idx))
		}
		reqs = append(reqs, Request{ID: len(reqs), Arrival: t, PromptTokens: p, OutputTokens: o})
	}
}

// draw draws one request's sizes: a joint pair (idx its index) or, with
// independent, prompt and output apart (idx −1).
func (d *Distribution) draw(rng *rand.Rand, independent bool) (prompt, output, idx int) {
	if independent {
		prompt, output = d.SampleIndependent(rng)
		return prompt, output, -1
	}
	idx = d.sampleIndex(rng)
	return int(d.pairs[idx].prompt), int(d.pairs[idx].output), idx
}

// checkSynth validates synthesis arguments.
func checkSynth(d *Distribution, rps, durationS float64) error {
	switch {
	case d == nil || d.Len() == 0:
		return errors.New("traces: synthesize: the size distribution has no requests")
	case math.IsNaN(rps) || math.IsInf(rps, 0) || rps <= 0:
		return fmt.Errorf("traces: synthesize: rate %v is not a positive number of requests per second", rps)
	case math.IsNaN(durationS) || math.IsInf(durationS, 0) || durationS <= 0:
		return fmt.Errorf("traces: synthesize: duration %v is not a positive number of seconds", durationS)
	case rps*durationS > MaxSynthesized:
		return fmt.Errorf("traces: synthesize: %v req/s for %v s is about %.3g requests, more than %d",
			rps, durationS, rps*durationS, MaxSynthesized)
	}
	return nil
}

// synthesize is SynthesizeContext, recording each request's source index
// when sources is set.
func synthesize(ctx context.Context, d *Distribution, rps, durationS float64, seed uint64, independent, sources bool, progress func(int)) ([]Request, []int32, error) {
	if err := checkSynth(d, rps, durationS); err != nil {
		return nil, nil, err
	}
	rng := rand.New(rand.NewPCG(seed, pcgStream))
	t := 0.0
	return drawRequests(ctx, d, rps*durationS, durationS, rng, independent, sources, progress, func() float64 {
		t += rng.ExpFloat64() / rps
		return t
	})
}
