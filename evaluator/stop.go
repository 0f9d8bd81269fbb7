package evaluator

import (
	"fmt"
	"math"
)

// Stop ends a simulation as soon as its failure of a latency limit is
// certain, whatever happens in the rest of the run (Options.Stop). A
// search spends most of its time simulating clusters that fail; most
// fail by far, and their failure is settled long before their queues
// drain.
//
// A request's latency only grows while it is unfinished: at simulated
// time t, a request that arrived at a and has no first token yet will
// have a TTFT of at least t − a, an unfinished one an E2E of at least
// t − a, and one whose first token came at f, with o output tokens, a
// TBT ((E2E − TTFT) / (o − 1)) of at least (t − f) / (o − 1). So once
// Count requests are certainly over a limit, the limit's percentile is
// over it too (slo.CertainlyOver gives the Count for a percentile), and
// the simulation can stop.
type Stop struct {
	// Limits are the latency limits checked; the first certainly failed
	// stops the simulation.
	Limits []StopLimit
	// Reference holds each request's reference latencies in seconds,
	// request by request in the workload's order (one per request
	// simulated), StopMetrics of them a request in StopMetric's order
	// (TTFT, E2E, TBT): a relative limit divides a request's latency by
	// its reference of the limit's metric (a slowdown, as slo.Check
	// computes it).
	Reference []float64
}

// StopLimit is one latency limit of a Stop. A request is over it when
// its latency is over AbsoluteS, for an absolute limit (AbsoluteS > 0),
// else when its latency divided by its reference latency is over Factor;
// a NaN latency or quotient (a request of one output token has no TBT)
// is never over.
type StopLimit struct {
	// Name names the limit in Result.StopReason, e.g. "P99 TTFT".
	Name string
	// Metric is the latency the limit is on (the zero value: the TTFT).
	Metric StopMetric
	// Count is how many requests over the limit settle the failure (at
	// least 1).
	Count int
	// Factor is a relative limit's largest slowdown not over it.
	Factor float64
	// AbsoluteS, when above 0, is the largest latency in seconds not over
	// the limit (Factor is then not read).
	AbsoluteS float64
}

// StopMetric is the latency a StopLimit bounds.
type StopMetric uint8

const (
	// StopTTFT is the time to first token.
	StopTTFT StopMetric = iota
	// StopE2E is the end-to-end latency.
	StopE2E
	// StopTBT is the mean time between tokens, (E2E − TTFT) / (output −
	// 1), as RequestLatency.TBT computes it; a request of one output
	// token has none and is never over.
	StopTBT
	// StopMetrics is the number of metrics, and of Stop.Reference's
	// latencies a request.
	StopMetrics = 3
)

// stopCheckEvents is how many events the event loop handles at least
// between two looks at Options.Stop's limits (checkStop); a power of two,
// dividing ctxCheckEvents: the loop considers a look at every
// stopCheckEvents-th event, where it also looks at its context.
const stopCheckEvents = 1 << 10

// validate checks the limits against n requests.
func (st *Stop) validate(n int) error {
	if len(st.Reference) != n*StopMetrics {
		return fmt.Errorf("stop: %d reference latencies for %d requests (want %d, %d a request)", len(st.Reference), n, n*StopMetrics, StopMetrics)
	}
	for k, l := range st.Limits {
		switch {
		case l.Count < 1:
			return fmt.Errorf("stop limit %d (%s): count must be at least 1, got %d", k+1, l.Name, l.Count)
		case l.Metric >= StopMetrics:
			return fmt.Errorf("stop limit %d (%s): unknown metric %d", k+1, l.Name, l.Metric)
		case !(l.AbsoluteS >= 0) || (l.AbsoluteS == 0 && !(l.Factor >= 0)):
			return fmt.Errorf("stop limit %d (%s): the limit must be a factor or a number of seconds of at least 0, got factor %v, %v s", k+1, l.Name, l.Factor, l.AbsoluteS)
		}
	}
	return nil
}

// stopState is a simulation's progress against Options.Stop: done[k]
// counts the finished requests over limit k; next is the event count of
// the next check.
type stopState struct {
	limits []StopLimit
	ref    []float64  // Stop.Reference
	over   []stopOver // over[k]: how limit k is checked
	done   []int
	live   []int // scratch: done plus the live requests over, at a check
	next   int
}

// stopOver is how count checks a limit: the value at index at of its
// latencies and slowdowns (stopValues) is over it when above limit.
type stopOver struct {
	at    uint8
	limit float64
}

// stopValues are a request's latencies (TTFT, E2E, TBT) and then its
// slowdowns, each latency over its reference.
type stopValues [2 * StopMetrics]float64

func newStopState(st *Stop) *stopState {
	k := len(st.Limits)
	ss := &stopState{limits: st.Limits, ref: st.Reference, over: make([]stopOver, k), done: make([]int, k), live: make([]int, k)}
	for i, l := range st.Limits {
		if l.AbsoluteS > 0 {
			ss.over[i] = stopOver{at: uint8(l.Metric), limit: l.AbsoluteS}
		} else {
			ss.over[i] = stopOver{at: uint8(StopMetrics + l.Metric), limit: l.Factor}
		}
	}
	return ss
}

// count adds to counts[k] whether request i of the workload, with TTFT
// ttft, E2E e2e and TBT tbt (or lower bounds of them; a NaN TBT is
// unknown), is over limit k, for every k. Its reference latencies are
// read once, 24 bytes a request: the limits of every target derive from
// them (one array of each request's limits, 72 bytes a request under the
// paper's nine targets, was a cache miss a finished request).
func (ss *stopState) count(counts []int, i int32, ttft, e2e, tbt float64) {
	j := int(i) * StopMetrics
	ref := ss.ref[j : j+StopMetrics : j+StopMetrics]
	v := stopValues{ttft, e2e, tbt, ttft / ref[StopTTFT], e2e / ref[StopE2E], tbt / ref[StopTBT]}
	counts = counts[:len(ss.over)]
	for k, o := range ss.over {
		// (o.at is below 2·StopMetrics; the remainder spares the bounds check.)
		if v[o.at%(2*StopMetrics)] > o.limit {
			counts[k]++
		}
	}
}

// stopFinished counts request r (a state slot), finished at now, against
// the limits: its TTFT, E2E and TBT as recordState and RequestLatency.TBT
// compute them.
func (s *sim) stopFinished(r int32, now float64) {
	st := &s.st[r]
	ttft, e2e := st.firstToken-st.arrival, now-st.arrival
	s.stop.count(s.stop.done, st.req, ttft, e2e, tbtOf(ttft, e2e, st.output))
}

// tbtOf is RequestLatency.TBT of a request of output tokens with latencies
// ttft and e2e (NaN for one output token: it has no TBT).
func tbtOf(ttft, e2e float64, output int32) float64 {
	if output > 1 {
		return (e2e - ttft) / float64(output-1)
	}
	return math.NaN()
}

// checkStop stops the simulation when a limit's failure is certain: the
// finished requests over it and the live ones certainly over it (see
// latencyBounds) are Count or more. n is the event loop's count, now the
// time of the next event or arrival, before which nothing more happens.
// The next check comes stopCheckEvents later, or as many events later as
// requests are live, whichever is later: the scan of the live requests
// then costs at most one look per event.
func (s *sim) checkStop(n int, now float64) {
	ss := s.stop
	ss.next = n + max(stopCheckEvents, len(s.st)-len(s.free))
	copy(ss.live, ss.done)
	for i := range s.st {
		st := &s.st[i]
		if st.phase == phDone {
			continue // a free slot
		}
		ttft, e2e, tbt := latencyBounds(st, now)
		if s.onStopCheck != nil {
			s.onStopCheck(st, ttft, e2e, tbt)
		}
		ss.count(ss.live, st.req, ttft, e2e, tbt)
	}
	for k := range ss.limits {
		l := &ss.limits[k]
		if ss.live[k] >= l.Count {
			s.abort = true
			s.out.Stopped, s.out.StopLimit, s.out.StopS = true, l.Name, now
			s.out.StopReason = fmt.Sprintf("stopped at %.1f s of simulated time: %d requests already over the %s limit, enough to fail it (%d needed)",
				now, ss.live[k], l.Name, l.Count)
			return
		}
	}
}

// latencyBounds are lower bounds of the TTFT, the E2E and the TBT of the
// live request of state st, at now, a time before which nothing more
// happens: its first token (if not out yet) and its end come at now or
// later, so its latency so far is a lower bound of each. A request's
// first token is out from its transfer on (phases phTransfer and later):
// its TTFT is then known, and its TBT at least its time since over its
// gaps to come (as RequestLatency.TBT divides, from the same latencies);
// a prompt, even chunked, has none before its last chunk ends (its TBT
// is then unknown: NaN).
func latencyBounds(st *reqState, now float64) (ttft, e2e, tbt float64) {
	e2e = now - st.arrival
	ttft, tbt = e2e, math.NaN()
	if st.phase >= phTransfer {
		ttft = st.firstToken - st.arrival
		tbt = tbtOf(ttft, e2e, st.output)
	}
	return ttft, e2e, tbt
}
