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
// have a TTFT of at least t − a, and an unfinished one an E2E of at least
// t − a. So once Count requests are certainly over a limit, the limit's
// percentile is over it too (slo.CertainlyOver gives the Count for a
// percentile), and the simulation can stop.
type Stop struct {
	// Limits are the latency limits checked; the first certainly failed
	// stops the simulation.
	Limits []StopLimit
}

// StopLimit is one latency limit: request i is over it when its latency
// (TTFT, or E2E when E2E is set) divided by Reference[i] exceeds Factor,
// computed as the SLO check computes the slowdown it compares (an
// absolute limit in seconds: Reference 1 and Factor the limit).
type StopLimit struct {
	// Name names the limit in Result.StopReason, e.g. "P99 TTFT".
	Name string
	// E2E selects the end-to-end latency; otherwise the TTFT.
	E2E bool
	// Reference holds each request's reference latency in seconds, in
	// the workload's order (one per request simulated).
	Reference []float64
	// Factor is the largest allowed latency / Reference.
	Factor float64
	// Count is how many requests over the limit settle the failure (at
	// least 1).
	Count int
}

// stopCheckEvents is how many events the event loop handles between two
// looks at Options.Stop's limits; a power of two, dividing
// ctxCheckEvents (the loop looks at its context at one look in four).
const stopCheckEvents = 1 << 10

// validate checks the limits against n requests.
func (st *Stop) validate(n int) error {
	for i, l := range st.Limits {
		if len(l.Reference) != n {
			return fmt.Errorf("stop limit %d (%s): %d reference latencies for %d requests", i+1, l.Name, len(l.Reference), n)
		}
		if l.Count < 1 {
			return fmt.Errorf("stop limit %d (%s): count must be at least 1, got %d", i+1, l.Name, l.Count)
		}
		if !(l.Factor >= 0) || math.IsInf(l.Factor, 0) {
			return fmt.Errorf("stop limit %d (%s): factor must be a non-negative number, got %v", i+1, l.Name, l.Factor)
		}
	}
	return nil
}

// over reports whether latency lat of request i is over limit l: the
// slowdown the SLO check would compute exceeds the factor.
func (l *StopLimit) over(i int32, lat float64) bool {
	return lat/l.Reference[i] > l.Factor
}

// stopState is a simulation's progress against Options.Stop: done[k]
// counts the finished requests over limit k.
type stopState struct {
	limits []StopLimit
	done   []int
	live   []int // scratch: done plus the live requests over, at a check
}

// stopFinished counts the request of state st, finished at now, against
// the limits.
func (s *sim) stopFinished(st *reqState, ttft, e2e float64) {
	for k := range s.stop.limits {
		l := &s.stop.limits[k]
		lat := ttft
		if l.E2E {
			lat = e2e
		}
		if l.over(st.req, lat) {
			s.stop.done[k]++
		}
	}
}

// checkStop stops the simulation when a limit's failure is certain: the
// finished requests over it and the live ones certainly over it (see
// latencyBounds) are Count or more. now is the time of the next event or
// arrival, before which nothing more happens.
func (s *sim) checkStop(now float64) {
	ss := s.stop
	copy(ss.live, ss.done)
	for i := range s.st {
		st := &s.st[i]
		if st.phase == phDone {
			continue // a free slot
		}
		ttft, sofar := latencyBounds(st, now)
		if s.onStopCheck != nil {
			s.onStopCheck(st, ttft, sofar)
		}
		for k := range ss.limits {
			l := &ss.limits[k]
			lat := ttft
			if l.E2E {
				lat = sofar
			}
			if l.over(st.req, lat) {
				ss.live[k]++
			}
		}
	}
	for k := range ss.limits {
		l := &ss.limits[k]
		if ss.live[k] >= l.Count {
			s.abort = true
			s.out.Stopped = true
			s.out.StopReason = fmt.Sprintf("stopped at %.1f s of simulated time: %d requests already over the %s limit, enough to fail it (%d needed)",
				now, ss.live[k], l.Name, l.Count)
			return
		}
	}
}

// latencyBounds are lower bounds of the TTFT and the E2E of the live
// request of state st, at now, a time before which nothing more happens:
// its first token (if not out yet) and its end come at now or later, so
// its latency so far is a lower bound of each. A request's first token is
// out from its transfer on (phases phTransfer and later): its TTFT is
// then known; a prompt, even chunked, has none before its last chunk
// ends.
func latencyBounds(st *reqState, now float64) (ttft, e2e float64) {
	e2e = now - st.arrival
	ttft = e2e
	if st.phase >= phTransfer {
		ttft = st.firstToken - st.arrival
	}
	return ttft, e2e
}
