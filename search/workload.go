package search

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sync"

	"splitplan/evaluator"
	"splitplan/traces"
)

// Workload gives the requests of one size distribution at any rate: one
// Poisson sequence of unit rate, its arrival times divided by the rate
// (with a rate profile, warped by the profile scaled to that mean rate).
// Every rate thus sees the same requests in the same order (a higher rate
// a longer prefix, compressed in time), which keeps SLO verdicts monotone
// in the rate.
type Workload struct {
	// Sizes is the size distribution the requests are drawn from.
	Sizes *traces.Distribution
	// DurationS is the length of the workload at every rate.
	DurationS float64
	// Seed seeds the sequence.
	Seed uint64
	// Independent draws prompt and output sizes independently (the
	// reference simulator's generator) instead of as pairs.
	Independent bool
	// Arrivals shapes the arrivals (a rate profile, burstiness); the zero
	// value is Poisson at a constant rate. With a profile, the rate of At
	// is the mean rate: the profile scaled to it.
	Arrivals traces.Arrivals

	mu   sync.Mutex
	unit []traces.Request // arrivals at 1 req/s
	src  []int32          // src[i] is the index in Sizes of unit[i]'s sizes (-1: none)
	span float64          // unit covers arrivals below span
	// recent are the requests of the last rates shared asked for, the
	// newest last: a search simulates many clusters at one rate.
	recent []rateRequests
}

// with returns a workload of w's sizes and arrivals with another seed and
// length (and its own requests): a replica, a scenario's traffic, or w's
// traffic continued.
func (w *Workload) with(seed uint64, durationS float64) *Workload {
	return &Workload{Sizes: w.Sizes, DurationS: durationS, Seed: seed, Independent: w.Independent, Arrivals: w.Arrivals}
}

// rateRequests are the requests at one rate.
type rateRequests struct {
	rps  float64
	reqs []traces.Request
}

// sharedRates is how many rates' requests shared keeps.
const sharedRates = 4

// shared is At for callers that only read the requests (simulations): the
// requests of the last sharedRates rates asked for are kept and handed to
// every caller at that rate, the same values At computes.
func (w *Workload) shared(rps float64) ([]traces.Request, error) {
	w.mu.Lock()
	for _, r := range w.recent {
		if r.rps == rps {
			w.mu.Unlock()
			return r.reqs, nil
		}
	}
	w.mu.Unlock()
	reqs, err := w.At(rps)
	if err != nil {
		return nil, err
	}
	w.mu.Lock()
	if len(w.recent) == sharedRates {
		w.recent = append(w.recent[:0], w.recent[1:]...)
	}
	w.recent = append(w.recent, rateRequests{rps, reqs})
	w.mu.Unlock()
	return reqs, nil
}

// Source returns the index in Sizes of the size pair request id (of the
// requests At returns, at any rate) took: for sizes taken from a trace,
// the index of the trace request in file order. It is -1 when the sizes
// were drawn independently or id was never drawn.
func (w *Workload) Source(id int) int {
	w.mu.Lock()
	defer w.mu.Unlock()
	if id < 0 || id >= len(w.src) {
		return -1
	}
	return int(w.src[id])
}

// DrawnRequestError is a simulation's error about one request whose sizes
// were drawn from a size distribution (an *evaluator.UnservableError):
// Source is the index in the distribution of the pair it took (for a
// trace, the index of the trace request in file order).
type DrawnRequestError struct {
	Source int
	Err    error
}

func (e *DrawnRequestError) Error() string { return e.Err.Error() }

// Unwrap returns the simulation's error.
func (e *DrawnRequestError) Unwrap() error { return e.Err }

// traceSource wraps err, when it is about a request of w drawn from a
// pair of w.Sizes, in a *DrawnRequestError naming the pair.
func (w *Workload) traceSource(err error) error {
	var ue *evaluator.UnservableError
	if errors.As(err, &ue) {
		if src := w.Source(ue.RequestID); src >= 0 {
			return &DrawnRequestError{Source: src, Err: err}
		}
	}
	return err
}

// At returns the requests at rate rps.
func (w *Workload) At(rps float64) ([]traces.Request, error) {
	if !(rps > 0) || math.IsInf(rps, 0) {
		return nil, fmt.Errorf("search: rate %v is not a positive number of requests per second", rps)
	}
	need := w.DurationS * rps
	prof := w.Arrivals.Shaped().Profile // (a constant profile: the constant rate's requests)
	if prof != nil {
		need = prof.Requests(w.DurationS) * rps / prof.Mean()
	}
	w.mu.Lock()
	if need > w.span {
		span := math.Max(need*1.5, 1024)
		if need <= traces.MaxSynthesized {
			span = math.Min(span, traces.MaxSynthesized)
		}
		unit, src, err := traces.SynthesizeArrivals(context.Background(), w.Sizes, 1, span, w.Seed, w.Independent, true,
			traces.Arrivals{BurstCV: w.Arrivals.BurstCV}, nil)
		if err != nil {
			w.mu.Unlock()
			return nil, err
		}
		w.unit, w.src, w.span = unit, src, span
	}
	unit := w.unit
	w.mu.Unlock()
	n := 0
	for n < len(unit) && unit[n].Arrival < need {
		n++
	}
	out := make([]traces.Request, n)
	for i := range out {
		out[i] = unit[i]
		if prof != nil {
			out[i].Arrival = prof.Warp(unit[i].Arrival, rps)
		} else {
			out[i].Arrival = unit[i].Arrival / rps
		}
	}
	return out, nil
}

// meanSizes returns the mean prompt tokens and decode tokens (output − 1)
// of the first requests of the sequence.
func (w *Workload) meanSizes() (prompt, decode float64, err error) {
	reqs, err := w.At(1)
	if err != nil {
		return 0, 0, err
	}
	if len(reqs) < 1000 {
		if reqs, err = w.At(1000 / w.DurationS); err != nil {
			return 0, 0, err
		}
	}
	for _, r := range reqs {
		prompt += float64(r.PromptTokens)
		decode += float64(r.OutputTokens - 1)
	}
	n := float64(len(reqs))
	return prompt / n, decode / n, nil
}
