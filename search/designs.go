package search

import (
	"math"
	"sort"
	"sync"

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
	pts := d.regionPoints(reg)
	if s.p.Goal.NeedsRate() {
		best := math.Inf(1)
		for _, pt := range pts {
			// A tiny tolerance keeps the bound safe against rounding.
			if ubAt(pt[0], pt[1]) >= s.p.RateRPS*(1-1e-9) {
				best = math.Min(best, obj(pt[0], pt[1]))
			}
		}
		return best, true, nil
	}
	most := 0.0
	for _, pt := range pts {
		most = math.Max(most, ubAt(pt[0], pt[1]))
	}
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

// runPruned searches the designs most promising first on p.Parallel
// workers, skipping those the incumbent's merit excludes; the first
// error cancels the others. skipped[i] reports a design not searched.
func (s *search) runPruned(ds []*designSearch, bounds []float64, results []DesignResult, errs []error, cancel func()) (skipped []bool, err error) {
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
	var next int
	var mu sync.Mutex
	take := func() int {
		mu.Lock()
		defer mu.Unlock()
		if next >= len(order) {
			return -1
		}
		next++
		return order[next-1]
	}
	var wg sync.WaitGroup
	var firstErr error
	var errOnce sync.Once
	for w := 0; w < s.p.Parallel; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := take(); i >= 0; i = take() {
				if s.ctx.Err() != nil {
					errs[i] = s.ctx.Err()
					continue
				}
				if inc.excludes(s, bounds[i]) {
					skipped[i] = true
					continue
				}
				r, err := ds[i].run()
				results[i], errs[i] = r, err
				if err != nil {
					errOnce.Do(func() { firstErr = err; cancel() })
					continue
				}
				inc.offer(s, r)
				s.reportFinished(r.Design)
			}
		}()
	}
	wg.Wait()
	return skipped, firstErr
}
