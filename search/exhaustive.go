package search

import (
	"golang.org/x/sync/errgroup"
)

// exhaustiveMin simulates every point of the region at rate, at most
// Problem.Parallel at a time (a goroutine per point waiting its turn
// would hold a stack each), and returns the best feasible one. Streamed
// (designSearch.stream), the points are not kept: the best is the one
// evalBound offered.
func (d *designSearch) exhaustiveMin(reg region, rate float64) (*Point, error) {
	pts := d.regionPoints(reg)
	var out []*Point
	if !d.stream {
		out = make([]*Point, len(pts))
	}
	g := errgroup.Group{}
	g.SetLimit(d.s.p.Parallel)
	for i, pt := range pts {
		if d.s.ctx.Err() != nil {
			break // interrupted: start no more points (Wait returns the error)
		}
		g.Go(func() error {
			if err := d.s.ctx.Err(); err != nil {
				return err // interrupted while queued: skip the point's setup
			}
			p, err := d.eval(pt[0], pt[1], rate)
			if out != nil {
				out[i] = p
			}
			return err
		})
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	if err := d.s.ctx.Err(); err != nil {
		return nil, err // the loop stopped before every point had started
	}
	if d.stream {
		if d.bestPt == nil {
			return nil, nil
		}
		b := *d.bestPt
		return &b, nil
	}
	var best *Point
	for _, p := range out {
		if p.Feasible && (best == nil || less(d.s.keyOf(*p), d.s.keyOf(*best))) {
			best = p
		}
	}
	return best, nil
}

// exhaustiveMaxCapacity finds the capacity of every candidate and returns
// the one of highest merit (ties: the least key), simulated at its
// capacity.
func (d *designSearch) exhaustiveMaxCapacity(cands []cand, merit func(cand, int) float64) (*Point, float64, error) {
	s := d.s
	floor := s.minRateIndex()
	caps := make([]int, len(cands))
	g := errgroup.Group{}
	g.SetLimit(s.p.Parallel)
	for i, c := range cands {
		if s.ctx.Err() != nil {
			break // interrupted: start no more candidates (Wait returns the error)
		}
		g.Go(func() error {
			if err := s.ctx.Err(); err != nil {
				return err // interrupted while queued
			}
			k, err := d.capacityOf(c.p, c.t, floor-1, c.ub/2)
			caps[i] = k
			return err
		})
	}
	if err := g.Wait(); err != nil {
		return nil, 0, err
	}
	if err := s.ctx.Err(); err != nil {
		return nil, 0, err // the loop stopped before every candidate had started
	}
	var best *Point
	bestK := floor - 1
	var bestC cand
	for i, c := range cands {
		k := caps[i]
		if k < floor {
			continue
		}
		better := best == nil || merit(c, k) > merit(bestC, bestK)
		if !better && merit(c, k) == merit(bestC, bestK) {
			better = less(d.key(c.p, c.t), d.key(bestC.p, bestC.t))
		}
		if better {
			pt, err := d.eval(c.p, c.t, s.rate(k))
			if err != nil {
				return nil, 0, err
			}
			best, bestK, bestC = pt, k, c
		}
	}
	if best == nil {
		return nil, 0, nil
	}
	return best, s.rate(bestK), nil
}
