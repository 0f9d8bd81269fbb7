package search

import (
	"math"
)

// region is the design space: token machines 1..tb(P) for P = 1..pmax
// (a baseline: token 0, machines 1..pmax), within the budget if any.
type region struct {
	pmax int
	tb   []int // tb[P] is the most token machines at P (0: none fit)
}

func (d *designSearch) region() region {
	s := d.s
	n := s.p.MaxMachines
	limit := math.Inf(1)
	if s.p.Goal.NeedsBudget() {
		limit = s.budget() * (1 + 1e-12)
	}
	r := region{pmax: 0, tb: make([]int, n+1)}
	if d.design.IsBaseline() {
		for p := 1; p <= n; p++ {
			if s.objective(d.costOf(p, 0)) <= limit {
				r.pmax = p
			}
		}
		return r
	}
	for p := 1; p <= n; p++ {
		t := 0
		for t < n && s.objective(d.costOf(p, t+1)) <= limit {
			t++
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
	var pts [][2]int
	if d.design.IsBaseline() {
		for p := 1; p <= reg.pmax; p++ {
			pts = append(pts, [2]int{p, 0})
		}
		return pts
	}
	for p := 1; p <= reg.pmax; p++ {
		for t := 1; t <= reg.tb[p]; t++ {
			pts = append(pts, [2]int{p, t})
		}
	}
	return pts
}
