package search

import (
	"context"
	"fmt"
	"sort"

	"golang.org/x/sync/errgroup"

	"splitplan/slo"
	"splitplan/traces"
)

// Verification is a point's check over a longer run (Problem.VerifyS):
// its cluster simulated at its rate on the search's own traffic continued
// to DurationS seconds (the same seed, so the search's trace is its first
// part), to its end.
type Verification struct {
	// DurationS is the length of the traffic checked.
	DurationS float64
	// Pass reports that every SLO held (and the run drained) on every
	// replica of the workload.
	Pass bool
	// Verdict is the SLO check of the replica that failed, or of the one
	// closest to failing (nil for the batch goal, which checks only the
	// drain).
	Verdict *slo.Verdict
	// Note says why it failed when not by an SLO figure (the run did not
	// drain, or stopped unsustainable).
	Note string
	// StopLimit, for a run stopped once its failure was certain
	// (Problem.StopFailing), names the limit it failed ("P90 TBT"), and
	// StopS the simulated time by which that was certain; Verdict is then
	// nil.
	StopLimit string
	StopS     float64
	// Requests is the number of requests simulated.
	Requests int
}

// Summary says how the check came out in a few words: its binding figure
// ("P90 TBT 2.61/1.5"), the limit it certainly failed and by when, or why
// the run did not drain.
func (v *Verification) Summary() string {
	switch {
	case v.Verdict != nil && v.Verdict.Drained && len(v.Verdict.Figures) > 0:
		f := v.Verdict.BindingFigure()
		return fmt.Sprintf("%s %.3g/%g", f.Name(), f.Measured, f.Limit)
	case v.StopLimit != "":
		return fmt.Sprintf("%s certainly over its limit by %.0f s", v.StopLimit, v.StopS)
	case v.Note != "":
		return v.Note
	case v.Verdict != nil && v.Verdict.DrainNote != "":
		return v.Verdict.DrainNote
	case v.Pass:
		return "drained"
	}
	return "did not drain"
}

// verifyWorkloads are the search's workload replicas continued to
// p.VerifyS seconds, or nil when no verification runs (VerifyS not
// beyond the workload's own duration).
func (p *Problem) verifyWorkloads(ws []*Workload) []*Workload {
	if !(p.VerifyS > 0) || len(ws) == 0 || p.VerifyS <= ws[0].DurationS {
		return nil
	}
	out := make([]*Workload, len(ws))
	for i, w := range ws {
		out[i] = w.with(w.Seed, p.VerifyS)
	}
	return out
}

// VerifyTooLongError refuses a verification whose traffic would hold more
// requests than can be synthesized.
type VerifyTooLongError struct {
	DurationS, RateRPS, Requests float64
}

func (e *VerifyTooLongError) Error() string {
	return fmt.Sprintf("search: verifying over %gs at %.4g req/s takes about %.3g requests, more than the %d that can be simulated: shorten the verification",
		e.DurationS, e.RateRPS, e.Requests, traces.MaxSynthesized)
}

// verifyRequests refuses a verification over verifyS seconds at rate
// whose traffic holds more requests than can be synthesized.
func verifyRequests(verifyS, rate float64) error {
	if need := verifyS * rate; need > traces.MaxSynthesized {
		return &VerifyTooLongError{DurationS: verifyS, RateRPS: rate, Requests: need}
	}
	return nil
}

// verifying reports whether the design's optima are verified now: a
// verification is asked for, the points are kept (a streamed exhaustive
// search verifies from its kept list), and this design is verified
// (every design, or with VerifyWinnerOnly the ones runHinted asks).
func (d *designSearch) verifying() bool {
	return d.s.verify != nil && (!d.s.p.VerifyWinnerOnly || d.verifyNow)
}

// verify checks pt, the design's optimum found on the search's trace,
// over the longer run (memoized on the point), and reports whether it
// held. A point that fails is no longer feasible: the search that asks
// again steps past it, and by dominance past every point with no more of
// either machine at no lower rate (a failure over an hour is no more
// likely with more machines). The simulations are counted apart from the
// search's (Verifications).
func (d *designSearch) verify(pt *Point) (bool, error) {
	s := d.s
	k := pointKey{pt.Prompt, pt.Token, pt.RateRPS}
	d.mu.Lock()
	m := d.memo[k]
	d.mu.Unlock()
	if d.stream {
		m = pt
		d.mu.Lock()
		for _, q := range d.kept {
			if q.Prompt == pt.Prompt && q.Token == pt.Token && q.RateRPS == pt.RateRPS {
				m = q
			}
		}
		d.mu.Unlock()
	} else if m == nil || !m.Simulated {
		// (An optimum is confirmed by its own simulation; in case one
		// was inferred, it is simulated on the search's trace first.)
		var err error
		if m, err = d.evalBound(pt.Prompt, pt.Token, pt.RateRPS, false); err != nil {
			return false, err
		}
		if !m.Feasible {
			return false, nil
		}
	}
	if m.Verified != nil {
		return m.Verified.Pass, nil
	}
	v, n, err := d.longRun(pt.Prompt, pt.Token, pt.RateRPS)
	if err != nil {
		return false, err
	}
	d.mu.Lock()
	m.Verified = v
	if !v.Pass {
		m.Feasible = false
		m.Note = fmt.Sprintf("met every SLO over %gs, not over %gs: %s", s.p.Workload.DurationS, v.DurationS, v.Summary())
		d.unverified = append(d.unverified, m)
	}
	d.verifications += n
	d.mu.Unlock()
	s.verifications.Add(int64(n))
	if m != pt {
		pt.Verified = v
	}
	return v.Pass, nil
}

// keepFeasible keeps pt, a feasible point of a streamed search (d.mu
// held), among the design's streamKept cheapest, in key order: the
// candidates its verification walks when the optimum fails it.
func (d *designSearch) keepFeasible(pt *Point) {
	if d.s.verify == nil {
		return
	}
	i := sort.Search(len(d.kept), func(i int) bool { return less(d.s.keyOf(*pt), d.s.keyOf(*d.kept[i])) })
	if i >= streamKept {
		return
	}
	d.kept = append(d.kept, nil)
	copy(d.kept[i+1:], d.kept[i:])
	d.kept[i] = pt
	if len(d.kept) > streamKept {
		d.kept = d.kept[:streamKept]
	}
}

// guardAfter is how many of a design's optima may fail the verification
// before the design's largest cluster is checked (largestHolds); after
// eagerAfter its search checks every feasible point as it goes
// (designSearch.eager).
const (
	guardAfter = 3
	eagerAfter = 16
)

// largestHolds checks the design's largest cluster in the region over the
// longer run at rate: where it fails, every cluster of the design does
// (feasibility grows with machines). Its simulations count as the
// verification's.
func (d *designSearch) largestHolds(reg region, rate float64) (bool, error) {
	p, t, ok := d.largest(reg)
	if !ok {
		return false, nil
	}
	v, n, err := d.longRun(p, t, rate)
	if err != nil {
		return false, err
	}
	d.mu.Lock()
	d.verifications += n
	d.mu.Unlock()
	d.s.verifications.Add(int64(n))
	return v.Pass, nil
}

// streamKept is how many of its cheapest feasible points a streamed
// exhaustive search keeps for the verification.
const streamKept = 64

// nextKept returns the cheapest kept point of a streamed search not yet
// failed by the verification, or nil when none is left; more than
// streamKept failures is an error (the points beyond were not kept).
func (d *designSearch) nextKept() (*Point, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	for _, pt := range d.kept {
		if pt.Verified == nil || pt.Verified.Pass {
			return pt, nil
		}
	}
	if len(d.kept) == streamKept {
		return nil, fmt.Errorf("search: %s: the %d cheapest points meeting every SLO over %gs all failed over %gs; keep every point (--points) to search further",
			d.spec.Label(), streamKept, d.s.p.Workload.DurationS, d.s.p.VerifyS)
	}
	return nil, nil
}

// unverifiedPoints returns the design's points that met every SLO on the
// search's trace but failed the verification, in key order.
func (d *designSearch) unverifiedPoints() []Point {
	d.mu.Lock()
	defer d.mu.Unlock()
	out := make([]Point, 0, len(d.unverified))
	for _, p := range d.unverified {
		out = append(out, *p)
	}
	sort.Slice(out, func(i, j int) bool { return less(d.s.keyOf(out[i]), d.s.keyOf(out[j])) })
	return out
}

// verifyWinner is Problem.VerifyWinnerOnly's check, after every design's
// search: the best design's optimum is verified (its search going on past
// it while it fails), and the best is chosen again, until the best's
// optimum held. A design the analytic bound skipped is searched once its
// bound can beat the best as it now stands.
func (s *search) verifyWinner(ds []*designSearch, bounds []float64, results []DesignResult, errs []error, skipped []bool) error {
	for {
		w := s.best(results, errs, skipped)
		ran := false
		for i := range ds {
			if skipped != nil && skipped[i] && (w < 0 || !s.cannotBeat(bounds[i], results[w])) {
				skipped[i] = false
				r, err := ds[i].run()
				results[i], errs[i] = r, err
				if err != nil {
					return err
				}
				ran = true
			}
		}
		switch {
		case ran:
			continue
		case w < 0:
			return nil
		case results[w].Best.Verified != nil && results[w].Best.Verified.Pass:
			return nil
		}
		ds[w].verifyNow = true
		r, err := ds[w].run()
		results[w], errs[w] = r, err
		if err != nil {
			return err
		}
	}
}

// longRun simulates the design at (prompt, token) machines and rate on
// the search's traffic continued to Problem.VerifyS (replicas, as the
// search's own simulations, on the verification's workloads), to its end
// or until its failure is certain (with Problem.StopFailing), and returns
// the check and the simulations it ran.
func (d *designSearch) longRun(prompt, token int, rate float64) (*Verification, int, error) {
	s := d.s
	if err := verifyRequests(s.p.VerifyS, rate); err != nil {
		return nil, 0, err
	}
	cl, err := d.cluster(prompt, token)
	if err != nil {
		return nil, 0, err
	}
	pt := d.newPoint(cl, rate)
	n, err := d.replicas(cl, pt, rate, false, s.p.StopFailing, s.verify, s.verifyStoppers)
	if err != nil {
		return nil, n, fmt.Errorf("verifying over %gs: %w", s.p.VerifyS, err)
	}
	return &Verification{DurationS: s.p.VerifyS, Pass: pt.Feasible, Verdict: pt.Verdict, Note: pt.Note,
		StopLimit: pt.StopLimit, StopS: pt.StopS, Requests: pt.Requests}, n, nil
}

// verifyPlans checks each design's robust plan over the nominal traffic
// continued to Problem.VerifyS, as every nominal optimum was checked
// (nds are the nominal search's designs, ctx the robust search's): the
// check is reported beside the plan, which it does not change (a plan
// stands on its scenarios). Nothing runs without a verification.
func (r *RobustResult) verifyPlans(ctx context.Context, nds []*designSearch, rate float64) error {
	if len(nds) == 0 || nds[0].s.verify == nil {
		return nil
	}
	g, gctx := errgroup.WithContext(ctx)
	nds[0].s.ctx = gctx // (the nominal search's own context ended with it)
	sims := make([]int, len(r.Designs))
	for i := range r.Designs {
		d := &r.Designs[i]
		if !d.Found || i >= len(nds) {
			continue
		}
		g.Go(func() error {
			v, n, err := nds[i].longRun(d.Prompt, d.Token, rate)
			d.Verified, sims[i] = v, n
			return err
		})
	}
	err := g.Wait()
	for _, n := range sims {
		r.Verifications += n
	}
	return err
}

// verifiedMin is find, a search for the design's optimum in region reg
// on the search's trace (returning it and the rate it was found at),
// with that optimum checked over the longer run: one that fails is no
// longer feasible, and find runs again, past it. After guardAfter such
// failures at a rate goal the region's largest cluster is checked: where
// even it fails the longer run, so does every cluster, and the search
// stops. After eagerAfter, find walks with every point it finds feasible
// checked at once (eager): the walk then bisects on the longer run's
// verdicts instead of stepping through the cheaper points one by one.
func (d *designSearch) verifiedMin(reg region, find func() (*Point, float64, error)) (*Point, float64, error) {
	best, rate, err := find()
	for failed := 1; err == nil && best != nil && d.verifying(); failed++ {
		var held bool
		if held, err = d.verify(best); err != nil || held {
			break
		}
		if failed == guardAfter && d.s.p.Goal.NeedsRate() {
			if held, err = d.largestHolds(reg, rate); err != nil || !held {
				return nil, rate, err
			}
		}
		d.eager = d.eager || failed >= eagerAfter
		best, rate, err = find()
	}
	return best, rate, err
}
