package search

import (
	"fmt"
	"sort"
	"splitplan/costpower"
	"splitplan/evaluator"
	"splitplan/resolve"
	"splitplan/slo"
	"strings"
	"sync"
)

// evaluate runs one simulation; tests replace it to make simulations fail.
var evaluate = evaluator.EvaluateContext

// pointKey identifies a simulation.
type pointKey struct {
	prompt, token int
	rate          float64
}

// designSearch is the search of one design.
type designSearch struct {
	s      *search
	spec   DesignSpec
	design costpower.Design
	mu     sync.Mutex
	memo   map[pointKey]*Point
	// idleOK reports that the design's largest cluster met every SLO at a
	// tenth of the load (worthChecking), so a failing point is not
	// reported as failing with any number of machines.
	idleOK bool
	// idle memoizes failsIdle's answers (worthChecking asks the largest
	// cluster's, which run may ask again as the closest point's).
	idle   map[pointKey]string
	points []*Point
	sims   int
	pruned int
	// stopped counts the simulations stopped once their failure was
	// certain (Problem.StopFailing).
	stopped int
	// stream is set for an exhaustive search of a rate goal whose points
	// are not kept (Problem.DropPoints): evalBound then offers each
	// simulated point to best and closest (streamed.go) instead of
	// keeping it in memo and points.
	stream bool
	streamed
	// models is the design's cluster with its performance models resolved
	// once (they do not depend on the machine counts); modelsErr why not.
	modelsOnce sync.Once
	models     resolve.Cluster
	modelsErr  error
	// start, when set (start.p > 0), is where a rate goal's frontier walk
	// starts its gallops (hintedMin) instead of bisecting: another
	// search's frontier start for the design (Sensitivity).
	start hint
	// verifyNow marks the design to verify with Problem.VerifyWinnerOnly
	// (runHinted asks the best); unverified are its points that failed
	// the verification, verifications its simulations; kept, in a
	// streamed search with a verification, its cheapest feasible points
	// (keepFeasible).
	verifyNow     bool
	eager         bool
	unverified    []*Point
	verifications int
	kept          []*Point
}

// cluster resolves the design at (prompt, token), with its policy.
func (d *designSearch) cluster(prompt, token int) (resolve.Cluster, error) {
	d.modelsOnce.Do(func() {
		p, t := d.design.MinCounts()
		d.models, d.modelsErr = resolve.NewCluster(d.s.p.Catalog, d.s.p.Perf, d.design, p, t, d.s.p.Model)
		if d.modelsErr == nil && d.s.adjust != nil {
			d.models = d.s.adjust(d.models)
		}
	})
	if d.modelsErr != nil {
		return resolve.Cluster{}, d.modelsErr
	}
	counts, err := d.s.p.Catalog.ClusterOf(d.design, prompt, token)
	if err != nil {
		return resolve.Cluster{}, err
	}
	cl := d.models
	cl.Cluster = counts
	cl.Policy, cl.PolicyInName = d.spec.Policy, true
	return cl, nil
}

// costOf returns the point's cluster (machine types resolved) for its
// cost and power, without performance models.
func (d *designSearch) costOf(prompt, token int) costpower.Cluster {
	cl, err := d.s.p.Catalog.ClusterOf(d.design, prompt, token)
	if err != nil {
		panic(err) // the counts come from the design space, which is valid
	}
	return cl
}

// newPoint is cluster cl's point at rate, not yet simulated: its cost,
// power and fixed cost of ownership.
func (d *designSearch) newPoint(cl resolve.Cluster, rate float64) *Point {
	return &Point{Design: d.spec.Label(), Prompt: cl.Prompt, Token: cl.Token, RateRPS: rate,
		CostUSDPerH: cl.CostUSDPerH(), PowerKW: cl.PowerKW(), OwnershipUSDPerH: d.s.p.Ownership.ClusterFixedUSDPerH(cl.Cluster)}
}

// feasible simulates (prompt, token) at rate, memoized, and reports
// whether every SLO holds.
//
// Outside exhaustive mode it first infers the answer, when it can, from
// the points already simulated: feasibility only grows with machines and
// falls with the rate, so a failure of a point with at least as many of
// both machines at a rate no higher, or a success of one with at most as
// many at a rate no lower, settles it without a simulation.
func (d *designSearch) feasible(prompt, token int, rate float64) (bool, error) {
	if !d.s.p.Exhaustive {
		if known, ok := d.infer(prompt, token, rate); known {
			return ok, nil
		}
	}
	pt, err := d.eval(prompt, token, rate)
	if err != nil {
		return false, err
	}
	return pt.Feasible, nil
}

func (d *designSearch) eval(prompt, token int, rate float64) (*Point, error) {
	pt, err := d.evalBound(prompt, token, rate, true)
	if err == nil && d.eager && pt.Feasible {
		// (The verification, once its walk turned eager: the point is
		// feasible only if it also holds over the longer run.)
		_, err = d.verify(pt)
	}
	return pt, err
}

// evalBound is eval; without bound it simulates even a point the
// analytic bound rejects (to explain why nothing was found).
func (d *designSearch) evalBound(prompt, token int, rate float64, bound bool) (*Point, error) {
	key := pointKey{prompt, token, rate}
	d.mu.Lock()
	if pt, ok := d.memo[key]; ok && (bound || pt.Simulated) {
		d.mu.Unlock()
		return pt, nil
	}
	d.mu.Unlock()
	s := d.s
	cl, err := d.cluster(prompt, token)
	if err != nil {
		return nil, err
	}
	pt := d.newPoint(cl, rate)
	if ub := s.upperBoundRPS(cl); bound && rate > ub {
		pt.Pruned = true
		pt.Note = fmt.Sprintf("analytic bound: at most %.1f req/s", ub)
		d.mu.Lock()
		if !d.stream {
			d.memo[key] = pt
		}
		d.pruned++
		d.mu.Unlock()
		s.pruned.Add(1)
		s.report(d.spec.Label(), "")
		return pt, nil
	}
	sims, err := d.replicas(cl, pt, rate, s.energy, s.p.StopFailing, s.workloads, s.stoppers)
	if err != nil {
		return nil, err
	}
	pt.Simulated = true
	pt.OwnershipUSDPerH += s.p.Ownership.EnergyUSDPerH(pt.AverageKW)
	d.mu.Lock()
	if d.stream {
		d.offer(pt)
	} else {
		d.memo[key] = pt
		d.points = append(d.points, pt)
	}
	d.sims += sims
	if pt.Stopped {
		d.stopped++ // (the last replica simulated stopped; the others passed)
	}
	d.mu.Unlock()
	s.sims.Add(int64(sims))
	s.report(d.spec.Label(), "")
	return pt, nil
}

// replicas simulates cluster cl (the point pt's) at rate on every
// replica of the workload, measuring the energy when energy is set, and
// folds what it sees into pt: its requests, energy, feasibility, verdict
// and note. Every replica must pass; the first that fails settles it (and
// its verdict is reported), else the replica closest to failing is. It
// returns the number of simulations run.
func (d *designSearch) replicas(cl resolve.Cluster, pt *Point, rate float64, energy, stop bool, ws []*Workload, stoppers []*slo.Stopper) (int, error) {
	s := d.s
	opt := s.p.Options
	opt.LatenciesOnly = true // the verdict reads only the SLO figures
	opt.NoITL = !s.readsITL
	opt.Energy = energy
	sim := cl.Sim() // (the same cluster for every seed)
	sims := 0
	for i, wl := range ws {
		reqs, err := wl.shared(rate) // read only
		if err != nil {
			return sims, err
		}
		if stop && !opt.Compat && s.p.Goal.checksLatency() {
			opt.Stop = stoppers[i].Stop(reqs)
		}
		if err := s.acquire(); err != nil {
			return sims, err
		}
		room := s.latencies.Get().(*[]evaluator.RequestLatency)
		opt.Latencies = *room
		res, err := evaluate(s.ctx, sim, reqs, opt)
		s.release()
		if err != nil {
			return sims, fmt.Errorf("%s: %w", pt.Label(), wl.traceSource(err))
		}
		sims++
		pt.Requests += len(reqs)
		var ok bool
		var v *slo.Verdict
		var note string
		if res.Stopped {
			// Its failure is certain; its figures, measured on the
			// requests finished and the time simulated when it stopped,
			// are not the run's: no verdict to check, no energy.
			ok, note = false, res.StopReason
			pt.Stopped, pt.StopLimit, pt.StopS = true, res.StopLimit, res.StopS
			pt.EnergyKnown, pt.AverageKW, pt.JPerOutputToken = false, 0, 0
		} else {
			pt.addEnergy(res, sims) // energy.go
			ok, v, note = s.verdict(res)
		}
		worse := i == 0 || !ok ||
			(v != nil && pt.Verdict != nil && v.BindingFigure().Slack < pt.Verdict.BindingFigure().Slack)
		if worse {
			pt.Feasible, pt.Verdict, pt.Note = ok, v, note
			if len(ws) > 1 && !ok {
				pt.Note = strings.TrimSpace(fmt.Sprintf("seed %d: %s", wl.Seed, note))
			}
		}
		// Nothing kept reads res now: its room serves the next simulation.
		*room = res.Latencies
		s.latencies.Put(room)
		if !ok {
			break
		}
	}
	return sims, nil
}

// fillEnergy gives pt, a simulated point whose simulations left the
// energy out (the goal does not weigh it), the energy figures those
// simulations would have measured (rerun). Only the points a result
// reports (a design's optimum, or its closest point) are filled.
func (d *designSearch) fillEnergy(pt *Point) error {
	if d.s.energy || pt == nil || !pt.Simulated {
		return nil
	}
	return d.rerun(pt, true, false)
}

// rerun simulates pt's replicas again, each to its end, measuring the
// energy when energy is set, and gives pt what they measured: its energy
// figures (and the ownership cost they make, as evalBound computes it)
// with energy, its feasibility, verdict and note with verdict.
// Simulations are deterministic, so the same replicas run, and fail
// where they failed; the reruns are not counted as the search's
// simulations.
func (d *designSearch) rerun(pt *Point, energy, verdict bool) error {
	cl, err := d.cluster(pt.Prompt, pt.Token)
	if err != nil {
		return err
	}
	again := Point{Design: pt.Design, Prompt: pt.Prompt, Token: pt.Token, RateRPS: pt.RateRPS}
	if _, err := d.replicas(cl, &again, pt.RateRPS, energy, false, d.s.workloads, nil); err != nil {
		return err
	}
	if verdict {
		pt.Feasible, pt.Verdict, pt.Note, pt.Stopped = again.Feasible, again.Verdict, again.Note, false
		pt.StopLimit, pt.StopS = "", 0
		pt.Requests = again.Requests // the same replicas ran
	}
	if energy {
		pt.EnergyKnown, pt.AverageKW, pt.JPerOutputToken = again.EnergyKnown, again.AverageKW, again.JPerOutputToken
		pt.OwnershipUSDPerH = d.s.p.Ownership.ClusterFixedUSDPerH(cl.Cluster)
		pt.OwnershipUSDPerH += d.s.p.Ownership.EnergyUSDPerH(pt.AverageKW)
	}
	return nil
}

// verdict checks one simulation against the goal's SLOs (for the batch
// goal, only that it drained).
func (s *search) verdict(res *evaluator.Result) (ok bool, v *slo.Verdict, note string) {
	if !s.p.Goal.checksLatency() {
		ok, note := slo.Drained(res, s.p.SLO.DrainRiseS)
		return ok, nil, note
	}
	chk := s.p.SLO.Check(res, s.ref)
	if !chk.Drained {
		note = chk.DrainNote
	}
	return chk.Pass, &chk, note
}

func (s *search) acquire() error {
	select {
	case s.sem <- struct{}{}:
		return nil
	case <-s.ctx.Done():
		return s.ctx.Err()
	}
}

func (s *search) release() { <-s.sem }

// reportFinished reports that design's search has ended.
func (s *search) reportFinished(design string) {
	if s.p.Progress == nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	pr := s.last
	pr.Simulations, pr.Pruned, pr.Finished = s.sims.Load(), s.pruned.Load(), design
	s.p.Progress(pr)
}

func (s *search) report(design, best string) {
	if s.p.Progress == nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if best != "" {
		s.last.Design, s.last.Best = design, best
	}
	s.last.Simulations, s.last.Pruned = s.sims.Load(), s.pruned.Load()
	s.p.Progress(s.last)
}

// infer answers feasibility from the simulated points by dominance.
func (d *designSearch) infer(prompt, token int, rate float64) (known, feasible bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	for _, p := range d.points {
		switch {
		case p.failsFor(prompt, token, rate):
			return true, false
		case p.Feasible && p.Prompt <= prompt && p.Token <= token && p.RateRPS >= rate && (!d.eager || p.Verified != nil):
			// (An eager verification infers success only from a point
			// that held over the longer run.)
			return true, true
		}
	}
	return false, false
}

// failsFor reports that simulated point p, failing with at least prompt
// and token machines at a rate no higher than rate, proves (prompt,
// token) fails at rate.
func (p *Point) failsFor(prompt, token int, rate float64) bool {
	return !p.Feasible && p.Prompt >= prompt && p.Token >= token && p.RateRPS <= rate
}

// sortedPoints returns the design's simulated points in a fixed order.
func (d *designSearch) sortedPoints() []Point {
	out := make([]Point, 0, len(d.points))
	for _, p := range d.points {
		out = append(out, *p)
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.Prompt != b.Prompt {
			return a.Prompt < b.Prompt
		}
		if a.Token != b.Token {
			return a.Token < b.Token
		}
		return a.RateRPS < b.RateRPS
	})
	return out
}

// completeStopped simulates to their end the points of the design that
// were stopped once their failure was certain (rerun), so that they have
// their SLO figures (for the closest point), and their energy when the
// search measures it.
func (d *designSearch) completeStopped() error {
	if d.stream {
		return d.completeStoppedStreamed() // streamed.go
	}
	for _, pt := range d.points {
		if pt.Stopped {
			if err := d.rerun(pt, d.s.energy, true); err != nil {
				return err
			}
		}
	}
	return nil
}

// IdleLoadFraction is the share of its rate at which a cluster that
// fails an SLO at the bound on machines is simulated again (failsIdle):
// the same requests, arriving this much further apart.
const IdleLoadFraction = 0.1

// failsIdle simulates pt's cluster on the same requests at
// IdleLoadFraction of pt's rate (the workload stretched in time), to its
// end, and returns the SLO it fails there on some replica, or "" when it
// meets every one. A cluster that fails an SLO with its machines nearly
// idle fails it with any number of them: the requests' own latencies on
// its machine types exceed the limit. The simulations are not counted as
// the search's.
func (d *designSearch) failsIdle(pt *Point) (string, error) {
	s := d.s
	if !s.p.Goal.checksLatency() {
		return "", nil
	}
	k := pointKey{pt.Prompt, pt.Token, pt.RateRPS}
	if name, ok := d.idle[k]; ok {
		return name, nil
	}
	name, err := d.simulateIdle(pt)
	if err == nil {
		if d.idle == nil {
			d.idle = map[pointKey]string{}
		}
		d.idle[k] = name
	}
	return name, err
}

// simulateIdle is failsIdle's simulation.
func (d *designSearch) simulateIdle(pt *Point) (string, error) {
	s := d.s
	cl, err := d.cluster(pt.Prompt, pt.Token)
	if err != nil {
		return "", err
	}
	opt := s.p.Options
	opt.LatenciesOnly = true
	opt.Energy = false
	sim := cl.Sim()
	for _, wl := range s.workloads {
		light := wl.with(wl.Seed, wl.DurationS/IdleLoadFraction)
		reqs, err := light.At(pt.RateRPS * IdleLoadFraction)
		if err != nil {
			return "", err
		}
		if err := s.acquire(); err != nil {
			return "", err
		}
		res, err := evaluate(s.ctx, sim, reqs, opt)
		s.release()
		if err != nil {
			return "", fmt.Errorf("%s at a tenth of its rate: %w", pt.Label(), light.traceSource(err))
		}
		if ok, v, _ := s.verdict(res); !ok && v != nil && v.Drained {
			return v.BindingFigure().Name(), nil
		}
	}
	return "", nil
}
