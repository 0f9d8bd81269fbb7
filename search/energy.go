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
	cl := d.models
	idleKW := 0.0
	if cl.PromptPower != nil && cl.TokenPower != nil {
		idleKW = (float64(prompt)*cl.PromptPower.IdleW() + float64(token)*cl.TokenPower.IdleW()) / 1000
	}
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
	cl, err := d.cluster(1, map[bool]int{true: 0, false: 1}[d.design.IsBaseline()])
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
		return d.lowerValue(p, t)-bestKey.obj > 1e-9*math.Max(1, math.Abs(bestKey.obj))
	}
	consider := func(p, t int) error {
		if beyond(p, t) {
			return nil
		}
		pt, err := d.eval(p, t, rate)
		if err != nil {
			return err
		}
		if k := d.s.keyOf(*pt); pt.Feasible && (best == nil || less(k, bestKey)) {
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
