package search

import (
	"fmt"
	"math"

	"splitplan/evaluator"
)

// addEnergy folds the n-th replica's energy figures into the point's
// means; a replica without energy makes the point's energy unknown.
func (pt *Point) addEnergy(res *evaluator.Result, n int) {
	if !res.EnergyKnown || (n > 1 && !pt.EnergyKnown) {
		pt.EnergyKnown, pt.AverageKW, pt.JPerOutputToken = false, 0, 0
		return
	}
	pt.EnergyKnown = true
	pt.AverageKW += (res.AverageKW() - pt.AverageKW) / float64(n)
	pt.JPerOutputToken += (res.JPerOutputToken() - pt.JPerOutputToken) / float64(n)
}

// lowerValue is a lower bound on the objective of the goals that need a
// simulation (GoalEnergy, GoalTCO) at (prompt, token) machines, whatever
// the simulation shows: every machine draws at least its idle power all
// the time, so the cluster's average draw is at least the sum of their
// idle powers. It grows with either count.
func (d *designSearch) lowerValue(prompt, token int) float64 {
	idleKW := d.idleKW(prompt, token)
	if d.s.p.Goal == GoalEnergy {
		return idleKW * 24
	}
	o := d.s.p.Ownership
	return o.ClusterFixedUSDPerH(d.costOf(prompt, token)) + o.EnergyUSDPerH(idleKW)
}

// simulatedMin is the search of the goals whose objective needs the
// simulation (energy, ownership cost), which machine counts alone do not
// order. It walks the feasibility frontier as frontierMin does — for each
// prompt count P, the fewest token machines T(P) that meet the SLOs at
// rate (a baseline: the fewest machines) — and simulates, as candidates,
// every frontier point and its neighbour with one token machine more
// (T(P)+1; a baseline's N+1). The answer is the candidate of least
// objective (ties: fewer machines, then fewer prompt machines), confirmed
// by its simulation.
//
// Guarantee: no candidate is left out on a guess. A prompt count, or a
// candidate, is skipped only when lowerValue — every machine drawing its
// idle power the whole run — already exceeds the best objective found,
// which no simulation can beat. Points above the frontier by two or more
// token machines are not simulated: they hold more machines than a
// candidate at the same P, and draw the work's energy at no less than
// idle power each; their energy could only be lower if spreading the same
// work over more machines saved more dynamic energy than the extra
// machines' idle draw, which the power model (draw per iteration grows
// with its work; idle draw is a floor) makes unlikely but does not rule
// out. An --exhaustive search checks it on a given space.
func (d *designSearch) simulatedMin(reg region, rate float64) (*Point, error) {
	return d.simulatedMinBy(reg, rate, func(pt *Point) float64 { return d.s.keyOf(*pt).obj }, d.lowerValue)
}

// simulatedMinBy is simulatedMin for the objective value (of a simulated
// point) with lower, a lower bound on it at (prompt, token) machines that
// grows with either count.
func (d *designSearch) simulatedMinBy(reg region, rate float64, value func(*Point) float64, lower func(p, t int) float64) (*Point, error) {
	cl, err := d.cluster(d.design.MinCounts())
	if err != nil {
		return nil, err
	}
	if cl.PromptPower == nil || cl.TokenPower == nil {
		return nil, fmt.Errorf("goal %s needs the simulation's energy, and the design has no power model (%s)", d.s.p.Goal, cl.PowerNote)
	}
	var best *Point
	var bestKey key
	beyond := func(p, t int) bool { // lowerValue cannot beat nor tie best
		if best == nil {
			return false
		}
		return lower(p, t)-bestKey.obj > 1e-9*math.Max(1, math.Abs(bestKey.obj))
	}
	consider := func(p, t int) error {
		if beyond(p, t) {
			return nil
		}
		pt, err := d.eval(p, t, rate)
		if err != nil {
			return err
		}
		if k := (key{value(pt), pt.Machines(), pt.Prompt}); pt.Feasible && (best == nil || less(k, bestKey)) {
			best, bestKey = pt, k
			d.s.report(d.spec.Label(), fmt.Sprintf("%s %.4g", pt.Label(), k.obj))
		}
		return nil
	}
	if d.design.IsBaseline() {
		n0, err := d.baselineMin(reg.pmax, rate)
		if err != nil || n0 == nil {
			return nil, err
		}
		for n := n0.Prompt; n <= min(n0.Prompt+1, reg.pmax); n++ {
			if err := consider(n, 0); err != nil {
				return nil, err
			}
		}
		return best, nil
	}
	tPrev := 0 // T(P−1): feasible at P by dominance
	for p := 1; p <= reg.pmax; p++ {
		tb := reg.tb[p]
		if tb < 1 {
			break
		}
		if beyond(p, 1) {
			break // lowerValue grows with P: every later P is beyond too
		}
		lo := d.lowT(p, tb, rate)
		if lo >= tb {
			continue
		}
		feasible := func(t int) (bool, error) { return d.feasible(p, t, rate) }
		hi := tb
		if tPrev > lo && tPrev < tb {
			if ok, err := feasible(tPrev); err != nil {
				return nil, err
			} else if ok {
				hi = tPrev
			}
		}
		if hi == tb {
			ok, err := feasible(tb)
			if err != nil {
				return nil, err
			}
			if !ok {
				continue
			}
		}
		t, err := fewestFeasible(lo, hi, feasible)
		if err != nil {
			return nil, err
		}
		if t, err = d.skipHoles(t, lo, func(t int) (bool, error) { return d.simulated(p, t, rate) }); err != nil {
			return nil, err
		}
		tPrev = t
		for _, c := range []int{t, t + 1} {
			if c <= tb {
				if err := consider(p, c); err != nil {
					return nil, err
				}
			}
		}
	}
	return best, nil
}

// idleKW is the draw of prompt and token machines all idle: a lower bound
// on their average draw under any load. The power models are a replica's
// (power.ForReplica); a machine serving several replicas draws for each.
func (d *designSearch) idleKW(prompt, token int) float64 {
	cl := d.models
	if cl.PromptPower == nil || cl.TokenPower == nil {
		return 0
	}
	kp, kt := cl.PromptType.InstancesPerMachine(), cl.TokenType.InstancesPerMachine()
	return (float64(prompt*kp)*cl.PromptPower.IdleW() + float64(token*kt)*cl.TokenPower.IdleW()) / 1000
}

// withinLimit reports whether (prompt, token) machines fit a budget limit:
// in the budget's unit (objective), or for a drawn power budget, with
// their idle draw (no cluster drawing more even idle can fit it).
func (d *designSearch) withinLimit(prompt, token int, limit float64) bool {
	if d.s.p.PowerBudgetDrawn {
		return d.idleKW(prompt, token) <= limit
	}
	return d.s.objective(d.costOf(prompt, token)) <= limit
}

// maxCapacityDrawn is the throughput goal under a drawn power budget B:
// the highest rate on the grid at which the design's least-drawing
// cluster meeting every SLO (simulatedMinBy on the average drawn kW, with
// the idle draw as its lower bound) draws at most B on average, and that
// cluster. It gallops up the rate grid from the lowest rate, then bisects.
//
// It assumes, as the rest of the search does for feasibility, that the
// least drawn power needed to meet the SLOs only grows with the rate (more
// work at no fewer machines); each rate's answer carries simulatedMin's
// guarantee. Unlike the provisioned budget, the region is every cluster
// whose idle draw fits B (up to MaxMachines per pool): a cluster
// provisioned far beyond B can qualify when it draws little.
func (d *designSearch) maxCapacityDrawn(reg region) (*Point, float64, error) {
	s := d.s
	b := s.p.PowerBudgetKW * (1 + 1e-12)
	kw := func(pt *Point) float64 { return pt.AverageKW }
	at := func(k int) (*Point, error) {
		pt, err := d.simulatedMinBy(reg, s.rate(k), kw, d.idleKW)
		if err != nil || pt == nil || pt.AverageKW > b {
			return nil, err
		}
		return pt, nil
	}
	lo := s.minRateIndex()
	best, err := at(lo)
	if err != nil || best == nil {
		return nil, 0, err
	}
	bad := -1
	for step := 1; bad < 0; step *= 2 {
		if step > 1<<16 {
			return nil, 0, fmt.Errorf("goal throughput with a drawn power budget: %s meets it at every rate tried, up to %.4g req/s", d.spec.Label(), s.rate(lo))
		}
		pt, err := at(lo + step)
		if err != nil {
			return nil, 0, err
		}
		if pt == nil {
			bad = lo + step
			break
		}
		lo, best = lo+step, pt
	}
	for bad-lo > 1 {
		mid := (lo + bad) / 2
		pt, err := at(mid)
		if err != nil {
			return nil, 0, err
		}
		if pt == nil {
			bad = mid
		} else {
			lo, best = mid, pt
		}
	}
	return best, s.rate(lo), nil
}
