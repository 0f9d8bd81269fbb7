package search

import (
	"context"
	"math"
	"reflect"
	"testing"

	"splitplan/evaluator"
	"splitplan/resolve"
	"splitplan/traces"
)

// scheduleProblem is a cost search of HH and Baseline-H100 over a
// 20-minute diurnal swing between 20 and 70 req/s (mean 45).
func scheduleProblem(t *testing.T, parallel int) *Problem {
	t.Helper()
	p := problem(t, GoalCost, "coding", 45, 80, 1200, "HH", "Baseline-H100")
	prof, err := traces.ParseDiurnal("diurnal:peak=70,trough=20,period=20m,phase=10m")
	if err != nil {
		t.Fatal(err)
	}
	p.Workload.Arrivals = traces.Arrivals{Profile: prof}
	p.Parallel = parallel
	return p
}

// TestPlanSchedules: the static plan meets the SLOs; the scheduled plan meets them too for less (at most the
// static cost), the ideal one costs no more than the scheduled one, each
// plan has an interval a 5 minutes, and the plans are the same at any
// parallelism.
func TestPlanSchedules(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("plans a schedule by whole-profile simulations (seconds)")
	}
	run := func(parallel int) []DesignSchedule {
		p := scheduleProblem(t, parallel)
		ds, err := PlanSchedules(context.Background(), p, ScheduleSpec{IntervalS: 300, DelayS: 60,
			Auto: &evaluator.AutoScale{PeriodS: 30, CooldownS: 120, TargetUtil: 0.6}})
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range ds {
			st, sc, id, re := d.Plan(PlanStatic), d.Plan(PlanScheduled), d.Plan(PlanIdeal), d.Plan(PlanReactive)
			if st == nil || sc == nil || id == nil || re == nil {
				t.Fatalf("%s: plans missing: %+v", d.Design, d.Plans)
			}
			for i, iv := range sc.Intervals {
				if iv.Prompt > st.Intervals[i].Prompt || iv.Token > st.Intervals[i].Token || iv.Prompt < 1 {
					t.Errorf("%s: interval %d scheduled %d/%d, static %d/%d", d.Design, i, iv.Prompt, iv.Token, st.Intervals[i].Prompt, st.Intervals[i].Token)
				}
			}
			if !st.Pass || !sc.Pass {
				t.Errorf("%s: static pass %v (%s), scheduled pass %v (%s)", d.Design, st.Pass, st.Binding, sc.Pass, sc.Binding)
			}
			if sc.CostUSD > st.CostUSD*1.0001 || id.CostUSD > sc.CostUSD*1.0001 {
				t.Errorf("%s: cost static $%.1f, scheduled $%.1f, ideal $%.1f", d.Design, st.CostUSD, sc.CostUSD, id.CostUSD)
			}
			for _, pl := range d.Plans {
				if len(pl.Intervals) != 4 || pl.IntervalsMet < 0 || pl.IntervalsMet > 1 {
					t.Errorf("%s %s: %d intervals, %v met", d.Design, pl.Kind, len(pl.Intervals), pl.IntervalsMet)
				}
			}
			// The scheduled plan meets the SLOs it claims: simulated again
			// from its intervals alone, outside the planner.
			if parallel == 1 {
				checkScheduleClaim(t, p, d.Design, sc)
				checkIdealDerived(t, p, d.Design, id)
			}
			t.Logf("%s: static $%.1f %.1f mh, scheduled $%.1f %.1f mh (%v), ideal $%.1f, reactive $%.1f pass %v met %.2f",
				d.Design, st.CostUSD, st.MachineHours, sc.CostUSD, sc.MachineHours, sc.Intervals, id.CostUSD, re.CostUSD, re.Pass, re.IntervalsMet)
		}
		return ds
	}
	a, b := run(1), run(2)
	if !reflect.DeepEqual(a, b) {
		t.Error("the plans differ between -j 1 and -j 2")
	}
}

// TestPlanSchedulesErrors: a schedule needs a profile, a rate goal, an
// interval within the profile and a delay shorter than it.
func TestPlanSchedulesErrors(t *testing.T) {
	t.Parallel()
	p := scheduleProblem(t, 1)
	for _, spec := range []ScheduleSpec{{IntervalS: 0}, {IntervalS: 5000}, {IntervalS: 300, DelayS: 300}, {IntervalS: 300, DelayS: -1}} {
		if _, err := PlanSchedules(context.Background(), p, spec); err == nil {
			t.Errorf("%+v accepted", spec)
		}
	}
	p.Workload.Arrivals = traces.Arrivals{}
	if _, err := PlanSchedules(context.Background(), p, ScheduleSpec{IntervalS: 300}); err == nil {
		t.Error("a schedule without a profile accepted")
	}
}

// checkScheduleClaim simulates plan's intervals as a schedule over p's
// whole profile and checks that the SLOs hold as the plan says.
func checkScheduleClaim(t *testing.T, p *Problem, design string, plan *PlanFigures) {
	t.Helper()
	s, err := newSearch(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	mp, mt := 0, 0
	var steps []evaluator.ScaleStep
	for _, iv := range plan.Intervals {
		mp, mt = max(mp, iv.Prompt), max(mt, iv.Token)
		steps = append(steps, evaluator.ScaleStep{AtS: iv.StartS, Prompt: iv.Prompt, Token: iv.Token})
	}
	cl, err := resolve.NamedCluster(p.Catalog, p.Perf, design, mp, mt, p.Model)
	if err != nil {
		t.Fatal(err)
	}
	reqs, err := p.Workload.At(p.RateRPS)
	if err != nil {
		t.Fatal(err)
	}
	res, err := evaluator.Evaluate(cl.Sim(), reqs, evaluator.Options{LatenciesOnly: true, Scaling: &evaluator.Scaling{Steps: steps, DelayS: 60}})
	if err != nil {
		t.Fatal(err)
	}
	if v := p.SLO.Check(res, s.ref); v.Pass != plan.Pass || !v.Pass {
		t.Errorf("%s: the schedule simulated again passes %v, the plan claims %v", design, v.Pass, plan.Pass)
	}
}

// checkIdealDerived simulates the ideal plan's counts with machines that
// start at once (no scale delay) and checks the plan, derived from the
// delayed schedule's simulation, says the same: requests, SLOs, energy.
func checkIdealDerived(t *testing.T, p *Problem, design string, ideal *PlanFigures) {
	t.Helper()
	s, err := newSearch(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	pl := &planner{s: s, ctx: context.Background(), p: p, day: make(chan struct{}, 1), design: specsOf(t, p.Catalog, design)[0], ivs: intervals(p.Workload.Arrivals.Profile, p.RateRPS, p.Workload.DurationS, 300)}
	if pl.reqs, err = p.Workload.At(p.RateRPS); err != nil {
		t.Fatal(err)
	}
	var counts [][2]int
	for _, iv := range ideal.Intervals {
		counts = append(counts, [2]int{iv.Prompt, iv.Token})
	}
	f, err := pl.simulate(PlanIdeal, counts, &evaluator.Scaling{})
	if err != nil {
		t.Fatal(err)
	}
	if f.Pass != ideal.Pass || f.IntervalsMet != ideal.IntervalsMet || math.Abs(f.EnergyKWh-ideal.EnergyKWh) > 1e-9*f.EnergyKWh {
		t.Errorf("%s: the ideal plan simulated without a delay: pass %v, met %v, %v kWh; derived: %v, %v, %v kWh",
			design, f.Pass, f.IntervalsMet, f.EnergyKWh, ideal.Pass, ideal.IntervalsMet, ideal.EnergyKWh)
	}
}
