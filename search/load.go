package search

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sync"

	"golang.org/x/sync/errgroup"

	"splitplan/evaluator"
	"splitplan/resolve"
	"splitplan/slo"
)

// LoadRow is one cluster simulated at one rate.
type LoadRow struct {
	// Cluster names the cluster (resolve.Cluster.String).
	Cluster string
	// RPS is the rate simulated, in requests per second.
	RPS float64
	// Aborted reports that the run stopped early, unsustainable.
	Aborted bool
	// Verdict is the check against the SLOs.
	Verdict slo.Verdict
	// Seconds and Slowdowns hold the nine P50/P90/P99 figures of TTFT,
	// TBT and E2E in the order of slo.Default().Targets (NaN for an
	// aborted run, and when no request has the metric: no TBT when every
	// request has one output token, which the SLO check passes).
	Seconds, Slowdowns [9]float64
	// AverageKW is the cluster's steady draw (evaluator.Result.AverageKW) and
	// JPerOutputToken its energy per output token (NaN when unknown or
	// aborted).
	AverageKW, JPerOutputToken float64
	// Attainment is, for each SLO scale RunLoadProgress was given, the
	// fraction of the run's requests that meet every limit of the spec's
	// Goodput scaled by it (NaN for an aborted run).
	Attainment []float64
	// Verified is the row's check over a longer run (VerifyLoad), nil
	// where none ran: the row failed on its own, or no check was asked.
	Verified *Verification
	// Scenarios is how the row fared across a robust search's scenarios
	// (ScenarioLoad), nil where none were judged.
	Scenarios *ScenarioCount
}

// Pass reports that the row met every SLO: over its run and, where it was
// checked over a longer one (Verified), there too.
func (r LoadRow) Pass() bool { return r.Verdict.Pass && (r.Verified == nil || r.Verified.Pass) }

// NoRequestsError reports a rate that gives no requests over the
// workload's duration.
type NoRequestsError struct {
	RPS, DurationS float64
}

func (e *NoRequestsError) Error() string {
	return fmt.Sprintf("search: %g req/s over %g s gives no requests", e.RPS, e.DurationS)
}

// WorkloadError reports that the workload could not give its requests at
// a rate; its message is the workload's.
type WorkloadError struct {
	RPS float64
	Err error
}

func (e *WorkloadError) Error() string { return e.Err.Error() }

// Unwrap returns the workload's error.
func (e *WorkloadError) Unwrap() error { return e.Err }

// RunLoad simulates every cluster at every rate on workload w, parallel
// simulations at once, and checks each run against spec (slowdowns against
// ref). Rows come back cluster by cluster, rate by rate, whatever the
// timing. The first error stops the rest: a *WorkloadError or a
// *NoRequestsError for a rate, or the simulator's error prefixed with the
// cluster and the rate (an *evaluator.UnservableError when the cluster
// cannot serve a request).
func RunLoad(ctx context.Context, clusters []resolve.Cluster, rates []float64, w *Workload, opt evaluator.Options,
	spec slo.Spec, ref slo.Reference, parallel int) ([]LoadRow, error) {
	return RunLoadProgress(ctx, clusters, rates, w, opt, spec, ref, parallel, nil)
}

// RunLoadProgress is RunLoad calling progress, when not nil, with the
// number of simulations finished and their total each time one finishes
// (from the goroutine that ran it, one call at a time): a long sweep's
// caller shows it. With SLO scales (and a spec with a Goodput), each row
// also gets the attainment of the goodput's limits scaled by each
// (DistServe's SLO scale: 0.5 halves every limit).
func RunLoadProgress(ctx context.Context, clusters []resolve.Cluster, rates []float64, w *Workload, opt evaluator.Options,
	spec slo.Spec, ref slo.Reference, parallel int, progress func(done, total int), scales ...float64) ([]LoadRow, error) {
	var scaled []slo.Goodput
	if len(scales) > 0 {
		if spec.Goodput == nil {
			return nil, fmt.Errorf("search: SLO scales need the spec's per-request limits (a Goodput)")
		}
		for _, k := range scales {
			g, err := spec.Goodput.Scaled(k)
			if err != nil {
				return nil, err
			}
			scaled = append(scaled, g)
		}
	}
	rows := make([]LoadRow, len(clusters)*len(rates))
	all := make([]int, len(rows))
	for i := range all {
		all[i] = i
	}
	nine := slo.Default().Targets
	err := eachRow(ctx, all, parallel, progress, func(ctx context.Context, i int) error {
		cl, rate := clusters[i/len(rates)], rates[i%len(rates)]
		reqs, err := w.At(rate)
		if err != nil {
			return &WorkloadError{RPS: rate, Err: err}
		}
		if len(reqs) == 0 {
			return &NoRequestsError{RPS: rate, DurationS: w.DurationS}
		}
		opt := opt
		opt.LatenciesOnly = true // only the SLO figures are read
		opt.Energy = true        // and the energy figures
		res, err := evaluator.EvaluateContext(ctx, cl.Sim(), reqs, opt)
		if err != nil {
			return fmt.Errorf("%s at %g req/s: %w", cl, rate, w.traceSource(err))
		}
		// The nine the rows show, and whatever the SLOs read.
		m := spec.Measure(res, ref, slo.PaperSeries()...)
		row := LoadRow{Cluster: cl.String(), RPS: rate, Aborted: res.Aborted, Verdict: spec.Judge(m),
			AverageKW: math.NaN(), JPerOutputToken: math.NaN()}
		if res.EnergyKnown && !res.Aborted {
			row.AverageKW, row.JPerOutputToken = res.AverageKW(), res.JPerOutputToken()
		}
		if len(scaled) > 0 {
			values := slo.RequestValuesOf(res)
			row.Attainment = make([]float64, len(scaled))
			for k, g := range scaled {
				row.Attainment[k] = math.NaN()
				if gv, err := g.Judge(values); err == nil && gv.Requests > 0 && !res.Aborted {
					row.Attainment[k] = gv.Attained
				}
			}
		}
		for k, t := range nine {
			row.Seconds[k], row.Slowdowns[k] = m.Percentile(t.Metric, slo.Seconds, t.Percentile), m.Percentile(t.Metric, slo.Slowdown, t.Percentile)
			if res.Aborted || m.None(t.Metric, slo.Seconds) {
				row.Seconds[k], row.Slowdowns[k] = math.NaN(), math.NaN()
			}
		}
		rows[i] = row
		return nil
	})
	if err != nil {
		return nil, err
	}
	return rows, nil
}

// eachRow runs row(ctx, i) for every i of todo, parallel at once, and
// calls progress, when not nil, with the rows finished and their total
// after each (one call at a time). The first error cancels ctx for the
// rest and is returned.
func eachRow(ctx context.Context, todo []int, parallel int, progress func(done, total int), row func(ctx context.Context, i int) error) error {
	var mu sync.Mutex
	finished := 0
	g, ctx := errgroup.WithContext(ctx)
	g.SetLimit(max(parallel, 1))
	for _, i := range todo {
		g.Go(func() error {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			if err := row(ctx, i); err != nil {
				return err
			}
			if progress != nil {
				mu.Lock()
				finished++
				progress(finished, len(todo))
				mu.Unlock()
			}
			return nil
		})
	}
	return g.Wait()
}

// VerifyLoad checks the rows of RunLoad (clusters at rates on workload w,
// cluster by cluster, rate by rate) that met every SLO over w's duration
// again, as optimize checks its optima (Problem.VerifyS): each cluster at
// its rate on w's traffic continued to verifyS seconds (w's seed, so w's
// trace is its first part), to its end or until its failure is certain
// (only the verdict is read). Each such row's Verified holds its check; a
// row that failed on its own is not checked. Nothing runs when verifyS is
// not beyond w's duration. progress, when not nil, is told of each check
// finished and their total.
func VerifyLoad(ctx context.Context, clusters []resolve.Cluster, rates []float64, w *Workload, opt evaluator.Options,
	spec slo.Spec, ref slo.Reference, parallel int, verifyS float64, rows []LoadRow, progress func(done, total int)) error {
	if !(verifyS > w.DurationS) {
		return nil
	}
	if len(rows) != len(clusters)*len(rates) {
		return fmt.Errorf("search: %d rows for %d clusters at %d rates", len(rows), len(clusters), len(rates))
	}
	long := w.with(w.Seed, verifyS)
	stopper := spec.Stopper(ref)
	var todo []int
	for i, r := range rows {
		if r.Verdict.Pass && !r.Aborted {
			todo = append(todo, i)
		}
	}
	return eachRow(ctx, todo, parallel, progress, func(ctx context.Context, i int) error {
		cl, rate := clusters[i/len(rates)], rates[i%len(rates)]
		if err := verifyRequests(verifyS, rate); err != nil {
			return err
		}
		v, _, err := checkRun(ctx, cl, rate, long, opt, spec, ref, stopper)
		if err != nil {
			return runError(err, "%s at %g req/s over %gs", cl, rate, verifyS)
		}
		rows[i].Verified = v // (each goroutine its own row)
		return nil
	})
}

// runError is checkRun's error prefixed with where the run was (format
// and a); a *WorkloadError, the rate's own, is returned as it is.
func runError(err error, format string, a ...any) error {
	var we *WorkloadError
	if errors.As(err, &we) {
		return err
	}
	return fmt.Errorf(format+": %w", append(a, err)...)
}

// checkRun simulates cl at rate on wl's traffic, to its end or, with a
// stopper (not in compat mode), until its failure is certain, and returns
// its SLO check as a Verification of wl's length (only the verdict is
// read) and the run's result. A workload that cannot give its requests is
// a *WorkloadError; the simulator's error comes back with the trace's
// source named.
func checkRun(ctx context.Context, cl resolve.Cluster, rate float64, wl *Workload, opt evaluator.Options,
	spec slo.Spec, ref slo.Reference, stopper *slo.Stopper) (*Verification, *evaluator.Result, error) {
	reqs, err := wl.shared(rate)
	if err != nil {
		return nil, nil, &WorkloadError{RPS: rate, Err: err}
	}
	opt.LatenciesOnly = true
	if stopper != nil && !opt.Compat {
		opt.Stop = stopper.Stop(reqs)
	}
	res, err := evaluate(ctx, cl.Sim(), reqs, opt)
	if err != nil {
		return nil, nil, wl.traceSource(err)
	}
	v := &Verification{DurationS: wl.DurationS, Requests: len(reqs)}
	if res.Stopped {
		v.Note, v.StopLimit, v.StopS = res.StopReason, res.StopLimit, res.StopS
		return v, res, nil
	}
	chk := spec.Check(res, ref)
	v.Pass, v.Verdict = chk.Pass, &chk
	if !chk.Drained {
		v.Note = chk.DrainNote
	}
	return v, res, nil
}
