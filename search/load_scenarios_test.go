package search

import (
	"context"
	"slices"
	"testing"

	"splitplan/evaluator"
	"splitplan/evaluator/perf/errmodel"
	"splitplan/resolve"
	"splitplan/slo"
)

// TestScenarioLoadAgreesWithRobust: a cluster judged in a robust search's
// scenarios (the same seeds, error draws and check over the longer run)
// passes every scenario whose optimum it is, a robust plan passes at
// least the scenarios the search counted for it, and the nominal best
// exactly the scenarios the search says it passes (NominalBestPassed).
func TestScenarioLoadAgreesWithRobust(t *testing.T) {
	t.Parallel()
	p := robustProblem(t)
	p.VerifyS = 60
	rb := Robust{Confidence: 0.75, Scenarios: 6, Errors: errmodel.Builtin(), Seed: 5, Confidences: []float64{0.5, 1}}
	rr, err := RunRobust(context.Background(), p, rb)
	if err != nil {
		t.Fatal(err)
	}
	type want struct {
		design        string
		prompt, token int
		passes        []int // scenarios it must pass
		atLeast       int
		exactly       int // −1: not known
	}
	var wants []want
	if w := rr.Nominal.Winner; w < 0 || rr.NominalBestPassed() < 0 {
		t.Fatal("no nominal best")
	} else {
		b := rr.Nominal.Designs[w]
		wants = append(wants, want{b.Design, b.Best.Prompt, b.Best.Token, nil, 0, rr.NominalBestPassed()})
	}
	for _, d := range rr.Designs {
		for s, o := range d.Scenarios {
			if o.Found {
				wants = append(wants, want{d.Design, o.Prompt, o.Token, []int{s}, 1, -1})
			}
		}
		if d.Found {
			wants = append(wants, want{d.Design, d.Prompt, d.Token, nil, d.Passed, -1})
		}
		for _, c := range d.Certainty {
			if c.Found {
				wants = append(wants, want{d.Design, c.Prompt, c.Token, nil, c.Needed, -1})
			}
		}
	}
	if len(wants) < 10 {
		t.Fatalf("only %d clusters to judge: the case tests little", len(wants))
	}
	clusters := make([]resolve.Cluster, len(wants))
	var ref slo.Reference
	for i, w := range wants {
		clusters[i], ref = benchCluster(t, p, w.design, w.prompt, w.token)
	}
	rates := []float64{p.RateRPS}
	rows, err := RunLoad(context.Background(), clusters, rates, p.Workload, p.Options, p.SLO, ref, 2)
	if err != nil {
		t.Fatal(err)
	}
	sims, err := ScenarioLoad(context.Background(), clusters, rates, p.Workload, p.Options, p.SLO, ref, 2, p.VerifyS, rb, rows, nil)
	if err != nil {
		t.Fatal(err)
	}
	if sims < len(rows)*rb.Scenarios {
		t.Errorf("%d simulations for %d rows in %d scenarios", sims, len(rows), rb.Scenarios)
	}
	failedSome := false
	for i, w := range wants {
		c := rows[i].Scenarios
		if c == nil || c.Of != rb.Scenarios || c.Passed+len(c.Failed) != c.Of {
			t.Fatalf("%s %d/%d: scenarios %+v", w.design, w.prompt, w.token, c)
		}
		failedSome = failedSome || len(c.Failed) > 0
		for _, s := range w.passes {
			if slices.Contains(c.Failed, s) {
				t.Errorf("%s %d/%d, the optimum of scenario %d, fails it here (failed %v)", w.design, w.prompt, w.token, s, c.Failed)
			}
		}
		if w.exactly >= 0 && c.Passed != w.exactly {
			t.Errorf("%s %d/%d, the nominal best, passes %d scenarios here, the robust search counted %d", w.design, w.prompt, w.token, c.Passed, w.exactly)
		}
		if c.Passed < w.atLeast {
			t.Errorf("%s %d/%d passes %d scenarios here, the robust search counted %d", w.design, w.prompt, w.token, c.Passed, w.atLeast)
		}
	}
	if !failedSome {
		t.Error("every cluster passed every scenario: the case tests little")
	}
}

// TestScenarioLoadOneScenarioNoError: with no model error, one scenario is
// the row's own run (scenario 0 keeps the workload's seed): it passes
// exactly where the row passes, over its run and over the longer one.
func TestScenarioLoadOneScenarioNoError(t *testing.T) {
	t.Parallel()
	clusters, w, ref := loadTestSetup(t) // Splitwise-HH 2P/1T, Baseline-H100 ×3, 20 s
	rates := []float64{1, 2, 3, 40}
	opt, spec := evaluator.Options{AbortDelayS: 30}, slo.Default()
	for _, verifyS := range []float64{0, 60} {
		rows, err := RunLoad(context.Background(), clusters, rates, w, opt, spec, ref, 2)
		if err != nil {
			t.Fatal(err)
		}
		if err := VerifyLoad(context.Background(), clusters, rates, w, opt, spec, ref, 2, verifyS, rows, nil); err != nil {
			t.Fatal(err)
		}
		if _, err := ScenarioLoad(context.Background(), clusters, rates, w, opt, spec, ref, 2, verifyS, Robust{Scenarios: 1, Seed: 9}, rows, nil); err != nil {
			t.Fatal(err)
		}
		passed, failed := 0, 0
		for _, r := range rows {
			if got := r.Scenarios.Passed == 1; got != r.Pass() {
				t.Errorf("verify %gs, %s at %g: scenario passed %v, the row %v", verifyS, r.Cluster, r.RPS, got, r.Pass())
			}
			if r.Pass() {
				passed++
			} else {
				failed++
			}
		}
		if passed == 0 || failed == 0 {
			t.Errorf("verify %gs: %d rows pass, %d fail: the case tests little", verifyS, passed, failed)
		}
	}
}

// TestScenarioLoadRefuses: compat mode, a bad count and rows that do not
// match are errors.
func TestScenarioLoadRefuses(t *testing.T) {
	clusters, w, ref := loadTestSetup(t)
	rates := []float64{1}
	rows := make([]LoadRow, len(clusters))
	opt := evaluator.Options{AbortDelayS: 30}
	for _, tc := range []struct {
		name string
		r    Robust
		rows []LoadRow
		mod  func(o *evaluator.Options)
	}{
		{"too many", Robust{Scenarios: MaxScenarios + 1}, rows, nil},
		{"negative", Robust{Scenarios: -1}, rows, nil},
		{"rows", Robust{Scenarios: 2}, rows[:1], nil},
		{"compat", Robust{Scenarios: 2}, rows, func(o *evaluator.Options) { o.Compat = true }},
	} {
		o := opt
		if tc.mod != nil {
			tc.mod(&o)
		}
		if _, err := ScenarioLoad(context.Background(), clusters, rates, w, o, slo.Default(), ref, 1, 0, tc.r, tc.rows, nil); err == nil {
			t.Errorf("%s: no error", tc.name)
		}
	}
}
