package search

import (
	"context"
	"math"
	"slices"
	"testing"

	"splitplan/evaluator"
	"splitplan/evaluator/perf/errmodel"
	"splitplan/resolve"
	"splitplan/slo"
)

// TestScenarioLoadAgreesWithRobust: a cluster judged in a robust search's
// scenarios (the same seeds, error draws and check over the longer run)
// passes every scenario whose optimum it is, a plan of the price of
// certainty at least the scenarios its level needs, and each design's
// robust plan and the nominal best exactly the scenarios the search says
// they pass (RobustDesign.Passed, NominalBestPassed).
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
			wants = append(wants, want{d.Design, d.Prompt, d.Token, nil, rr.Needed, d.Passed})
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
	failedSome, spread := false, false
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
			t.Errorf("%s %d/%d, a nominal best or robust plan, passes %d scenarios here, the robust search counted %d", w.design, w.prompt, w.token, c.Passed, w.exactly)
		}
		if c.Passed < w.atLeast {
			t.Errorf("%s %d/%d passes %d scenarios here, the robust search counted %d", w.design, w.prompt, w.token, c.Passed, w.atLeast)
		}
		// The draw across the scenarios: in order, no less than every
		// machine idle, no more than every machine at its board power.
		cl := clusters[i]
		idle := (float64(cl.Prompt*cl.PromptType.InstancesPerMachine())*cl.PromptPower.IdleW() +
			float64(cl.Token*cl.TokenType.InstancesPerMachine())*cl.TokenPower.IdleW()) / 1000
		if c.KWKnown != c.Of || !(idle <= c.KW[0] && c.KW[0] <= c.KW[1] && c.KW[1] <= c.KW[2] && c.KW[2] <= cl.PowerKW()) {
			t.Errorf("%s %d/%d: draw P10/P50/P90 %v kW (%d of %d known), idle %.1f kW, provisioned %.1f kW", w.design, w.prompt, w.token, c.KW, c.KWKnown, c.Of, idle, cl.PowerKW())
		}
		spread = spread || c.KW[2] > c.KW[0]
	}
	if !spread {
		t.Error("no cluster's draw moved across the scenarios: the case tests little")
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
		passed, failed, drawless := 0, 0, 0
		for _, r := range rows {
			if got := r.Scenarios.Passed == 1; got != r.Pass() {
				t.Errorf("verify %gs, %s at %g: scenario passed %v, the row %v", verifyS, r.Cluster, r.RPS, got, r.Pass())
			}
			// The one scenario's run is the row's own: its draw is the
			// row's, to the bit, and unknown where the row aborted.
			sc := r.Scenarios
			if math.IsNaN(r.AverageKW) {
				drawless++
				if sc.KWKnown != 0 || !math.IsNaN(sc.KW[1]) {
					t.Errorf("%s at %g: no draw of its own, scenario draw %v (%d known)", r.Cluster, r.RPS, sc.KW, sc.KWKnown)
				}
			} else if sc.KWKnown != 1 || sc.KW != [3]float64{r.AverageKW, r.AverageKW, r.AverageKW} {
				t.Errorf("%s at %g: draw %.6g kW, scenario draw %v (%d known)", r.Cluster, r.RPS, r.AverageKW, sc.KW, sc.KWKnown)
			}
			if r.Pass() {
				passed++
			} else {
				failed++
			}
		}
		if passed == 0 || failed == 0 || drawless == 0 || drawless == len(rows) {
			t.Errorf("verify %gs: %d rows pass, %d fail, %d without a draw: the case tests little", verifyS, passed, failed, drawless)
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
