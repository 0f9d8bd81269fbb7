package slo

import (
	"fmt"
	"math"

	"splitplan/evaluator"
)

// Limit bounds one latency of every request, in seconds (a goodput
// limit: DistServe's per-request TTFT and TPOT targets and their kin).
type Limit struct {
	// Metric is TTFT, TBT (the TPOT: the request's mean gap), ITL, Stall,
	// E2E or Queue. A request meets an ITL limit when every one of its
	// gaps does — when its longest gap (its Stall) does: per request the
	// two limits are the same check (they differ as SLO percentiles,
	// token- against request-weighted).
	Metric Metric
	// S is the limit in seconds: a request meets it at a latency ≤ S.
	S float64
}

// String is the limit as flags write it: "ttft ≤ 0.25 s".
func (l Limit) String() string { return fmt.Sprintf("%s ≤ %g s", l.Metric, l.S) }

// Goodput is a joint per-request SLO: a run passes when at least the
// Attainment fraction of its requests meets every limit at once (the
// goodput of DistServe: the rate of requests that meet them all).
type Goodput struct {
	// Attainment is the least fraction of requests, in (0, 1], that must
	// meet every limit, e.g. 0.9.
	Attainment float64
	// Limits must all be met by a request; each metric at most once.
	Limits []Limit
}

// Validate checks the attainment, in (0, 1], and the limits: at least
// one, each on a metric a request has and a positive number of seconds,
// no metric twice.
func (g Goodput) Validate() error {
	if !(g.Attainment > 0 && g.Attainment <= 1) {
		return fmt.Errorf("slo: attainment must be a fraction of requests in (0, 1], e.g. 0.9, got %v", g.Attainment)
	}
	if len(g.Limits) == 0 {
		return fmt.Errorf("slo: goodput needs at least one per-request limit (ttft, tpot, itl, stall, e2e or queue)")
	}
	seen := map[Metric]bool{}
	for _, l := range g.Limits {
		if !l.Metric.valid() {
			return fmt.Errorf("slo: goodput limit on an invalid metric %v (want %s)", l.Metric, metricList())
		}
		if !(l.S > 0) || math.IsInf(l.S, 0) {
			return fmt.Errorf("slo: the per-request %s limit must be a positive number of seconds, got %v", l.Metric, l.S)
		}
		if seen[l.Metric] {
			return fmt.Errorf("slo: the per-request %s limit is given twice", l.Metric)
		}
		seen[l.Metric] = true
	}
	return nil
}

// Scaled returns g with every limit multiplied by scale (DistServe's "SLO
// scale": 0.5 halves every limit); scale must be a positive number.
func (g Goodput) Scaled(scale float64) (Goodput, error) {
	if !(scale > 0) || math.IsInf(scale, 0) {
		return Goodput{}, fmt.Errorf("slo: the SLO scale must be a positive number, got %v", scale)
	}
	out := Goodput{Attainment: g.Attainment, Limits: make([]Limit, len(g.Limits))}
	for i, l := range g.Limits {
		out.Limits[i] = Limit{Metric: l.Metric, S: l.S * scale}
	}
	return out, nil
}

// RequestValues are one request's latencies in seconds, as goodput
// judges them.
type RequestValues struct {
	// TTFTS, TPOTS (the mean gap, (E2E − TTFT) / (output − 1)), StallS
	// (the longest gap), E2ES and QueueS (the scheduling delay). A NaN
	// StallS (unknown) cannot be judged by a Stall or ITL limit.
	TTFTS, TPOTS, StallS, E2ES, QueueS float64
	// OutputTokens is the output's length: a request of one output
	// token has no gap, and meets every TPOT, ITL and Stall limit.
	OutputTokens int
}

// value is the request's latency that a limit on m reads, and whether the
// request has one (a one-token output has no gap).
func (r RequestValues) value(m Metric) (float64, bool) {
	switch m {
	case TTFT:
		return r.TTFTS, true
	case E2E:
		return r.E2ES, true
	case Queue:
		return r.QueueS, true
	case TBT:
		return r.TPOTS, r.OutputTokens > 1
	default: // ITL, Stall: every gap within the limit
		return r.StallS, r.OutputTokens > 1
	}
}

// RequestValuesOf reads the finished requests of a simulation (those with
// a first token) for Goodput.Judge, from its requests or, when it kept
// latencies only (evaluator.Options.LatenciesOnly), from those.
func RequestValuesOf(res *evaluator.Result) []RequestValues {
	n := res.RequestCount()
	out := make([]RequestValues, 0, n)
	for i := 0; i < n; i++ {
		if r, ok := requestValues(res.Latency(i)); ok {
			out = append(out, r)
		}
	}
	return out
}

// requestValues is what goodput reads of a request's latencies, and
// whether it finished (a request of an aborted run may not have).
func requestValues(l evaluator.RequestLatency) (RequestValues, bool) {
	if l.E2ES == 0 && l.TTFTS == 0 {
		return RequestValues{}, false // not finished (an aborted run), as Measure
	}
	return RequestValues{TTFTS: l.TTFTS, TPOTS: l.TBT(), StallS: l.MaxGapS, E2ES: l.E2ES, QueueS: l.SchedDelayS, OutputTokens: int(l.OutputTokens)}, true
}

// GoodputVerdict is the outcome of Goodput.Judge.
type GoodputVerdict struct {
	// Requests is the number of requests judged; Met the number that met
	// every limit at once.
	Requests, Met int
	// Attained is Met / Requests (0 for no requests).
	Attained float64
	// Pass reports whether Attained is at least the Attainment (never
	// with no requests).
	Pass bool
	// PerLimit is the fraction of requests that met each limit alone, in
	// the Limits' order.
	PerLimit []float64
	// Binding is the index in Limits of the limit met by the fewest
	// requests (the first of a tie): the one that binds, or fails worst.
	Binding int
}

// BindingLimit is the limit met by the fewest requests.
func (v GoodputVerdict) BindingLimit(g Goodput) Limit { return g.Limits[v.Binding] }

// Judge counts the requests that meet every limit of g at once and
// compares their fraction with the attainment. It is an error when g is
// invalid (Validate), or when a limit reads a latency a request lacks (a
// Stall or ITL limit on values without their longest gap), or one is NaN
// or negative.
func (g Goodput) Judge(values []RequestValues) (GoodputVerdict, error) {
	if err := g.Validate(); err != nil {
		return GoodputVerdict{}, err
	}
	t := newTally(g)
	for _, r := range values {
		if err := t.add(r); err != nil {
			return GoodputVerdict{}, err
		}
	}
	return t.verdict(), nil
}

// JudgeResult is Judge of the finished requests of res (RequestValuesOf),
// read in place rather than collected first.
func (g Goodput) JudgeResult(res *evaluator.Result) (GoodputVerdict, error) {
	if err := g.Validate(); err != nil {
		return GoodputVerdict{}, err
	}
	t := newTally(g)
	for i := range res.RequestCount() {
		if r, ok := requestValues(res.Latency(i)); ok {
			if err := t.add(r); err != nil {
				return GoodputVerdict{}, err
			}
		}
	}
	return t.verdict(), nil
}

// tally counts the requests that meet a goodput's limits, one at a time.
type tally struct {
	g   Goodput
	v   GoodputVerdict
	met []int // per limit
}

func newTally(g Goodput) *tally {
	return &tally{g: g, v: GoodputVerdict{PerLimit: make([]float64, len(g.Limits))}, met: make([]int, len(g.Limits))}
}

// add counts request r (the Requests-th so far): an error for a latency
// that is NaN or negative.
func (t *tally) add(r RequestValues) error {
	t.v.Requests++
	all := true
	for k, l := range t.g.Limits {
		x, has := r.value(l.Metric)
		if !has {
			t.met[k]++ // no gap to be late
			continue
		}
		if !(x >= 0) {
			what := "a NaN"
			if x < 0 {
				what = "a negative"
			}
			if math.IsNaN(x) && (l.Metric == Stall || l.Metric == ITL) {
				return fmt.Errorf("slo: request %d has no longest gap for the per-request %s limit", t.v.Requests, l.Metric)
			}
			return fmt.Errorf("slo: request %d has %s %s (%v)", t.v.Requests, what, l.Metric, x)
		}
		if x <= l.S {
			t.met[k]++
		} else {
			all = false
		}
	}
	if all {
		t.v.Met++
	}
	return nil
}

// verdict is the verdict on the requests counted.
func (t *tally) verdict() GoodputVerdict {
	v := t.v
	if v.Requests > 0 {
		v.Attained = float64(v.Met) / float64(v.Requests)
		for k := range t.met {
			v.PerLimit[k] = float64(t.met[k]) / float64(v.Requests)
			if t.met[k] < t.met[v.Binding] {
				v.Binding = k
			}
		}
		v.Pass = v.Attained >= t.g.Attainment
	}
	return v
}
