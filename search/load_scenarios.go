package search

import (
	"context"
	"fmt"
	"math"
	"sync/atomic"

	"splitplan/evaluator"
	"splitplan/resolve"
	"splitplan/slo"
)

// ScenarioCount is how a row of RunLoad fared across the scenarios of a
// robust search (ScenarioLoad).
type ScenarioCount struct {
	// Passed is the number of scenarios in which the row's cluster met
	// every SLO at the row's rate; Of is the number judged.
	Passed, Of int
	// Failed are the scenarios it failed, by index from 0 (RobustResult's
	// order: WorkloadSeeds[i] is scenario i's workload seed).
	Failed []int
	// KW are the P10, P50 and P90 (SpreadQuantiles) of the cluster's
	// average draw in kW (evaluator.Result.AverageKW) over the scenarios'
	// own runs of the row's duration, passing or not: the draw's error
	// bars, as the row's AverageKW is its draw on the nominal model and
	// workload. KWKnown counts the scenarios whose draw is known (a run
	// aborted as unsustainable has none); NaN when none is.
	KW      [3]float64
	KWKnown int
}

// ScenarioLoad judges every row of RunLoad (clusters at rates on workload
// w, cluster by cluster, rate by rate) in r.Scenarios scenarios (0:
// DefaultScenarios) drawn as RunRobust draws them from r.Seed: in
// scenario i the cluster's performance models are scaled by one draw of
// r.Errors per GPU and phase, and its traffic is w's with the scenario's
// workload seed (scenario 0 keeps w's). A row passes a scenario when its
// cluster meets every SLO over the scenario's trace and, with verifyS
// beyond w's duration, over that traffic continued to verifyS, as a
// robust search's scenario judges a point; so a cluster that a robust
// search with the same seeds counted as passing k scenarios at a rate
// passes at least those k here. Every row is judged, whatever its own
// verdict (the model's error runs either way). Each rows[i].Scenarios
// holds the count and the spread of the cluster's average draw over the
// scenarios' runs of w's duration, each simulated to its end whatever
// its verdict; it returns the simulations run. progress, when not
// nil, is told of each (row, scenario) judged and their total.
func ScenarioLoad(ctx context.Context, clusters []resolve.Cluster, rates []float64, w *Workload, opt evaluator.Options,
	spec slo.Spec, ref slo.Reference, parallel int, verifyS float64, r Robust, rows []LoadRow, progress func(done, total int)) (int, error) {
	n := r.Scenarios
	if n == 0 {
		n = DefaultScenarios
	}
	if n < 1 || n > MaxScenarios {
		return 0, fmt.Errorf("search: scenarios must be 1 to %d, got %d", MaxScenarios, n)
	}
	if opt.Compat {
		return 0, fmt.Errorf("search: scenarios scale the performance models, which the compat scheduler reads as curves: drop the compat mode")
	}
	if err := r.Errors.Validate(); err != nil {
		return 0, err
	}
	if len(rows) != len(clusters)*len(rates) {
		return 0, fmt.Errorf("search: %d rows for %d clusters at %d rates", len(rows), len(clusters), len(rates))
	}
	seeds := workloadSeeds(w.Seed, r.Seed, n)
	short := make([]*Workload, n)
	long := make([]*Workload, n) // nil: no check
	for i, sd := range seeds {
		short[i] = w.with(sd, w.DurationS)
		if verifyS > w.DurationS {
			long[i] = w.with(sd, verifyS)
		}
	}
	// A scenario's own run is simulated to its end with its energy,
	// whatever its verdict (a failing run is not stopped early: its draw
	// is wanted too); the check over the longer run stops once it
	// certainly fails, as a robust search's does.
	drawOpt := opt
	drawOpt.Energy = true
	stopper := spec.Stopper(ref)
	run := func(ctx context.Context, cl resolve.Cluster, rate float64, wl *Workload, opt evaluator.Options, stopper *slo.Stopper) (bool, float64, error) {
		v, res, err := checkRun(ctx, cl, rate, wl, opt, spec, ref, stopper)
		if err != nil {
			return false, math.NaN(), runError(err, "%s at %g req/s, seed %d over %gs", cl, rate, wl.Seed, wl.DurationS)
		}
		kw := math.NaN()
		if res.EnergyKnown && !res.Aborted {
			kw = res.AverageKW()
		}
		return v.Pass, kw, nil
	}
	pass := make([]bool, len(rows)*n)
	draw := make([]float64, len(rows)*n)
	todo := make([]int, len(pass))
	for k := range todo {
		todo[k] = k
	}
	var sims atomic.Int64
	err := eachRow(ctx, todo, parallel, progress, func(ctx context.Context, k int) error {
		i, si := k/n, k%n
		cl, rate := clusters[i/len(rates)], rates[i%len(rates)]
		cl = scenario{index: si, seed: seeds[si], r: &r}.adjust(cl)
		ok, kw, err := run(ctx, cl, rate, short[si], drawOpt, nil)
		sims.Add(1)
		draw[k] = kw
		if err != nil || !ok || long[si] == nil {
			pass[k] = ok
			return err
		}
		if err := verifyRequests(verifyS, rate); err != nil {
			return err
		}
		ok, _, err = run(ctx, cl, rate, long[si], opt, stopper)
		sims.Add(1)
		pass[k] = ok // (each goroutine its own entry)
		return err
	})
	if err != nil {
		return int(sims.Load()), err
	}
	for i := range rows {
		c := &ScenarioCount{Of: n}
		var kw []float64
		for si := range n {
			if pass[i*n+si] {
				c.Passed++
			} else {
				c.Failed = append(c.Failed, si)
			}
			if v := draw[i*n+si]; !math.IsNaN(v) {
				kw = append(kw, v)
			}
		}
		c.KW, c.KWKnown = drawSpread(kw), len(kw)
		rows[i].Scenarios = c
	}
	return int(sims.Load()), nil
}

// drawSpread is the P10, P50 and P90 (spreadQuantiles, as a robust
// search's spreads) of the draws kw, which it sorts; NaN when there are
// none.
func drawSpread(kw []float64) [3]float64 {
	if len(kw) == 0 {
		return [3]float64{math.NaN(), math.NaN(), math.NaN()}
	}
	return spreadQuantiles(kw)
}
