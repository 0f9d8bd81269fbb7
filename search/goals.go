package search

import (
	"context"
	"fmt"
	"math"

	"golang.org/x/sync/errgroup"

	"splitplan/costpower"
	"splitplan/slo"
)

// Run searches every design of p and returns the optima. Designs are
// searched in parallel and simulations bounded by p.Parallel; the result
// does not depend on either.
func Run(ctx context.Context, p *Problem) (*Result, error) {
	s, err := newSearch(ctx, p)
	if err != nil {
		return nil, err
	}
	ds := make([]*designSearch, len(p.Designs))
	for i, spec := range p.Designs {
		d, err := p.Catalog.Design(spec.Design)
		if err != nil {
			return nil, fmt.Errorf("search: %w", err)
		}
		ds[i] = &designSearch{s: s, spec: spec, design: d, memo: map[pointKey]*Point{}}
		// Resolve the performance models once, so a missing profile is
		// reported before any simulation.
		if _, err := ds[i].cluster(1, map[bool]int{true: 0, false: 1}[d.IsBaseline()]); err != nil {
			return nil, fmt.Errorf("search: %s: %w", spec.Label(), err)
		}
	}
	results := make([]DesignResult, len(ds))
	g, gctx := errgroup.WithContext(ctx)
	s.ctx = gctx
	for i := range ds {
		g.Go(func() error {
			r, err := ds[i].run()
			results[i] = r
			return err
		})
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	out := &Result{Goal: p.Goal, RateRPS: p.RateRPS, PowerBudgetKW: p.PowerBudgetKW,
		CostBudgetUSDPerH: p.CostBudgetUSDPerH, Designs: results, Winner: -1}
	for i, d := range ds {
		out.Points = append(out.Points, d.sortedPoints()...)
		r := results[i]
		if !r.Found {
			continue
		}
		if out.Winner < 0 || s.beats(r, results[out.Winner]) {
			out.Winner = i
		}
	}
	return out, nil
}

// newSearch fills p's defaults, validates it and prepares the SLO
// reference and the workload's mean sizes.
func newSearch(ctx context.Context, p *Problem) (*search, error) {
	if p.Precision == 0 {
		p.Precision = 0.025
	}
	if p.Parallel < 1 {
		p.Parallel = 1
	}
	if p.Reference == "" {
		p.Reference = "DGX-A100"
	}
	if err := p.validate(); err != nil {
		return nil, err
	}
	s := &search{p: p, ctx: ctx, sem: make(chan struct{}, p.Parallel)}
	refMachine, err := p.Catalog.Machine(p.Reference)
	if err != nil {
		return nil, fmt.Errorf("search: SLO reference: %w", err)
	}
	model, err := p.Catalog.Model(p.Model)
	if err != nil {
		return nil, fmt.Errorf("search: %w", err)
	}
	pair, err := p.Perf.Lookup(model.Name, refMachine.PerfHardware, refMachine.TensorParallel)
	if err != nil {
		return nil, fmt.Errorf("search: SLO reference %s: %w", refMachine.Name, err)
	}
	s.ref = slo.Reference{Perf: pair.Model(p.Options.Compat), Compat: p.Options.Compat}
	if p.Seeds < 1 {
		p.Seeds = 1
	}
	s.workloads = []*Workload{p.Workload}
	for i := 1; i < p.Seeds; i++ {
		w := p.Workload
		s.workloads = append(s.workloads, &Workload{Sizes: w.Sizes, DurationS: w.DurationS,
			Seed: w.Seed + uint64(i), Independent: w.Independent})
	}
	if s.meanP, s.meanD, err = p.Workload.meanSizes(); err != nil {
		return nil, err
	}
	return s, nil
}

// beats reports whether design result a is better than b for the goal.
func (s *search) beats(a, b DesignResult) bool {
	// The rate goals' merit is the key's objective; the budget goals
	// compare capacity (per dollar) first.
	if s.p.Goal.NeedsBudget() {
		ma, _ := s.p.Goal.Merit(a)
		mb, _ := s.p.Goal.Merit(b)
		if ma != mb {
			return ma > mb
		}
	}
	return less(s.keyOf(a.Best), s.keyOf(b.Best))
}

// key orders points of equal merit: the objective, then fewer machines,
// then fewer prompt machines.
type key struct {
	obj            float64
	machines, prom int
}

func less(a, b key) bool {
	if d := a.obj - b.obj; math.Abs(d) > 1e-9*math.Max(1, math.Abs(b.obj)) {
		return d < 0
	}
	if a.machines != b.machines {
		return a.machines < b.machines
	}
	return a.prom < b.prom
}

func (s *search) keyOf(p Point) key {
	obj := p.CostUSDPerH
	if s.p.Goal == GoalPower || s.p.PowerBudgetKW > 0 {
		obj = p.PowerKW
	}
	return key{obj, p.Machines(), p.Prompt}
}

func (d *designSearch) key(prompt, token int) key {
	return key{d.s.objective(d.costOf(prompt, token)), prompt + token, prompt}
}

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

// run searches one design.
func (d *designSearch) run() (DesignResult, error) {
	base := d.design.IsBaseline()
	reg := d.region()
	res := DesignResult{Design: d.spec.Label(), Baseline: base, GridPoints: reg.size(base)}
	var best *Point
	var capacity float64
	var err error
	switch {
	case d.s.p.Goal.NeedsRate():
		capacity = d.s.p.RateRPS
		if d.s.p.Exhaustive {
			best, err = d.exhaustiveMin(reg, capacity)
		} else {
			best, err = d.frontierMin(reg, capacity, true, nil)
		}
	case d.s.p.Goal.NeedsBudget():
		best, capacity, err = d.maxCapacity(reg)
	}
	if err != nil {
		return res, err
	}
	if best != nil {
		res.Found, res.Best, res.CapacityRPS = true, *best, capacity
		d.s.report(res.Design, best.Label())
	} else {
		if len(d.points) == 0 {
			// Everything was pruned: simulate the largest cluster anyway,
			// so the answer can say which SLO fails and by how much.
			if err := d.explain(reg); err != nil {
				return res, err
			}
		}
		res.Closest = d.closest()
	}
	res.Simulations, res.Pruned = d.sims, d.pruned
	seen := map[[2]int]bool{}
	for _, p := range d.points {
		seen[[2]int{p.Prompt, p.Token}] = true
	}
	res.Evaluated = len(seen)
	return res, nil
}

// explain simulates the region's largest point at the goal's rate (the
// lowest rate tried, for the throughput and batch goals) past the bound.
func (d *designSearch) explain(reg region) error {
	pts := d.maximal(reg)
	if len(pts) == 0 {
		return nil
	}
	pt := pts[0]
	for _, c := range pts {
		if c[0]+c[1] > pt[0]+pt[1] {
			pt = c
		}
	}
	rate := d.s.p.RateRPS
	if rate == 0 {
		rate = d.s.rate(d.s.minRateIndex())
	}
	_, err := d.evalBound(pt[0], pt[1], rate, false)
	return err
}

// closest is the simulated point that failed closest to passing.
func (d *designSearch) closest() *Point {
	var c *Point
	score := func(p *Point) float64 {
		if p.Verdict == nil {
			return math.Inf(-1)
		}
		v := p.Verdict.BindingFigure().Slack
		if !p.Verdict.Drained {
			v -= 1e6 // a run that did not drain is farther than any SLO
		}
		return v
	}
	for _, p := range d.sortedPoints() {
		p := p
		if c == nil || score(&p) > score(c) {
			c = &p
		}
	}
	return c
}

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
		return d.baselineMin(reg.pmax, rate)
	}
	best := incumbent
	var bestKey key
	if best != nil {
		bestKey = d.key(best.Prompt, best.Token)
	}
	canBeat := func(p, t int) bool { return best == nil || less(d.key(p, t), bestKey) }
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
		d.eval(nmax, 0, rate) // record the pruned point
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

// points lists the region's points.
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

// exhaustiveMin simulates every point of the region at rate.
func (d *designSearch) exhaustiveMin(reg region, rate float64) (*Point, error) {
	pts := d.regionPoints(reg)
	out := make([]*Point, len(pts))
	g := errgroup.Group{}
	for i, pt := range pts {
		g.Go(func() error {
			p, err := d.eval(pt[0], pt[1], rate)
			out[i] = p
			return err
		})
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	var best *Point
	for _, p := range out {
		if p.Feasible && (best == nil || less(d.s.keyOf(*p), d.s.keyOf(*best))) {
			best = p
		}
	}
	return best, nil
}

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

// maxCapacity solves the throughput and batch goals: the highest capacity
// (batch: capacity per dollar) in the region, then the least key among the
// points that reach it.
func (d *designSearch) maxCapacity(reg region) (*Point, float64, error) {
	s := d.s
	// The throughput goal's space is the whole region (capacity grows
	// with machines, so branch and bound visits the maximal points and
	// then walks the frontier at the best capacity). The batch goal's
	// space is the clusters that spend the budget: the maximal points.
	pts := d.regionPoints(reg)
	if !s.p.Exhaustive || s.p.Goal == GoalBatch {
		pts = d.maximal(reg)
	}
	if len(pts) == 0 {
		return nil, 0, nil
	}
	type cand struct {
		p, t int
		ub   float64
		cost float64
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
		caps := make([]int, len(cands))
		g := errgroup.Group{}
		for i, c := range cands {
			g.Go(func() error {
				k, err := d.capacityOf(c.p, c.t, floor-1, c.ub/2)
				caps[i] = k
				return err
			})
		}
		if err := g.Wait(); err != nil {
			return nil, 0, err
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
			ok, err := d.feasible(c.p, c.t, s.rate(need))
			if err != nil {
				return nil, 0, err
			}
			if !ok {
				continue
			}
			k, err = d.capacityOf(c.p, c.t, need, 0)
		} else {
			k, err = d.capacityOf(c.p, c.t, floor-1, c.ub/2)
		}
		if err != nil {
			return nil, 0, err
		}
		if k < floor {
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

// unused guard so costpower stays imported for documentation links.
var _ = costpower.KindBaseline
