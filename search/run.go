package search

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strings"
	"sync"

	"golang.org/x/sync/errgroup"

	"splitplan/costpower"
	"splitplan/evaluator"
	"splitplan/resolve"
	"splitplan/slo"
)

// Run searches every design of p and returns the optima. Designs are
// searched in parallel and simulations bounded by p.Parallel; the result
// does not depend on either. p is not modified. Interrupted (ctx done), it
// returns ctx's error and a Partial result of the designs it finished.
func Run(ctx context.Context, p *Problem) (*Result, error) {
	res, _, err := runWith(ctx, p, nil, nil)
	return res, err
}

// runWith is Run with every design's cluster changed by adjust (when not
// nil) once resolved, and its simulations bounded by sem (when not nil,
// shared with other searches) instead of p.Parallel alone. It also
// returns the designs' searches, in p.Designs' order, for a caller that
// goes on asking them (the robust search, robust.go).
func runWith(ctx context.Context, p *Problem, adjust func(resolve.Cluster) resolve.Cluster, sem chan struct{}) (*Result, []*designSearch, error) {
	return runHinted(ctx, p, adjust, sem, nil)
}

// runHinted is runWith whose rate-goal frontier walks start from starts
// (one per design of p; nil, or a zero hint: bisect as Run does).
func runHinted(ctx context.Context, p *Problem, adjust func(resolve.Cluster) resolve.Cluster, sem chan struct{}, starts []hint) (*Result, []*designSearch, error) {
	s, err := newSearch(ctx, p)
	if err != nil {
		return nil, nil, err
	}
	s.adjust = adjust
	if sem != nil {
		s.sem = sem
	}
	p = s.p // the copy with the defaults filled
	ds := make([]*designSearch, len(p.Designs))
	for i, spec := range p.Designs {
		d := spec.Design
		ds[i] = &designSearch{s: s, spec: spec, design: d, memo: map[pointKey]*Point{},
			stream: p.Exhaustive && p.DropPoints && p.Goal.NeedsRate()}
		if starts != nil {
			ds[i].start = starts[i]
		}
		// Resolve the performance models once, so a missing profile is
		// reported before any simulation.
		if _, err := ds[i].cluster(d.MinCounts()); err != nil {
			return nil, nil, fmt.Errorf("search: %s: %w", spec.Label(), err)
		}
		if _, beyond := ds[i].bound(ds[i].limit()); beyond {
			return nil, nil, &BudgetBeyondBoundError{Design: spec.Label()}
		}
	}
	if p.Exhaustive && !p.DropPoints && p.MaxKeptPoints > 0 && p.Goal.NeedsRate() {
		n := 0
		for _, d := range ds {
			n += d.region().size(d.design.IsBaseline())
		}
		if n > p.MaxKeptPoints {
			return nil, nil, &KeptPointsError{Points: n, Designs: len(ds), Limit: p.MaxKeptPoints}
		}
	}
	results := make([]DesignResult, len(ds))
	errs := make([]error, len(ds))
	var bounds []float64
	if p.PruneDesigns && !p.Exhaustive && !p.PowerBudgetDrawn {
		bounds = make([]float64, len(ds))
		for i, d := range ds {
			b, ok, err := d.designBound(d.region())
			if err != nil {
				return nil, nil, fmt.Errorf("search: %s: %w", d.spec.Label(), err)
			}
			if !ok {
				bounds = nil
				break
			}
			bounds[i] = b
		}
	}
	var skipped []bool
	if bounds != nil {
		s.ctx = ctx
		skipped, err = s.runPruned(ds, bounds, results, errs)
		if err == nil && ctx.Err() != nil {
			err = ctx.Err()
		}
	} else {
		g, gctx := errgroup.WithContext(ctx)
		s.ctx = gctx
		for i := range ds {
			g.Go(func() error {
				r, err := ds[i].run()
				results[i], errs[i] = r, err
				if err == nil {
					s.reportFinished(r.Design)
				}
				return err
			})
		}
		err = g.Wait()
	}
	if err == nil && s.verify != nil && p.VerifyWinnerOnly {
		s.ctx = ctx // (the group's context ended with its Wait)
		err = s.verifyWinner(ds, bounds, results, errs, skipped)
	}
	if err != nil && ctx.Err() == nil {
		return nil, nil, err
	}
	// Interrupted (ctx is done), the designs that finished are kept.
	out := &Result{Goal: p.Goal, RateRPS: p.RateRPS, PowerBudgetKW: p.PowerBudgetKW, PowerBudgetDrawn: p.PowerBudgetDrawn,
		CostBudgetUSDPerH: p.CostBudgetUSDPerH, Winner: -1, Partial: err != nil, VerifyWinnerOnly: p.VerifyWinnerOnly}
	if s.verify != nil {
		out.VerifyS = p.VerifyS
	}
	winner := s.best(results, errs, skipped) // in ds, before the bound's verdicts
	for i, d := range ds {
		pruned := bounds != nil && winner >= 0 && s.cannotBeat(bounds[i], results[winner])
		if (err != nil && errs[i] != nil) || (skipped != nil && skipped[i] && !pruned) {
			out.Unfinished = append(out.Unfinished, d.spec.Label())
			continue
		}
		r := results[i]
		if pruned {
			// Reported pruned whether or not it ran before the winner
			// was known, so that the result does not depend on timing.
			r = d.prunedResult(bounds[i])
			out.Designs = append(out.Designs, r)
			out.DesignsPruned++
			continue
		}
		out.Designs = append(out.Designs, r)
		out.Points = append(out.Points, d.sortedPoints()...)
		if !r.Found {
			continue
		}
		if out.Winner < 0 || s.beats(r, out.Designs[out.Winner]) {
			out.Winner = len(out.Designs) - 1
		}
	}
	if err != nil {
		return out, ds, fmt.Errorf("search interrupted with %d of %d designs finished: %w", len(out.Designs), len(ds), ctx.Err())
	}
	out.starts = make([]hint, len(ds))
	for i, d := range ds {
		out.starts[i] = d.hint()
	}
	return out, ds, nil
}

// DefaultPrecision is the relative precision of capacities a search finds
// when its Problem sets none.
const DefaultPrecision = 0.025

// DefaultReference is the machine type SLO slowdowns are measured against
// when a Problem names none: the paper's lone DGX-A100.
const DefaultReference = "DGX-A100"

// newSearch validates a copy of the problem with its defaults filled (the
// caller's is left as it was) and prepares the SLO reference and the
// workload's mean sizes.
func newSearch(ctx context.Context, caller *Problem) (*search, error) {
	cp := *caller
	p := &cp
	if p.Precision == 0 {
		p.Precision = DefaultPrecision
	}
	if p.Parallel < 1 {
		p.Parallel = 1
	}
	if p.Ownership == (costpower.Ownership{}) {
		p.Ownership = costpower.DefaultOwnership()
	}
	if p.Reference == "" {
		p.Reference = DefaultReference
	}
	if err := p.Validate(); err != nil {
		return nil, err
	}
	s := &search{p: p, ctx: ctx, sem: make(chan struct{}, p.Parallel),
		latencies: &sync.Pool{New: func() any { return new([]evaluator.RequestLatency) }}}
	s.energy = p.Options.Energy || p.Goal.NeedsSimulation() || p.PowerBudgetDrawn
	// (A reference at a tensor parallelism, "A100·tp1", joins the catalog
	// under its own name, which the rest of the search reads.)
	refMachine, err := p.Catalog.ResolveMachine(p.Reference)
	if err != nil {
		return nil, fmt.Errorf("search: SLO reference: %w", err)
	}
	p.Reference = refMachine.Name
	model, err := p.Catalog.Model(p.Model)
	if err != nil {
		return nil, fmt.Errorf("search: %w", err)
	}
	if p.Perf, err = p.perfForSpace(); err != nil {
		return nil, err
	}
	refPerf, _, err := p.Perf.Resolve(model, refMachine)
	if err != nil {
		return nil, &ReferenceError{Machine: refMachine.Name, Model: model.Name, Err: err, Serving: p.servingMachines(model)}
	}
	s.ref = slo.Reference{Perf: refPerf, Compat: p.Options.Compat}
	if p.Workload != nil && p.Workload.Sizes != nil {
		// Every simulation's SLO check looks its requests' reference
		// latencies up (longer prompts, if any, are computed).
		maxPrompt := p.Workload.Sizes.Stats().Prompt.Max
		s.ref = s.ref.Tabulated(min(maxPrompt, maxTabulatedPrompt))
	}
	if p.Seeds < 1 {
		p.Seeds = 1
	}
	s.workloads = []*Workload{p.Workload}
	for i := 1; i < p.Seeds; i++ {
		w := p.Workload
		s.workloads = append(s.workloads, w.with(w.Seed+uint64(i), w.DurationS))
	}
	for range s.workloads {
		s.stoppers = append(s.stoppers, p.SLO.Stopper(s.ref))
	}
	s.verify = p.verifyWorkloads(s.workloads)
	for range s.verify {
		s.verifyStoppers = append(s.verifyStoppers, p.SLO.Stopper(s.ref))
	}
	s.readsITL = p.Goal.checksLatency() && slices.ContainsFunc(p.SLO.Series(), func(sr slo.Series) bool { return sr.Metric == slo.ITL })
	if s.meanP, s.meanD, err = p.Workload.meanSizes(); err != nil {
		return nil, err
	}
	return s, nil
}

// ReferenceError says the SLO reference machine type cannot serve the
// model (its weights do not fit, say): the problem's input, not a
// failure of the search.
type ReferenceError struct {
	Machine, Model string
	Err            error
	// Serving are the catalog's machine types that can serve the model.
	Serving []string
}

func (e *ReferenceError) Error() string {
	s := fmt.Sprintf("search: SLO reference %s: %v", e.Machine, e.Err)
	if len(e.Serving) > 0 {
		s += "; a reference that can serve " + e.Model + ": " + strings.Join(e.Serving, ", ")
	}
	return s
}

func (e *ReferenceError) Unwrap() error { return e.Err }

// servingMachines returns the catalog's machine types that can serve
// model.
func (p *Problem) servingMachines(model costpower.Model) []string {
	var ok []string
	for _, m := range p.Catalog.Machines {
		if _, _, err := p.Perf.Resolve(model, m); err == nil {
			ok = append(ok, m.Name)
		}
	}
	return ok
}

// maxTabulatedPrompt bounds the prompts whose SLO reference latencies a
// search computes up front.
const maxTabulatedPrompt = 1 << 17

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
	switch {
	case s.p.Goal == GoalEnergy:
		obj = p.KWhPerDay()
	case s.p.Goal == GoalTCO:
		obj = p.OwnershipUSDPerH
	case s.p.Goal == GoalPower || s.p.PowerBudgetKW > 0:
		obj = p.PowerKW
	}
	return key{obj, p.Machines(), p.Prompt}
}

func (d *designSearch) key(prompt, token int) key {
	return key{d.s.objective(d.costOf(prompt, token)), prompt + token, prompt}
}

// SmallSpacePoints is the largest design space a rate goal's search
// (cost, power) simulates point by point when its frontier walk finds no
// feasible point, before it reports none (DesignResult.Found false).
const SmallSpacePoints = 256

// worthChecking reports whether a small space whose walk found nothing
// may still hold a feasible point: its largest cluster meets every SLO
// at a tenth of the load (failsIdle).
func (d *designSearch) worthChecking(reg region, rate float64) (bool, error) {
	p, t, ok := d.largest(reg)
	if !ok {
		return false, nil
	}
	pt, err := d.eval(p, t, rate)
	if err != nil || pt.Feasible {
		return false, err
	}
	name, err := d.failsIdle(pt)
	return name == "", err
}

// best is the index of the best design found among results (those
// without an error, not skipped), or −1.
func (s *search) best(results []DesignResult, errs []error, skipped []bool) int {
	w := -1
	for i := range results {
		if errs[i] == nil && (skipped == nil || !skipped[i]) && results[i].Found && (w < 0 || s.beats(results[i], results[w])) {
			w = i
		}
	}
	return w
}

// largest is the region's largest cluster: its most prompt machines
// (a baseline's machines) with the most token machines they allow; ok is
// false for an empty region.
func (d *designSearch) largest(reg region) (p, t int, ok bool) {
	if reg.pmax < 1 {
		return 0, 0, false
	}
	if !d.design.IsBaseline() {
		t = reg.tb[reg.pmax]
	}
	return reg.pmax, t, true
}

// run searches one design.
func (d *designSearch) run() (DesignResult, error) {
	base := d.design.IsBaseline()
	reg := d.region()
	res := DesignResult{Design: d.spec.Label(), Baseline: base, GridPoints: reg.size(base)}
	if cl, err := d.cluster(d.design.MinCounts()); err == nil {
		res.Provenance, res.PromptProvenance, res.TokenProvenance = cl.Provenance(), cl.PromptProvenance, cl.TokenProvenance
		res.PromptType, res.TokenType = cl.PromptType.Name, cl.TokenType.Name
	}
	find := func() (best *Point, capacity float64, err error) {
		switch {
		case d.s.p.Goal.NeedsRate():
			capacity = d.s.p.RateRPS
			if d.s.p.Exhaustive {
				best, err = d.exhaustiveMin(reg, capacity)
			} else if d.s.p.Goal.NeedsSimulation() {
				best, err = d.simulatedMin(reg, capacity) // energy.go
			} else {
				if d.start.p > 0 {
					best, _, err = d.hintedMin(reg, capacity, d.start)
				} else {
					best, err = d.frontierMin(reg, capacity, true, nil)
				}
				if err == nil && best == nil && reg.size(base) <= SmallSpacePoints {
					// The walk found nothing: its dominance inference (more
					// machines never hurt) let the largest cluster's failure
					// stand for every smaller one, which a small workload's
					// noisy tail can belie (4P/4T failing its P99 TTFT where
					// 3P/1T passes). A small space is checked point by point
					// before none is reported, unless the largest cluster
					// fails even nearly idle (then every cluster does: the
					// requests' own latencies on its machines are over).
					if d.idleOK, err = d.worthChecking(reg, capacity); d.idleOK && err == nil {
						best, err = d.exhaustiveMin(reg, capacity)
					}
				}
			}
		case d.s.p.PowerBudgetDrawn:
			best, capacity, err = d.maxCapacityDrawn(reg) // energy.go
		case d.s.p.Goal.NeedsBudget():
			best, capacity, err = d.maxCapacity(reg)
		}
		return best, capacity, err
	}
	// The optimum must also hold over the longer run (verifiedMin).
	// A streamed search's points are not kept: after its first walk it
	// goes on through its cheapest feasible points kept (nextKept).
	walked, rate := false, 0.0
	best, capacity, err := d.verifiedMin(reg, func() (*Point, float64, error) {
		if d.stream && walked {
			pt, err := d.nextKept()
			return pt, rate, err
		}
		walked = true
		pt, c, err := find()
		rate = c
		return pt, c, err
	})
	if err != nil {
		return res, err
	}
	if best != nil {
		if err := d.fillEnergy(best); err != nil { // simulate.go
			return res, err
		}
		res.Found, res.Best, res.CapacityRPS = true, *best, capacity
		d.s.report(res.Design, best.Label())
	} else {
		if d.simulatedPoints() == 0 {
			// Everything was pruned: simulate the largest cluster anyway,
			// so the answer can say which SLO fails and by how much.
			if err := d.explain(reg); err != nil {
				return res, err
			}
		}
		if err := d.completeStopped(); err != nil { // simulate.go
			return res, err
		}
		if res.Closest = d.closest(); res.Closest != nil {
			if err := d.fillEnergy(res.Closest); err != nil {
				return res, err
			}
		}
	}
	res.MaxMachines = reg.n
	pt := res.Closest
	if res.Found {
		pt = &res.Best
	}
	if pt != nil && d.boundBinds(reg, pt) {
		res.BoundedBy = "max-machines"
		if !res.Found && pt.Verdict != nil && pt.Verdict.Drained && !d.idleOK {
			// (Not where the largest cluster met every SLO nearly idle:
			// a bound may then help.)
			name, err := d.failsIdle(pt)
			if err != nil {
				return res, err
			}
			if name != "" {
				res.BoundedBy, res.FailsIdle = "", name
			}
		}
	}
	res.Simulations, res.Pruned, res.Stopped = d.sims, d.pruned, d.stopped
	res.Evaluated = d.evaluatedPoints()
	res.Unverified, res.Verifications = d.unverifiedPoints(), d.verifications
	return res, nil
}

// prunedResult is the result of a design the analytic bound excludes.
func (d *designSearch) prunedResult(bound float64) DesignResult {
	base := d.design.IsBaseline()
	reg := d.region()
	r := DesignResult{Design: d.spec.Label(), Baseline: base, GridPoints: reg.size(base), MaxMachines: reg.n,
		BoundPruned: true, Bound: bound, PromptType: d.models.PromptType.Name, TokenType: d.models.TokenType.Name}
	r.Provenance, r.PromptProvenance, r.TokenProvenance = d.models.Provenance(), d.models.PromptProvenance, d.models.TokenProvenance
	return r
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

// closest is the simulated point that failed closest to passing (the
// highest closeness; ties: the first in sortedPoints' order).
func (d *designSearch) closest() *Point {
	if d.stream {
		if d.closestPt == nil {
			return nil
		}
		c := *d.closestPt
		return &c
	}
	var c *Point
	for _, p := range d.sortedPoints() {
		p := p
		if c == nil || closeness(&p) > closeness(c) {
			c = &p
		}
	}
	return c
}

// perfForSpace is p.Perf for the whole space (resolve.Source.ForSpace),
// resolving the reference's fit when p.Options.Compat is set: every
// design's machine types and the SLO reference use the analytic model when
// one of them has no profile, so that one answer never mixes provenances.
func (p *Problem) perfForSpace() (resolve.Source, error) {
	model, err := p.Catalog.Model(p.Model)
	if err != nil {
		return p.Perf, fmt.Errorf("search: %w", err)
	}
	ref := p.Reference
	if ref == "" {
		ref = DefaultReference
	}
	var space []costpower.Machine
	if mc, err := p.Catalog.Machine(ref); err == nil {
		space = append(space, mc)
	}
	for _, d := range p.Designs {
		cd := d.Design
		for _, n := range []string{cd.Machine, cd.Prompt, cd.Token} {
			if mc, err := p.Catalog.Machine(n); n != "" && err == nil {
				space = append(space, mc)
			}
		}
	}
	src := p.Perf
	src.Compat = p.Options.Compat
	return src.ForSpace(model, space), nil
}

// PhysicsOnly reports whether the search uses the analytic model for every
// machine type because its space includes one without a profile.
func (p *Problem) PhysicsOnly() bool {
	src, err := p.perfForSpace()
	return err == nil && src.Physics && !p.Perf.Physics
}

// closeness is how close a failed point came to passing: its binding
// slack, far lower for a run that did not drain, −Inf with no verdict.
func closeness(p *Point) float64 {
	if p.Verdict == nil {
		return math.Inf(-1)
	}
	v := p.Verdict.BindingFigure().Slack
	if !p.Verdict.Drained {
		v -= 1e6 // a run that did not drain is farther than any SLO
	}
	return v
}

// simulatedPoints is the number of points the design simulated.
func (d *designSearch) simulatedPoints() int {
	if d.stream {
		return d.streamedN
	}
	return len(d.points)
}

// evaluatedPoints is the number of distinct (prompt, token) points the
// design simulated at least once. A streamed search simulates each point
// of its region at one rate (and explains only when it simulated none).
func (d *designSearch) evaluatedPoints() int {
	if d.stream {
		return d.streamedN
	}
	seen := map[[2]int]bool{}
	for _, p := range d.points {
		seen[[2]int{p.Prompt, p.Token}] = true
	}
	return len(seen)
}
