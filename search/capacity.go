package search

import (
	"fmt"
)

// minRateIndex is the lowest rate the capacity search tries (0.05 req/s).
func (s *search) minRateIndex() int { return s.rateIndex(0.05) }

// capacityOf returns the largest rate index at which (p, t) is feasible,
// searching upward from a known-feasible index lo (or from a guess when
// lo < 0), or minRateIndex()−1 when it is never feasible.
func (d *designSearch) capacityOf(p, t, lo int, guess float64) (int, error) {
	s := d.s
	floor := s.minRateIndex()
	feasibleAt := func(k int) (bool, error) { return d.feasible(p, t, s.rate(k)) }
	if lo < floor {
		k := max(s.rateIndex(guess), floor)
		ok, err := feasibleAt(k)
		if err != nil {
			return 0, err
		}
		if ok {
			lo = k
		} else {
			// Gallop down to a feasible rate.
			hi := k
			for step := 1; ; step *= 2 {
				c := hi - step
				if c < floor {
					c = floor
				}
				ok, err := feasibleAt(c)
				if err != nil {
					return 0, err
				}
				if ok {
					lo = c
					break
				}
				hi = c
				if c == floor {
					return floor - 1, nil
				}
			}
			return d.bisectRate(p, t, lo, hi)
		}
	}
	// Gallop up from lo to an infeasible rate, then bisect.
	hi := lo
	for step := 1; ; step *= 2 {
		c := lo + step
		ok, err := feasibleAt(c)
		if err != nil {
			return 0, err
		}
		if !ok {
			hi = c
			break
		}
		lo = c
	}
	return d.bisectRate(p, t, lo, hi)
}

func (d *designSearch) bisectRate(p, t, lo, hi int) (int, error) {
	for hi-lo > 1 {
		mid := (lo + hi) / 2
		ok, err := d.feasible(p, t, d.s.rate(mid))
		if err != nil {
			return 0, err
		}
		if ok {
			lo = mid
		} else {
			hi = mid
		}
	}
	// Step over isolated infeasible rates, as skipHoles does for machines.
	for {
		ok, err := d.simulated(p, t, d.s.rate(lo+2))
		if err != nil {
			return 0, err
		}
		if !ok {
			return lo, nil
		}
		lo += 2
		for {
			ok, err := d.feasible(p, t, d.s.rate(lo+1))
			if err != nil {
				return 0, err
			}
			if !ok {
				break
			}
			lo++
		}
	}
}

// cand is a point of the capacity search with its analytic bound on the
// rate and its cost.
type cand struct {
	p, t int
	ub   float64
	cost float64
}

// maxCapacity solves the throughput and batch goals: the highest capacity
// (batch: capacity per dollar) in the region, then the least key among the
// points that reach it.
func (d *designSearch) maxCapacity(reg region) (*Point, float64, error) {
	s := d.s
	// The throughput goal's space is the whole region (capacity grows
	// with machines, so branch and bound visits the maximal points and
	// then walks the frontier at the best capacity). The batch goal's
	// space is the clusters that spend the budget: the maximal points.
	var pts [][2]int
	if !s.p.Exhaustive || s.p.Goal == GoalBatch {
		pts = d.maximal(reg)
	} else {
		pts = d.regionPoints(reg)
	}
	if len(pts) == 0 {
		return nil, 0, nil
	}
	cands := make([]cand, len(pts))
	for i, pt := range pts {
		cl, err := d.cluster(pt[0], pt[1])
		if err != nil {
			return nil, 0, err
		}
		cands[i] = cand{pt[0], pt[1], s.upperBoundRPS(cl), cl.CostUSDPerH()}
	}
	batch := s.p.Goal == GoalBatch
	merit := func(c cand, k int) float64 {
		if batch {
			return s.rate(k) / c.cost
		}
		return float64(k)
	}
	floor := s.minRateIndex()
	if s.p.Exhaustive {
		return d.exhaustiveMaxCapacity(cands, merit)
	}
	// Branch and bound over the maximal points. Capacity along the
	// budget's frontier rises and falls with the split between prompt and
	// token machines, so they are visited coarse to fine (the middle, then
	// the middles of each half, and so on) to find a high incumbent early;
	// after that most points need one simulation to show they cannot beat
	// it.
	sorted := make([]cand, 0, len(cands))
	for _, j := range coarseToFine(len(cands)) {
		sorted = append(sorted, cands[j])
	}
	cands = sorted
	bestK := floor - 1
	var bestC cand
	found := false
	// floorFailed: a candidate already failed at every rate down to the
	// floor. Before galloping down from a high guess at the next one (many
	// simulations of heavy traces when the design can meet the SLOs at no
	// rate, e.g. a tensor parallelism too slow for the TBT limits), the
	// floor is tried first: one light simulation; feasibility falls with
	// the rate, so a failure there settles the candidate.
	floorFailed := false
	for _, c := range cands {
		// The least rate index at which c would beat the incumbent.
		need := floor
		if found {
			if batch {
				need = s.rateIndex(merit(bestC, bestK)*c.cost) + 1
			} else {
				need = bestK + 1
			}
			need = max(need, floor)
		}
		if s.rate(need) > c.ub {
			s.pruned.Add(1)
			d.mu.Lock()
			d.pruned++
			d.mu.Unlock()
			continue
		}
		var k int
		var err error
		if found {
			var ok bool
			if ok, err = d.feasible(c.p, c.t, s.rate(need)); err != nil {
				return nil, 0, err
			}
			if !ok && s.rate(need+1) <= c.ub {
				// A capacity steps over an isolated infeasible rate
				// (bisectRate), so c may still beat the incumbent one
				// rate higher, as the exhaustive search would find.
				if ok, err = d.feasible(c.p, c.t, s.rate(need+1)); err != nil {
					return nil, 0, err
				}
				if ok {
					need++
				}
			}
			if !ok {
				continue
			}
			k, err = d.capacityOf(c.p, c.t, need, 0)
		} else {
			if floorFailed {
				ok, err := d.feasible(c.p, c.t, s.rate(floor))
				if err != nil {
					return nil, 0, err
				}
				if !ok {
					continue
				}
			}
			k, err = d.capacityOf(c.p, c.t, floor-1, c.ub/2)
		}
		if err != nil {
			return nil, 0, err
		}
		if k < floor {
			floorFailed = true
			continue
		}
		if !found || merit(c, k) > merit(bestC, bestK) {
			found, bestK, bestC = true, k, c
			d.s.report(d.spec.Label(), fmt.Sprintf("%d/%d at %.4g req/s", c.p, c.t, s.rate(k)))
		}
	}
	if !found {
		return nil, 0, nil
	}
	if batch {
		// The best ratio is reached by bestC; ties in the ratio between
		// points of different cost are broken by key among the maximal
		// points already simulated at their capacity.
		pt, err := d.eval(bestC.p, bestC.t, s.rate(bestK))
		return pt, s.rate(bestK), err
	}
	// The least key among all region points feasible at the best capacity.
	winner, err := d.eval(bestC.p, bestC.t, s.rate(bestK))
	if err != nil {
		return nil, 0, err
	}
	if !winner.Feasible {
		winner = nil // not monotone in the rate: walk without it
	}
	pt, err := d.frontierMin(reg, s.rate(bestK), false, winner)
	if err != nil || pt == nil {
		return nil, 0, err
	}
	return pt, s.rate(bestK), nil
}

// coarseToFine orders 0..n−1 breadth first by interval midpoints: the
// middle, the middles of the two halves, of the four quarters, ...
func coarseToFine(n int) []int {
	out := make([]int, 0, n)
	queue := [][2]int{{0, n}}
	for len(queue) > 0 {
		a, b := queue[0][0], queue[0][1]
		queue = queue[1:]
		if a >= b {
			continue
		}
		m := (a + b) / 2
		out = append(out, m)
		queue = append(queue, [2]int{a, m}, [2]int{m + 1, b})
	}
	return out
}
