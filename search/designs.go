package search

import (
	"math"
	"sort"
	"sync"

	"golang.org/x/sync/errgroup"

	"splitplan/costpower"
)

// Whole designs are bounded before they are simulated when
// Problem.PruneDesigns is set (a generated GPU-pair space of tens to
// hundreds of designs): the analytic upper bound on a cluster's rate
// (upperBoundRPS) is linear in its machine count, so it bounds, over a
// design's whole region, the least objective that can reach the target
// rate (cost and power goals) or the most capacity any point can have
// (throughput goal). Designs are visited most promising first; a design
// whose bound cannot beat the best design found so far is not searched.
//
// The result must not depend on timing or parallelism, so the decision
// reported is made against the final winner, which every order finds (its
// own bound never excludes it): a design is reported pruned exactly when
// its bound cannot beat the winner, whether or not it happened to be
// searched before the winner was known; its simulations are then dropped
// from the result.

// designBound is the analytic bound of design d over its region, and
// whether the goal has one: for the rate goals the least objective of a
// region point whose analytic capacity reaches the rate (+Inf when none
// does); for the throughput goal the most analytic capacity of any region
// point.
func (d *designSearch) designBound(reg region) (float64, bool, error) {
	s := d.s
	if s.p.Goal == GoalBatch {
		return 0, false, nil
	}
	t0 := 1
	if d.design.IsBaseline() {
		t0 = 0
	}
	cl, err := d.cluster(1, t0)
	if err != nil {
		return 0, false, err
	}
	ub1 := s.upperBoundRPS(cl)
	if math.IsInf(ub1, 1) {
		return 0, false, nil
	}
	// Seconds of replica time one request needs at best; the bound is
	// linear in the replicas (a machine may serve several).
	spr := float64(cl.Simulated().Machines()) / ub1
	kp, kt := cl.PromptType.InstancesPerMachine(), cl.TokenType.InstancesPerMachine()
	ubAt := func(p, t int) float64 { return float64(p*kp+t*kt) / spr }
	obj := func(p, t int) float64 {
		if s.p.Goal.NeedsSimulation() {
			return d.lowerValue(p, t) // energy.go
		}
		return s.objective(costpower.Cluster{Design: d.design, PromptType: d.models.PromptType,
			TokenType: d.models.TokenType, Prompt: p, Token: t})
	}
	// (The points are visited, not listed: a space grown to a large
	// budget has up to MaxGrownMachines² of them.)
	if s.p.Goal.NeedsRate() {
		best := math.Inf(1)
		d.eachPoint(reg, func(p, t int) {
			// A tiny tolerance keeps the bound safe against rounding.
			if ubAt(p, t) >= s.p.RateRPS*(1-1e-9) {
				best = math.Min(best, obj(p, t))
			}
		})
		return best, true, nil
	}
	most := 0.0
	d.eachPoint(reg, func(p, t int) { most = math.Max(most, ubAt(p, t)) })
	return most * (1 + 1e-9), true, nil
}

// cannotBeat reports whether a design whose bound is b cannot beat (nor
// tie) the design result w.
func (s *search) cannotBeat(b float64, w DesignResult) bool {
	if s.p.Goal.NeedsRate() {
		m, _ := s.p.Goal.Merit(w)
		return b > m*(1+1e-9)
	}
	return b < w.CapacityRPS
}

// incumbent is the best design result found so far, shared by the
// workers of a pruned search.
type incumbent struct {
	mu    sync.Mutex
	found bool
	best  DesignResult
}

func (in *incumbent) offer(s *search, r DesignResult) {
	if !r.Found {
		return
	}
	in.mu.Lock()
	defer in.mu.Unlock()
	if !in.found || s.beats(r, in.best) {
		in.found, in.best = true, r
	}
}

func (in *incumbent) excludes(s *search, bound float64) bool {
	in.mu.Lock()
	defer in.mu.Unlock()
	return in.found && s.cannotBeat(bound, in.best)
}

// runPruned searches the designs most promising first, at most
// p.Parallel at a time, skipping those the incumbent's merit excludes; the
// first error cancels the others (s.ctx is the group's). skipped[i]
// reports a design not searched.
func (s *search) runPruned(ds []*designSearch, bounds []float64, results []DesignResult, errs []error) (skipped []bool, err error) {
	order := make([]int, len(ds))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool {
		if s.p.Goal.NeedsRate() {
			return bounds[order[a]] < bounds[order[b]]
		}
		return bounds[order[a]] > bounds[order[b]]
	})
	skipped = make([]bool, len(ds))
	var inc incumbent
	g, gctx := errgroup.WithContext(s.ctx)
	s.ctx = gctx
	g.SetLimit(s.p.Parallel)
	for _, i := range order {
		// Go waits for a free slot, so designs start in order.
		g.Go(func() error {
			if err := gctx.Err(); err != nil {
				errs[i] = err
				return nil // the cause is reported by whoever failed
			}
			if inc.excludes(s, bounds[i]) {
				skipped[i] = true
				return nil
			}
			r, err := ds[i].run()
			results[i], errs[i] = r, err
			if err != nil {
				return err
			}
			inc.offer(s, r)
			s.reportFinished(r.Design)
			return nil
		})
	}
	return skipped, g.Wait()
}
