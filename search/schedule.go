package search

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"

	"golang.org/x/sync/errgroup"

	"splitplan/evaluator"
	"splitplan/resolve"
	"splitplan/slo"
	"splitplan/traces"
)

// ScheduleSpec asks, beside a static plan for a rate profile, for a
// scheduled plan (the machines of each pool set per interval) and,
// optionally, a reactive one (an autoscaler).
type ScheduleSpec struct {
	// IntervalS is the length of a schedule's interval.
	IntervalS float64
	// DelayS is the time from starting a machine to its serving (model
	// load): a scheduled plan starts each interval's new machines DelayS
	// before it; an autoscaler's serve DelayS after its decision.
	DelayS float64
	// Auto, when not nil, also runs the reactive plan: the autoscaler
	// from the first interval's counts, up to 1.5 times the most machines
	// any interval needs.
	Auto *evaluator.AutoScale
	// SteadyS is the length of the steady-state simulations that size each
	// interval (default min(IntervalS, 120 s), optimize's per simulation).
	SteadyS float64
}

// Plan kinds, in the order a DesignSchedule lists them.
const (
	PlanStatic    = "static"
	PlanScheduled = "scheduled"
	PlanIdeal     = "ideal"
	PlanReactive  = "reactive"
)

// PlanFigures is one plan of a design simulated over the whole profile.
type PlanFigures struct {
	// Kind is PlanStatic, PlanScheduled, PlanIdeal or PlanReactive.
	Kind string `json:"plan"`
	// MachineHours is the machines' powered hours (for the ideal plan,
	// each interval's machines over the interval alone); CostUSD their
	// rental; EnergyKWh the GPUs' energy.
	MachineHours float64 `json:"machine_hours"`
	CostUSD      float64 `json:"cost_usd"`
	EnergyKWh    float64 `json:"energy_kwh"`
	// Pass reports that every SLO held over the whole profile; Binding
	// names the binding SLO figure.
	Pass    bool   `json:"slos_met"`
	Binding string `json:"binding"`
	// IntervalsMet is the fraction of intervals whose requests (by
	// arrival) meet every SLO.
	IntervalsMet float64 `json:"intervals_met"`
	// Intervals holds per interval its machines and whether its requests
	// met every SLO.
	Intervals []IntervalFigures `json:"intervals"`
}

// IntervalFigures is one interval of a plan.
type IntervalFigures struct {
	StartS float64 `json:"start_s"`
	EndS   float64 `json:"end_s"`
	// MeanRPS and PeakRPS are the profile's mean and highest rate over
	// the interval (scaled to the problem's rate).
	MeanRPS float64 `json:"mean_rps"`
	PeakRPS float64 `json:"peak_rps"`
	// Prompt and Token are the machines serving from the interval's start
	// (the reactive plan: the most serving during it).
	Prompt int `json:"prompt_machines"`
	Token  int `json:"token_machines"`
	// Requests arrived in the interval; Pass reports that they met every
	// SLO (vacuously with none).
	Requests int  `json:"requests"`
	Pass     bool `json:"slos_met"`
}

// DesignSchedule is the plans of one design.
type DesignSchedule struct {
	Design string        `json:"design"`
	Plans  []PlanFigures `json:"plans"`
}

// Plan returns the design's plan of kind (nil when absent).
func (d *DesignSchedule) Plan(kind string) *PlanFigures {
	for i := range d.Plans {
		if d.Plans[i].Kind == kind {
			return &d.Plans[i]
		}
	}
	return nil
}

// scheduleMargins are the rate margins a scheduled plan tries, in
// order, until its whole-profile simulation meets the SLOs; the static
// plan's counts are the last resort.
var scheduleMargins = []float64{0, 0.1, 0.25, 0.5}

// PlanSchedules plans, for every design of p (a rate goal over a rate
// profile), a static plan (one cluster for the whole profile), a
// scheduled plan and the ideal one, and with spec.Auto a reactive one,
// each simulated over the whole profile, queues carried over.
//
// Each interval is sized by a steady-state search at the interval's
// highest rate (one search per design and distinct rate): the design's
// capacity at each rate, computed once and reused by every plan.
// The static plan is the most machines any interval needs; the scheduled
// plan each interval's, started spec.DelayS ahead and never more than the
// static plan's. Either is simulated over the whole profile and, when it
// misses an SLO, sized again at rates raised by scheduleMargins (the
// search's bound on the machines last). The ideal plan is the unraised
// schedule with machines that start and stop at once, billed for their
// intervals alone. Designs are planned at once, their whole-profile
// simulations p.Parallel at a time; the plans do not depend on it.
func PlanSchedules(ctx context.Context, p *Problem, spec ScheduleSpec) ([]DesignSchedule, error) {
	prof := p.Workload.Arrivals.Profile
	switch {
	case prof == nil:
		return nil, errors.New("search: a schedule needs a rate profile")
	case !p.Goal.NeedsRate():
		return nil, fmt.Errorf("search: a schedule sizes a rate goal (cost, power, energy, tco), not %s", p.Goal)
	case !(spec.IntervalS > 0) || math.IsInf(spec.IntervalS, 0):
		return nil, fmt.Errorf("search: schedule interval %v is not a positive duration", spec.IntervalS)
	case spec.IntervalS > p.Workload.DurationS:
		return nil, fmt.Errorf("search: the schedule's interval (%gs) is longer than the profile simulated (%gs)", spec.IntervalS, p.Workload.DurationS)
	case !(spec.DelayS >= 0) || spec.DelayS >= spec.IntervalS:
		return nil, fmt.Errorf("search: scale delay %gs must be at least 0 and shorter than the interval (%gs)", spec.DelayS, spec.IntervalS)
	}
	if spec.SteadyS == 0 {
		spec.SteadyS = min(spec.IntervalS, 120)
	}
	s, err := newSearch(ctx, p)
	if err != nil {
		return nil, err
	}
	ivs := intervals(prof, p.RateRPS, p.Workload.DurationS, spec.IntervalS)
	reqs, err := p.Workload.At(p.RateRPS)
	if err != nil {
		return nil, err
	}
	// The plans resolve their clusters, and the sizer its searches, with
	// the search's problem: its defaults filled and the performance
	// models of the whole space (one provenance for every design).
	p = s.p
	out := make([]DesignSchedule, len(p.Designs))
	// Every design is planned at once, its whole-profile simulations
	// p.Parallel at a time over all the designs (day): planned
	// p.Parallel designs at a time, the design planned last ran alone at
	// the end, its simulations one after another (the README's day run
	// kept 1.4 of 2 cores busy). The whole-profile simulations hold most
	// of the memory, and no more of them run at once than before; the
	// designs sizing their intervals beside them raise the day run's peak
	// from about 1.3 to 1.5 GB.
	day := make(chan struct{}, max(p.Parallel, 1))
	g, gctx := errgroup.WithContext(ctx)
	for k := range p.Designs {
		g.Go(func() error {
			sizer := &intervalSizer{ctx: ctx, p: p, k: k, steadyS: spec.SteadyS, memo: map[float64]DesignResult{}}
			pl := &planner{s: s, ctx: gctx, p: p, spec: spec, design: p.Designs[k], reqs: reqs, ivs: ivs, sizer: sizer, day: day}
			ds, err := pl.plan(k)
			out[k] = ds
			return err
		})
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	return out, nil
}

// plan is design k's plans.
func (pl *planner) plan(k int) (DesignSchedule, error) {
	ds := DesignSchedule{Design: pl.design.Label()}
	// sized is design k's interval sizes at margin m (len(scheduleMargins):
	// the machine bound), computed when first asked for.
	sized := func(m int) ([][2]int, error) {
		if m < len(scheduleMargins) {
			return pl.sizer.counts(pl.ivs, 1+scheduleMargins[m])
		}
		first, err := pl.sizer.counts(pl.ivs, 1)
		if err != nil {
			return nil, err
		}
		bound := [2]int{pl.p.MaxMachines, pl.p.MaxMachines}
		if first[0][1] == 0 {
			bound[1] = 0 // a baseline
		}
		return repeat(bound, len(pl.ivs)), nil
	}
	// The static plan: the most any interval needs, raised until the
	// whole profile meets the SLOs.
	var static PlanFigures
	var staticCounts [2]int
	for m := 0; m <= len(scheduleMargins); m++ {
		counts, err := sized(m)
		if err != nil {
			return ds, err
		}
		staticCounts = [2]int{}
		for _, c := range counts {
			staticCounts = [2]int{max(staticCounts[0], c[0]), max(staticCounts[1], c[1])}
		}
		if static, err = pl.simulate(PlanStatic, repeat(staticCounts, len(pl.ivs)), nil); err != nil {
			return ds, err
		}
		if static.Pass {
			break
		}
	}
	ds.Plans = append(ds.Plans, static)
	var sched, ideal PlanFigures
	var idealCounts [][2]int
	for m := 0; m <= len(scheduleMargins); m++ {
		counts := repeat(staticCounts, len(pl.ivs))
		if m < len(scheduleMargins) {
			sizedCounts, err := sized(m)
			if err != nil {
				return ds, err
			}
			counts = slices.Clone(sizedCounts)
			for i, c := range counts { // never more than the static plan
				counts[i] = [2]int{min(c[0], staticCounts[0]), min(c[1], staticCounts[1])}
			}
		}
		var res *evaluator.Result
		var cl resolve.Cluster
		var err error
		if sched, res, cl, err = pl.run(PlanScheduled, counts, &evaluator.Scaling{DelayS: pl.spec.DelayS}); err != nil {
			return ds, err
		}
		if m == 0 {
			// The unraised schedule's simulation is the ideal plan's too.
			idealCounts, ideal = counts, pl.ideal(counts, res, cl)
		}
		if sched.Pass {
			break
		}
	}
	ds.Plans = append(ds.Plans, sched, ideal)
	if pl.spec.Auto != nil {
		rp, err := pl.reactive(idealCounts, staticCounts, *pl.spec.Auto)
		if err != nil {
			return ds, err
		}
		ds.Plans = append(ds.Plans, rp)
	}
	return ds, nil
}

// repeat is n copies of c.
func repeat(c [2]int, n int) [][2]int {
	out := make([][2]int, n)
	for i := range out {
		out[i] = c
	}
	return out
}

// intervals splits [0, durS) into intervals of intervalS (the last may be
// shorter) with the profile's mean and peak rates at a mean of rps.
func intervals(prof *traces.Profile, rps, durS, intervalS float64) []IntervalFigures {
	scale := rps / prof.Mean()
	var out []IntervalFigures
	for start := 0.0; start < durS; start += intervalS {
		end := min(start+intervalS, durS)
		iv := IntervalFigures{StartS: start, EndS: end, MeanRPS: scale * (prof.Requests(end) - prof.Requests(start)) / (end - start)}
		// The profile is piecewise linear: its peak over the interval is
		// at a knot or an end; 256 samples and the ends find it within a
		// 1/256 of the interval.
		for j := 0; j <= 256; j++ {
			iv.PeakRPS = max(iv.PeakRPS, scale*prof.RateAt(start+(end-start)*float64(j)/256))
		}
		iv.PeakRPS = max(iv.PeakRPS, iv.MeanRPS)
		out = append(out, iv)
	}
	return out
}

// intervalSizer sizes design k's intervals by steady-state searches, one
// per distinct rate (memoized); each design's planner has its own. A
// design is sized alone: without pruning a design's optimum does not
// depend on the others searched beside it (the problem's performance
// models are already the whole space's), and the higher margins are asked
// for by the few designs whose plans missed.
type intervalSizer struct {
	ctx     context.Context
	p       *Problem
	k       int
	steadyS float64
	memo    map[float64]DesignResult
}

// counts returns the design's cheapest steady-state counts at each
// interval's peak rate times factor.
func (z *intervalSizer) counts(ivs []IntervalFigures, factor float64) ([][2]int, error) {
	out := make([][2]int, len(ivs))
	for i, iv := range ivs {
		rate := iv.PeakRPS * factor
		d, ok := z.memo[rate]
		if !ok {
			q := *z.p
			q.RateRPS = rate
			q.Designs = z.p.Designs[z.k : z.k+1]
			q.PruneDesigns = false
			q.Progress = nil
			w := z.p.Workload
			q.Workload = &Workload{Sizes: w.Sizes, DurationS: z.steadyS, Seed: w.Seed, Independent: w.Independent,
				Arrivals: traces.Arrivals{BurstCV: w.Arrivals.BurstCV}}
			r, err := Run(z.ctx, &q)
			if err != nil {
				return nil, fmt.Errorf("search: sizing the interval at %.4g req/s: %w", rate, err)
			}
			d = r.Designs[0]
			z.memo[rate] = d
		}
		if !d.Found {
			// No cluster within the bounds serves this peak steadily: the
			// most machines the search may use.
			mp, mt := z.p.MaxMachines, z.p.MaxMachines
			if d.Baseline {
				mt = 0
			}
			out[i] = [2]int{mp, mt}
			continue
		}
		out[i] = [2]int{d.Best.Prompt, d.Best.Token}
	}
	return out, nil
}

// planner simulates one design's plans over the whole profile.
type planner struct {
	day    chan struct{} // a slot per whole-profile simulation at once
	sizer  *intervalSizer
	s      *search
	ctx    context.Context
	p      *Problem
	spec   ScheduleSpec
	design DesignSpec
	reqs   []traces.Request
	ivs    []IntervalFigures
}

// cluster resolves the design at its largest counts.
func (pl *planner) cluster(prompt, token int) (resolve.Cluster, error) {
	cl, err := resolve.NewCluster(pl.p.Catalog, pl.p.Perf, pl.design.Design, prompt, token, pl.p.Model)
	if err != nil {
		return resolve.Cluster{}, err
	}
	cl.Policy, cl.PolicyInName = pl.design.Policy, true
	return cl, nil
}

// simulate runs counts (per interval) over the whole profile: as steps of
// sc (DelayS as given; Steps filled here), or, with sc nil, the first
// counts throughout (the static plan).
func (pl *planner) simulate(kind string, counts [][2]int, sc *evaluator.Scaling) (PlanFigures, error) {
	f, _, _, err := pl.run(kind, counts, sc)
	return f, err
}

// run is simulate, also returning the simulation and its cluster.
func (pl *planner) run(kind string, counts [][2]int, sc *evaluator.Scaling) (PlanFigures, *evaluator.Result, resolve.Cluster, error) {
	mp, mt := 0, 0
	for _, c := range counts {
		mp, mt = max(mp, c[0]), max(mt, c[1])
	}
	cl, err := pl.cluster(mp, mt)
	if err != nil {
		return PlanFigures{}, nil, cl, err
	}
	opt := pl.p.Options
	opt.Energy, opt.LatenciesOnly = true, true
	opt.AbortDelayS = 0 // (a plan's figures are the whole profile's)
	if sc != nil {
		sc.Steps = nil
		k := cl.PromptType.InstancesPerMachine()
		kt := cl.TokenType.InstancesPerMachine()
		for i, c := range counts {
			if i > 0 && c == counts[i-1] {
				continue
			}
			sc.Steps = append(sc.Steps, evaluator.ScaleStep{AtS: pl.ivs[i].StartS, Prompt: c[0] * k, Token: c[1] * kt})
		}
		opt.Scaling = sc
	}
	res, err := pl.evaluate(cl, opt)
	if err != nil {
		return PlanFigures{}, nil, cl, fmt.Errorf("%s plan of %s: %w", kind, pl.design.Label(), err)
	}
	return pl.figures(kind, cl, res, counts), res, cl, nil
}

// evaluate simulates cl over the whole profile, in a slot of pl.day.
func (pl *planner) evaluate(cl resolve.Cluster, opt evaluator.Options) (*evaluator.Result, error) {
	select {
	case pl.day <- struct{}{}:
	case <-pl.ctx.Done():
		return nil, pl.ctx.Err()
	}
	defer func() { <-pl.day }()
	return evaluator.EvaluateContext(pl.ctx, cl.Sim(), pl.reqs, opt)
}

// ideal is the ideal plan of counts from res, their scheduled simulation:
// a scale delay moves when machines are powered, not when they serve, so
// the requests fare the same; machines that start and stop at once are
// billed for their intervals alone and draw no power while starting.
func (pl *planner) ideal(counts [][2]int, res *evaluator.Result, cl resolve.Cluster) PlanFigures {
	f := pl.figures(PlanIdeal, cl, res, counts)
	f.MachineHours, f.CostUSD = 0, 0
	for i, c := range counts {
		h := (pl.ivs[i].EndS - pl.ivs[i].StartS) / 3600
		f.MachineHours += float64(c[0]+c[1]) * h
		f.CostUSD += (float64(c[0])*cl.PromptType.CostUSDPerH + float64(c[1])*cl.TokenType.CostUSDPerH) * h
	}
	for _, m := range res.Machines {
		if idle := m.PoweredS - m.BusyS; m.StartingS > 0 && idle > 0 {
			f.EnergyKWh -= m.IdleEnergyJ / idle * m.StartingS / 3.6e6
		}
	}
	return f
}

// reactive runs the autoscaler from the first interval's counts (of
// counts), with room for 1.5 times the static plan's machines (static).
func (pl *planner) reactive(counts [][2]int, static [2]int, a evaluator.AutoScale) (PlanFigures, error) {
	mp := min(int(math.Ceil(1.5*float64(static[0]))), max(pl.p.MaxMachines, static[0]))
	mt := min(int(math.Ceil(1.5*float64(static[1]))), max(pl.p.MaxMachines, static[1]))
	cl, err := pl.cluster(mp, mt)
	if err != nil {
		return PlanFigures{}, err
	}
	k, kt := cl.PromptType.InstancesPerMachine(), cl.TokenType.InstancesPerMachine()
	a.MinPrompt, a.MinToken = max(a.MinPrompt, 1)*k, 0
	if mt > 0 {
		a.MinToken = max(a.MinToken, 1) * kt
	}
	opt := pl.p.Options
	opt.Energy, opt.LatenciesOnly = true, true
	opt.AbortDelayS = 0
	opt.Scaling = &evaluator.Scaling{Steps: []evaluator.ScaleStep{{AtS: 0, Prompt: counts[0][0] * k, Token: counts[0][1] * kt}}, DelayS: pl.spec.DelayS, Auto: &a}
	res, err := pl.evaluate(cl, opt)
	if err != nil {
		return PlanFigures{}, fmt.Errorf("reactive plan of %s: %w", pl.design.Label(), err)
	}
	return pl.figures(PlanReactive, cl, res, nil), nil
}

// figures reads a plan's figures from its whole-profile simulation res
// of cl; counts are the plan's per interval (nil: read the machines
// serving from the simulation's requests).
func (pl *planner) figures(kind string, cl resolve.Cluster, res *evaluator.Result, counts [][2]int) PlanFigures {
	f := PlanFigures{Kind: kind, EnergyKWh: res.EnergyJ / 3.6e6}
	sim := cl.Simulated()
	for _, m := range res.Machines {
		usd := sim.PromptType.CostUSDPerH
		if m.Pool == evaluator.PoolToken {
			usd = sim.TokenType.CostUSDPerH
		}
		f.MachineHours += m.PoweredS / 3600 / float64(instances(cl, m.Pool))
		f.CostUSD += m.PoweredS / 3600 * usd
	}
	v := pl.p.SLO.Check(res, pl.s.ref)
	f.Pass = v.Pass
	if len(v.Figures) > 0 {
		b := v.BindingFigure()
		f.Binding = fmt.Sprintf("%s %.3g/%g", b.Name(), b.Measured, b.Limit)
	}
	if !v.Drained {
		note, _, _ := strings.Cut(v.DrainNote, ":")
		f.Binding = "unsustainable (" + note + ")"
	}
	met := 0
	for i, iv := range pl.ivs {
		iv.Prompt, iv.Token = -1, -1
		if counts != nil {
			iv.Prompt, iv.Token = counts[i][0], counts[i][1]
		}
		// The requests arrive in order: the interval's are one run of
		// them (found by binary search, not a scan of the day per interval).
		lo := sort.Search(len(pl.reqs), func(j int) bool { return pl.reqs[j].Arrival >= iv.StartS })
		hi := sort.Search(len(pl.reqs), func(j int) bool { return pl.reqs[j].Arrival >= iv.EndS })
		sub := res.Latencies[lo:hi]
		iv.Requests = len(sub)
		iv.Pass = true
		if len(sub) > 0 {
			part := &evaluator.Result{Latencies: sub, Completed: len(sub), EndS: res.EndS, ITL: res.ITL}
			iv.Pass = figuresMet(pl.p.SLO.Check(part, pl.s.ref))
		}
		if iv.Pass {
			met++
		}
		f.Intervals = append(f.Intervals, iv)
	}
	f.IntervalsMet = float64(met) / float64(len(pl.ivs))
	return f
}

// instances is the replicas a machine of cl's pool serves.
func instances(cl resolve.Cluster, pool evaluator.Pool) int {
	if pool == evaluator.PoolToken {
		return cl.TokenType.InstancesPerMachine()
	}
	return cl.PromptType.InstancesPerMachine()
}

// figuresMet reports that every figure of v met its limit (an interval's
// requests: whether the run drained is the whole profile's question).
func figuresMet(v slo.Verdict) bool {
	for _, f := range v.Figures {
		if !f.OK() {
			return false
		}
	}
	return true
}
