package search

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"

	"splitplan/costpower"
	"splitplan/evaluator"
	"splitplan/evaluator/perf"
	"splitplan/slo"
	"splitplan/traces"
)

var errInjected = errors.New("injected simulation failure")

// TestSimulationErrorsReturned fails the k-th simulation of a search, for
// every k the search reaches: Run must return that error, whichever stage
// (frontier walk, rate bisection, branch and bound, confirmation) ran it.
func TestSimulationErrorsReturned(t *testing.T) {
	for _, tc := range []struct {
		name string
		p    func() *Problem
	}{
		{"throughput", func() *Problem {
			p := problem(t, GoalThroughput, "coding", 0, 6, 20, "Splitwise-HH")
			p.PowerBudgetKW = 80
			return p
		}},
		{"batch", func() *Problem {
			p := problem(t, GoalBatch, "coding", 0, 6, 20, "Splitwise-HA")
			p.CostBudgetUSDPerH = 300
			return p
		}},
		{"cost", func() *Problem { return problem(t, GoalCost, "coding", 6, 8, 20, "Splitwise-HH") }},
		{"cost baseline", func() *Problem { return problem(t, GoalCost, "coding", 6, 8, 20, "Baseline-H100") }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var calls, failAt atomic.Int64
			evaluate = func(ctx context.Context, cl evaluator.Cluster, reqs []traces.Request, opt evaluator.Options) (*evaluator.Result, error) {
				if calls.Add(1) == failAt.Load() {
					return nil, errInjected
				}
				return evaluator.EvaluateContext(ctx, cl, reqs, opt)
			}
			defer func() { evaluate = evaluator.EvaluateContext }()
			p := tc.p()
			p.Parallel = 1
			if _, err := Run(context.Background(), p); err != nil {
				t.Fatal(err)
			}
			total := calls.Load()
			t.Logf("%d simulations", total)
			if total < 3 {
				t.Fatalf("only %d simulations: the problem is too small to test anything", total)
			}
			for k := int64(1); k <= total; k++ {
				calls.Store(0)
				failAt.Store(k)
				res, err := Run(context.Background(), tc.p())
				if !errors.Is(err, errInjected) {
					t.Errorf("simulation %d of %d failed, Run returned %v (result %v)", k, total, err, res != nil)
				}
			}
		})
	}
}

func TestRunLoad(t *testing.T) {
	t.Parallel()
	clusters, w, ref := loadTestSetup(t)
	rates := []float64{1, 2, 40}
	rows, err := RunLoad(context.Background(), clusters, rates, w, evaluator.Options{AbortDelayS: 30}, slo.Default(), ref, 3)
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 6 {
		t.Fatalf("%d rows, want 6", len(rows))
	}
	for i, r := range rows {
		if r.Cluster != clusters[i/3].String() || r.RPS != rates[i%3] {
			t.Errorf("row %d is %s at %g", i, r.Cluster, r.RPS)
		}
		if !r.Aborted && !(r.Seconds[0] > 0 && r.Slowdowns[0] > 0 && r.Seconds[2] >= r.Seconds[0]) {
			t.Errorf("row %d: seconds %v slowdowns %v", i, r.Seconds, r.Slowdowns)
		}
	}
	// A lone request a machine cannot hold is unservable, reported as such.
	huge := traces.FromRequests("huge", []traces.Request{{PromptTokens: 4 << 20, OutputTokens: 4}})
	_, err = RunLoad(context.Background(), clusters[:1], []float64{1}, &Workload{Sizes: huge, DurationS: 20}, evaluator.Options{}, slo.Default(), ref, 1)
	var ue *evaluator.UnservableError
	if !errors.As(err, &ue) || !strings.HasPrefix(err.Error(), clusters[0].String()+" at 1 req/s: ") {
		t.Errorf("unservable: %v", err)
	}
	// A rate too low for the duration gives no requests.
	_, err = RunLoad(context.Background(), clusters, []float64{0.001}, w, evaluator.Options{}, slo.Default(), ref, 1)
	var nr *NoRequestsError
	if !errors.As(err, &nr) || nr.RPS != 0.001 || nr.DurationS != 20 {
		t.Errorf("no requests: %v", err)
	}
}

func mustPair(t *testing.T, tab *perf.Table) *perf.Pair {
	t.Helper()
	m, err := costpower.Default().Machine("DGX-A100")
	if err != nil {
		t.Fatal(err)
	}
	pair, err := tab.Lookup("bloom-176b", m.PerfHardware, m.TensorParallel)
	if err != nil {
		t.Fatal(err)
	}
	return pair
}

// TestRunLeavesProblem: the defaults Run fills go on its own copy.
func TestRunLeavesProblem(t *testing.T) {
	t.Parallel()
	p := problem(t, GoalCost, "coding", 3, 4, 20, "Baseline-H100")
	p.Parallel, p.Precision, p.Seeds, p.Reference = 0, 0, 0, ""
	if _, err := Run(context.Background(), p); err != nil {
		t.Fatal(err)
	}
	if p.Parallel != 0 || p.Precision != 0 || p.Seeds != 0 || p.Reference != "" {
		t.Errorf("Run changed the problem: parallel %d, precision %v, seeds %d, reference %q", p.Parallel, p.Precision, p.Seeds, p.Reference)
	}
}
