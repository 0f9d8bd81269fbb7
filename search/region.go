package search

import (
	"fmt"
	"math"

	"splitplan/costpower"
)

// MaxGrownMachines bounds the machines of a pool when GrowToBudget raises
// the bound to what a budget buys.
const MaxGrownMachines = costpower.MaxPoolMachines

// region is the design space: token machines 1..tb(P) for P = 1..pmax
// (a baseline: token 0, machines 1..pmax), within the budget if any.
type region struct {
	pmax int
	tb   []int // tb[P] is the most token machines at P (0: none fit)
	// n bounds each pool: MaxMachines, or what the budget buys.
	n int
}

// bound is the most machines of a pool: MaxMachines or, with
// GrowToBudget and a budget goal, the most the budget buys in one pool
// (the other holding one machine), when that is more. beyond reports
// that the budget buys more than MaxGrownMachines, where the growth
// stops: the bound, not the budget, would then stop the space, silently,
// and a space of such pools is too large to search.
func (d *designSearch) bound(limit float64) (n int, beyond bool) {
	s := d.s
	n = s.p.MaxMachines
	if !s.p.GrowToBudget || !s.p.Goal.NeedsBudget() || s.p.PowerBudgetDrawn {
		return n, false
	}
	fits := func(p, t int) bool { return s.objective(d.costOf(p, t)) <= limit }
	grow := func(ok func(k int) bool) (int, bool) {
		k := n
		for k < MaxGrownMachines && ok(k+1) {
			k++
		}
		return k, n < MaxGrownMachines && k == MaxGrownMachines && ok(k+1)
	}
	if d.design.IsBaseline() {
		return grow(func(k int) bool { return fits(k, 0) })
	}
	kp, bp := grow(func(k int) bool { return fits(k, 1) })
	kt, bt := grow(func(k int) bool { return fits(1, k) })
	return max(kp, kt), bp || bt
}

// limit is the goal's budget as the space is bounded by it (+Inf for a
// goal without one).
func (d *designSearch) limit() float64 {
	if d.s.p.Goal.NeedsBudget() {
		return d.s.budget() * (1 + 1e-12)
	}
	return math.Inf(1)
}

// BudgetBeyondBoundError refuses a search whose space grows to its
// budget (Problem.GrowToBudget) where the budget buys more than
// MaxGrownMachines machines of one of a design's pools (bound's beyond).
type BudgetBeyondBoundError struct {
	// Design is the first design whose pool the budget would grow past
	// the bound.
	Design string
}

func (e *BudgetBeyondBoundError) Error() string {
	return fmt.Sprintf("search: %s: the budget buys more than %d machines of a pool, where the search's space stops growing to the budget", e.Design, MaxGrownMachines)
}

// boundBinds reports whether pt has a pool at the region's bound that the
// goal's budget (if any) would let grow: then the bound, not the budget,
// stopped the search there.
func (d *designSearch) boundBinds(reg region, pt *Point) bool {
	limit := d.limit()
	fits := func(p, t int) bool { return d.s.objective(d.costOf(p, t)) <= limit }
	if pt.Prompt >= reg.n && fits(pt.Prompt+1, pt.Token) {
		return true
	}
	return !d.design.IsBaseline() && pt.Token >= reg.n && fits(pt.Prompt, pt.Token+1)
}

func (d *designSearch) region() region {
	limit := d.limit()
	n, _ := d.bound(limit)
	r := region{pmax: 0, tb: make([]int, n+1), n: n}
	if d.design.IsBaseline() {
		for p := 1; p <= n; p++ {
			if d.withinLimit(p, 0, limit) {
				r.pmax = p
			}
		}
		return r
	}
	// The most token machines within the limit only falls as P grows.
	t := n
	for p := 1; p <= n; p++ {
		for t > 0 && !d.withinLimit(p, t, limit) {
			t--
		}
		r.tb[p] = t
		if t > 0 {
			r.pmax = p
		}
	}
	return r
}

func (r region) size(baseline bool) int {
	if baseline {
		return r.pmax
	}
	n := 0
	for _, t := range r.tb {
		n += t
	}
	return n
}

// maximal lists the region's points that no other region point dominates
// (more of both machine kinds): for each P, the most token machines, when
// that is more than the next P's.
func (d *designSearch) maximal(reg region) [][2]int {
	if d.design.IsBaseline() {
		if reg.pmax < 1 {
			return nil
		}
		return [][2]int{{reg.pmax, 0}}
	}
	var pts [][2]int
	for p := 1; p <= reg.pmax; p++ {
		t := reg.tb[p]
		if t < 1 {
			continue
		}
		if p < reg.pmax && reg.tb[p+1] >= t {
			continue
		}
		pts = append(pts, [2]int{p, t})
	}
	return pts
}

// regionPoints lists the region's points.
func (d *designSearch) regionPoints(reg region) [][2]int {
	pts := make([][2]int, 0, reg.size(d.design.IsBaseline()))
	d.eachPoint(reg, func(p, t int) { pts = append(pts, [2]int{p, t}) })
	return pts
}

// eachPoint calls f with each of the region's points, in regionPoints'
// order.
func (d *designSearch) eachPoint(reg region, f func(p, t int)) {
	if d.design.IsBaseline() {
		for p := 1; p <= reg.pmax; p++ {
			f(p, 0)
		}
		return
	}
	for p := 1; p <= reg.pmax; p++ {
		for t := 1; t <= reg.tb[p]; t++ {
			f(p, t)
		}
	}
}
