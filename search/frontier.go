package search

import (
	"fmt"
)

// lowT is the largest token count the analytic bound proves infeasible
// at prompt machines and rate (0 when it proves nothing).
func (d *designSearch) lowT(prompt, tb int, rate float64) int {
	lo := 0
	for t := 1; t <= tb; t++ {
		cl, err := d.cluster(prompt, t)
		if err != nil || d.s.upperBoundRPS(cl) >= rate {
			break
		}
		lo = t
	}
	return lo
}

// frontierMin returns the point of least key that is feasible at rate,
// walking the feasibility frontier: feasibility only grows with either
// machine count, so for each P it finds the fewest token machines below
// the previous P's, galloping down from there. The optimum is always
// confirmed by a simulation.
//
// With bisect set, the first prompt count worth walking from is found by
// bisection (see firstFeasibleP); the throughput goal's final walk, at the
// highest capacity where feasibility is at its noisiest, scans instead.
//
// incumbent, when not nil, is a point already known feasible at rate: the
// walk only looks for points that beat it.
func (d *designSearch) frontierMin(reg region, rate float64, bisect bool, incumbent *Point) (*Point, error) {
	if d.design.IsBaseline() {
		// As the walk does, the incumbent stands when the search finds
		// nothing: its fewest-machines search infers verdicts across
		// rates (a point infeasible at a lower rate is infeasible at this
		// one), so an isolated infeasible rate below this one, which the
		// capacity search stepped over by simulating past it, hides an
		// incumbent simulated feasible here.
		pt, err := d.baselineMin(reg.pmax, rate)
		if err == nil && pt == nil {
			return incumbent, nil
		}
		return pt, err
	}
	tFeas := 0 // a token count known feasible at the previous P
	pStart := 1
	if bisect {
		p, found, err := d.firstFeasibleP(reg, rate)
		if err != nil {
			return nil, err
		}
		if pStart = p; found {
			tFeas = reg.tb[pStart] // (pStart, tb) was found feasible
		}
	}
	return d.frontierWalk(reg, rate, pStart, tFeas, incumbent)
}

// frontierWalk is frontierMin's walk from prompt count pStart, tFeas (when
// not 0) a token count known feasible at pStart.
func (d *designSearch) frontierWalk(reg region, rate float64, pStart, tFeas int, incumbent *Point) (*Point, error) {
	best := incumbent
	var bestKey key
	if best != nil {
		bestKey = d.key(best.Prompt, best.Token)
	}
	canBeat := func(p, t int) bool { return best == nil || less(d.key(p, t), bestKey) }
	for p := pStart; p <= reg.pmax; p++ {
		tb := reg.tb[p]
		if tb < 1 {
			break
		}
		if !canBeat(p, 1) {
			break // every later point costs more
		}
		lo := d.lowT(p, tb, rate)
		if lo >= tb {
			continue
		}
		proven := lo // token counts ≤ proven are infeasible by the bound
		// tBeat is the most token machines at which p could still beat the
		// incumbent.
		tBeat := tb
		for tBeat > lo && !canBeat(p, tBeat) {
			tBeat--
		}
		if tBeat <= lo {
			continue
		}
		hi := tFeas
		if hi > tb {
			hi = 0
		}
		// Without a known feasible count, probe the most token machines
		// worth having: tBeat once there is an incumbent (p wins only
		// with at most that many), else all tb.
		probe := 0
		switch {
		case best != nil && (hi == 0 || hi > tBeat):
			probe = tBeat
		case hi == 0:
			probe = tb
		}
		if probe > 0 {
			ok, err := d.feasible(p, probe, rate)
			if err != nil {
				return nil, err
			}
			if !ok {
				continue
			}
			hi = probe
		}
		// (p, hi) is feasible; find the fewest token machines in (lo, hi].
		for step := 1; hi-lo > 1; step *= 2 {
			c := hi - step
			if c <= lo {
				break
			}
			ok, err := d.feasible(p, c, rate)
			if err != nil {
				return nil, err
			}
			if !ok {
				lo = c
				break
			}
			hi = c
		}
		hi, err := fewestFeasible(lo, hi, func(t int) (bool, error) { return d.feasible(p, t, rate) })
		if err != nil {
			return nil, err
		}
		hi, err = d.skipHoles(hi, proven, func(t int) (bool, error) { return d.simulated(p, t, rate) })
		if err != nil {
			return nil, err
		}
		tFeas = hi
		if canBeat(p, hi) {
			pt, err := d.eval(p, hi, rate) // confirm an inferred point
			if err != nil {
				return nil, err
			}
			if !pt.Feasible {
				tFeas = 0 // feasibility was not monotone here: forget the frontier
				continue
			}
			best, bestKey = pt, d.key(p, hi)
			d.s.report(d.spec.Label(), fmt.Sprintf("%d/%d at %.4g req/s", p, hi, rate))
		}
	}
	return best, nil
}

// firstFeasibleP returns the first prompt count worth walking from: over
// the leading prompt counts that share the same token limit (all of them
// without a budget), feasibility at that limit only grows with P, so a
// bisection finds the first feasible one (found reports that one was).
// It returns 1 when the walk must start from the beginning (a budget makes
// the limit shrink at once), and the first P past the prefix when nothing
// in it is feasible.
func (d *designSearch) firstFeasibleP(reg region, rate float64) (p int, found bool, err error) {
	if reg.pmax < 2 {
		return 1, false, nil
	}
	t := reg.tb[1]
	end := 1
	for end < reg.pmax && reg.tb[end+1] == t {
		end++
	}
	if end < 2 {
		return 1, false, nil
	}
	ok, err := d.feasible(end, t, rate)
	if err != nil || !ok {
		return end + 1, false, err // nothing in the prefix is feasible
	}
	hi, err := fewestFeasible(0, end, func(p int) (bool, error) { return d.feasible(p, t, rate) })
	if err != nil {
		return 0, false, err
	}
	return hi, true, nil
}

// fewestFeasible bisects (lo, hi] for the smallest count feasible, given
// hi feasible and lo not (or 0): feasibility grows with the count.
func fewestFeasible(lo, hi int, feasible func(int) (bool, error)) (int, error) {
	for hi-lo > 1 {
		mid := (lo + hi) / 2
		ok, err := feasible(mid)
		if err != nil {
			return 0, err
		}
		if ok {
			hi = mid
		} else {
			lo = mid
		}
	}
	return hi, nil
}

// baselineMin finds the fewest machines feasible at rate by bisection.
func (d *designSearch) baselineMin(nmax int, rate float64) (*Point, error) {
	if nmax < 1 {
		return nil, nil
	}
	lo := 0
	for n := 1; n <= nmax; n++ {
		cl, err := d.cluster(n, 0)
		if err != nil {
			return nil, err
		}
		if d.s.upperBoundRPS(cl) >= rate {
			break
		}
		lo = n
	}
	if lo >= nmax {
		// Record the pruned point.
		if _, err := d.eval(nmax, 0, rate); err != nil {
			return nil, err
		}
		return nil, nil
	}
	proven := lo
	hi := nmax
	ok, err := d.feasible(hi, 0, rate)
	if err != nil || !ok {
		return nil, err
	}
	if hi, err = fewestFeasible(lo, hi, func(n int) (bool, error) { return d.feasible(n, 0, rate) }); err != nil {
		return nil, err
	}
	if hi, err = d.skipHoles(hi, proven, func(n int) (bool, error) { return d.simulated(n, 0, rate) }); err != nil {
		return nil, err
	}
	return d.eval(hi, 0, rate)
}

// simulated is feasible without inference: the probes that look for
// isolated holes must simulate.
func (d *designSearch) simulated(prompt, token int, rate float64) (bool, error) {
	pt, err := d.eval(prompt, token, rate)
	if err != nil {
		return false, err
	}
	return pt.Feasible, nil
}

// skipHoles continues a descent below hi, the fewest machines found
// feasible, across isolated infeasible points: feasibility is monotone
// in practice but a simulation near the boundary can fail at one count
// and pass at the next lower one. It steps down while hi−1 or hi−2 is
// feasible, never below proven (infeasible by the analytic bound).
func (d *designSearch) skipHoles(hi, proven int, feasible func(int) (bool, error)) (int, error) {
	for {
		moved := false
		for _, c := range []int{hi - 1, hi - 2} {
			if c <= proven || c < 1 {
				break
			}
			ok, err := feasible(c)
			if err != nil {
				return 0, err
			}
			if ok {
				hi, moved = c, true
				break
			}
		}
		if !moved {
			return hi, nil
		}
	}
}
