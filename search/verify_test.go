package search

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"splitplan/evaluator"
	"splitplan/evaluator/perf/errmodel"
	"splitplan/slo"
	"splitplan/traces"
)

// failLongBelow makes the verification's longer runs of clusters of at
// most limit[design] machines fail, by serving their requests at four
// times their rate (as a cluster that tips over within the hour would),
// and leaves every other simulation as it is. short is the number of
// requests of the search's own trace: a run of more is a verification.
// It returns what restores the simulator.
func failLongBelow(short int, limit map[string]int) (restore func()) {
	evaluate = func(ctx context.Context, cl evaluator.Cluster, reqs []traces.Request, opt evaluator.Options) (*evaluator.Result, error) {
		if m, ok := limit[cl.Name]; ok && len(reqs) > short && cl.Prompt+cl.Token <= m {
			fast := make([]traces.Request, len(reqs))
			for i, r := range reqs {
				r.Arrival /= 4
				fast[i] = r
			}
			reqs = fast
		}
		return evaluator.EvaluateContext(ctx, cl, reqs, opt)
	}
	return func() { evaluate = evaluator.EvaluateContext }
}

// verifyCase is a small cost search whose optima the verification moves:
// every cluster with no more machines than a design's unverified optimum
// fails the longer run. It returns the problem (VerifyS set) and the
// unverified optima's machine counts.
func verifyCase(t *testing.T, designs ...string) (func() *Problem, map[string]int) {
	t.Helper()
	mk := func() *Problem { return problem(t, GoalCost, "coding", 6, 8, 20, designs...) }
	limit := unverifiedOptima(t, mk())
	return func() *Problem {
		p := mk()
		p.VerifyS = 60
		return p
	}, limit
}

// unverifiedOptima runs p (no verification) and returns each design's
// optimum's machines, failing when a design finds none.
func unverifiedOptima(t *testing.T, p *Problem) map[string]int {
	t.Helper()
	plain, err := Run(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	limit := map[string]int{}
	for _, d := range plain.Designs {
		if !d.Found {
			t.Fatalf("%s: nothing found without the verification: the case tests nothing", d.Design)
		}
		limit[d.Design] = d.Best.Machines()
	}
	return limit
}

// TestVerifyGoesPastFailures: an optimum that fails the longer run is no
// longer the answer; the search goes on to the best point that passes
// both, which is what an exhaustive search under the same two checks
// finds; every point the verification failed is reported, infeasible,
// with its failing check.
func TestVerifyGoesPastFailures(t *testing.T) {
	mk, limit := verifyCase(t, "Splitwise-HH", "Baseline-H100")
	short := int(6 * 20 * 1.2) // (more than the 20 s trace's requests, fewer than the 60 s one's)
	defer failLongBelow(short, limit)()
	res, err := Run(context.Background(), mk())
	if err != nil {
		t.Fatal(err)
	}
	p := mk()
	p.Exhaustive = true
	ex, err := Run(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	if a, b := summary(res), summary(ex); a != b {
		t.Errorf("verified optima differ: pruned %s, exhaustive %s", a, b)
	}
	if res.VerifyS != 60 {
		t.Errorf("Result.VerifyS %v, want 60", res.VerifyS)
	}
	for _, d := range res.Designs {
		if !d.Found {
			t.Errorf("%s: nothing found with the verification", d.Design)
			continue
		}
		if d.Best.Machines() <= limit[d.Design] {
			t.Errorf("%s: optimum %d machines, where every cluster of at most %d fails the longer run", d.Design, d.Best.Machines(), limit[d.Design])
		}
		if v := d.Best.Verified; v == nil || !v.Pass || v.DurationS != 60 {
			t.Errorf("%s: optimum's verification %+v, want one over 60 s that passed", d.Design, v)
		}
		if len(d.Unverified) == 0 || d.Verifications < len(d.Unverified)+1 {
			t.Errorf("%s: %d points failed the verification in %d simulations; want at least one, and one more simulation", d.Design, len(d.Unverified), d.Verifications)
		}
		for _, u := range d.Unverified {
			if u.Feasible || u.Verified == nil || u.Verified.Pass || u.Verdict == nil || !u.Verdict.Pass {
				t.Errorf("%s %d/%d: reported unverified, but feasible %v, verification %+v, its own trace passing %v",
					d.Design, u.Prompt, u.Token, u.Feasible, u.Verified, u.Verdict != nil && u.Verdict.Pass)
			}
			if u.Machines() > limit[d.Design] {
				t.Errorf("%s %d/%d failed the verification, which only clusters of at most %d machines fail", d.Design, u.Prompt, u.Token, limit[d.Design])
			}
		}
	}
	// The points list says so too.
	n := 0
	for _, pt := range res.Points {
		if pt.Verified != nil && !pt.Verified.Pass {
			n++
			if pt.Feasible {
				t.Errorf("%s: failed the verification but listed feasible", pt.Label())
			}
		}
	}
	if n == 0 {
		t.Error("no point of Result.Points failed the verification")
	}
}

// TestVerifyStreamedExhaustive: an exhaustive search that keeps only its
// best points (DropPoints) walks its kept cheapest points through the
// verification to the same optima.
func TestVerifyStreamedExhaustive(t *testing.T) {
	mk, limit := verifyCase(t, "Splitwise-HH", "Baseline-H100")
	defer failLongBelow(int(6*20*1.2), limit)()
	p := mk()
	p.Exhaustive = true
	kept, err := Run(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	p = mk()
	p.Exhaustive, p.DropPoints = true, true
	streamed, err := Run(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	if a, b := summary(kept), summary(streamed); a != b {
		t.Errorf("kept %s, streamed %s", a, b)
	}
}

// TestVerifyWinnerOnly: verifying only what decides the winner gives the
// winner that verifying every optimum gives, with fewer verifications.
func TestVerifyWinnerOnly(t *testing.T) {
	mk, limit := verifyCase(t, "Splitwise-HH", "Baseline-H100", "Splitwise-HA")
	defer failLongBelow(int(6*20*1.2), limit)()
	all, err := Run(context.Background(), mk())
	if err != nil {
		t.Fatal(err)
	}
	p := mk()
	p.VerifyWinnerOnly = true
	one, err := Run(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	if all.Winner < 0 || one.Winner < 0 {
		t.Fatalf("winners %d and %d", all.Winner, one.Winner)
	}
	wa, wo := all.Designs[all.Winner], one.Designs[one.Winner]
	if wa.Design != wo.Design || wa.Best.Prompt != wo.Best.Prompt || wa.Best.Token != wo.Best.Token {
		t.Errorf("winner %s %d/%d verifying all, %s %d/%d verifying the winner", wa.Design, wa.Best.Prompt, wa.Best.Token, wo.Design, wo.Best.Prompt, wo.Best.Token)
	}
	if v := wo.Best.Verified; v == nil || !v.Pass {
		t.Errorf("the winner's optimum is not verified: %+v", v)
	}
	count := func(r *Result) (n int) {
		for _, d := range r.Designs {
			n += d.Verifications
		}
		return n
	}
	if count(one) >= count(all) {
		t.Errorf("%d verifications for the winner alone, %d for all", count(one), count(all))
	}
}

// TestVerifyNotLongerChangesNothing: no verification, or one no longer
// than the search's own trace, leaves the search as it was.
func TestVerifyNotLongerChangesNothing(t *testing.T) {
	t.Parallel()
	mk := func() *Problem { return problem(t, GoalCost, "coding", 6, 8, 20, "Splitwise-HH", "Baseline-H100") }
	plain, err := Run(context.Background(), mk())
	if err != nil {
		t.Fatal(err)
	}
	p := mk()
	p.VerifyS = 20
	same, err := Run(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	if a, b := fmt.Sprint(summary(plain), len(plain.Points)), fmt.Sprint(summary(same), len(same.Points)); a != b || same.VerifyS != 0 {
		t.Errorf("without: %s; verifying over the trace's own 20 s: %s (VerifyS %v)", a, b, same.VerifyS)
	}
	for _, d := range same.Designs {
		if d.Best.Verified != nil || d.Verifications != 0 {
			t.Errorf("%s verified over its own trace", d.Design)
		}
	}
	p = mk()
	p.VerifyS = -1
	if _, err := Run(context.Background(), p); err == nil {
		t.Error("a negative verification length was accepted")
	}
}

// TestVerifyCatchesATippingCluster is the case that asked for the
// verification: Splitwise-HH with 23 prompt and 8 token machines meets
// every SLO over the default 120 s of 70 req/s of coding traffic (seed 0),
// the cheapest such cluster, but over the hour its token pool tips into
// borrowing prompt machines for good and P99 TTFT fails.
func TestVerifyCatchesATippingCluster(t *testing.T) {
	t.Parallel()
	p := problem(t, GoalCost, "coding", 70, 160, 120, "Splitwise-HH")
	p.VerifyS = 3600
	s, err := newSearch(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	spec := p.Designs[0]
	d := &designSearch{s: s, spec: spec, design: spec.Design, memo: map[pointKey]*Point{}}
	pt, err := d.eval(23, 8, 70)
	if err != nil {
		t.Fatal(err)
	}
	if !pt.Feasible {
		t.Fatalf("23P/8T fails over 120 s already (%s): the case has moved", pt.Note)
	}
	held, err := d.verify(pt)
	if err != nil {
		t.Fatal(err)
	}
	if held || pt.Feasible || pt.Verified == nil || pt.Verified.Requests < 200_000 {
		t.Errorf("23P/8T over the hour: held %v, feasible %v, verification %+v", held, pt.Feasible, pt.Verified)
	}
}

// TestVerifyTrafficContinuesTheSearch: the verification's traffic is the
// search's own continued: the search's requests are its first ones, the
// same at every rate, for Poisson, bursty and profiled arrivals and for
// independently drawn sizes.
func TestVerifyTrafficContinuesTheSearch(t *testing.T) {
	t.Parallel()
	sizes, err := traces.Builtin("conversation")
	if err != nil {
		t.Fatal(err)
	}
	prof, err := traces.Diurnal(30, 10, 200, 50)
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range []*Workload{
		{Sizes: sizes, DurationS: 30, Seed: 3},
		{Sizes: sizes, DurationS: 30, Seed: 3, Arrivals: traces.Arrivals{BurstCV: 2.5}},
		{Sizes: sizes, DurationS: 30, Seed: 3, Arrivals: traces.Arrivals{Profile: prof}},
		{Sizes: sizes, DurationS: 30, Seed: 3, Independent: true},
	} {
		p := &Problem{VerifyS: 400}
		long := p.verifyWorkloads([]*Workload{w})
		if len(long) != 1 || long[0].DurationS != 400 {
			t.Fatalf("verification workloads %+v", long)
		}
		for _, rate := range []float64{5, 20} {
			a, err := w.At(rate)
			if err != nil {
				t.Fatal(err)
			}
			b, err := long[0].At(rate)
			if err != nil {
				t.Fatal(err)
			}
			if len(b) < 5*len(a) {
				t.Fatalf("%+v at %g: %d requests over 400 s against %d over 30 s", w.Arrivals, rate, len(b), len(a))
			}
			for i := range a {
				if a[i] != b[i] {
					t.Fatalf("%+v at %g: request %d is %+v in the search, %+v in the verification", w.Arrivals, rate, i, a[i], b[i])
				}
			}
		}
	}
}

// TestVerifyRobustScenarios: with a verification, a scenario's optimum
// and a robust plan's scenarios are judged over the scenario's traffic
// continued to the verification's length too, as the nominal optima are:
// where every cluster of at most a design's unverified nominal optimum
// fails the longer run, no scenario optimum and no plan of the price of
// certainty is one of them, and the pruned robust search equals the
// exhaustive one under the same checks.
func TestVerifyRobustScenarios(t *testing.T) {
	rb := Robust{Confidence: 0.75, Scenarios: 6, Errors: errmodel.Builtin(), Seed: 5, Confidences: []float64{0.5, 1}}
	limit := unverifiedOptima(t, robustProblem(t))
	unverified, err := RunRobust(context.Background(), robustProblem(t), rb)
	if err != nil {
		t.Fatal(err)
	}
	mk := func() *Problem {
		p := robustProblem(t)
		p.VerifyS = 60
		return p
	}
	short := int(6 * 30 * 1.3) // (more than the 30 s trace's requests, fewer than the 60 s one's)
	defer failLongBelow(short, limit)()
	fast, err := RunRobust(context.Background(), mk(), rb)
	if err != nil {
		t.Fatal(err)
	}
	moved := false
	for i, d := range fast.Designs {
		for s, o := range d.Scenarios {
			if o.Found && o.Prompt+o.Token <= limit[d.Design] {
				t.Errorf("%s, scenario %d: optimum %d/%d, where every cluster of at most %d machines fails the longer run", d.Design, s+1, o.Prompt, o.Token, limit[d.Design])
			}
			if u := unverified.Designs[i].Scenarios[s]; u.Found && u.Prompt+u.Token <= limit[d.Design] {
				moved = true
			}
		}
		for _, c := range d.Certainty {
			if c.Found && c.Prompt+c.Token <= limit[d.Design] {
				t.Errorf("%s at %v: plan %d/%d, where every cluster of at most %d machines fails the longer run", d.Design, c.Confidence, c.Prompt, c.Token, limit[d.Design])
			}
		}
	}
	if !moved {
		t.Fatal("no scenario optimum of the search without the verification fails the longer run: the case tests nothing")
	}
	pe := mk()
	pe.Exhaustive, pe.StopFailing = true, false
	slow, err := RunRobust(context.Background(), pe, rb)
	if err != nil {
		t.Fatal(err)
	}
	checkRobustEqual(t, fast, slow)
}

// TestVerifyLoad: the rows that met every SLO are checked over the
// longer run, and those of the cluster that fails it no longer pass; a
// row that failed on its own is not checked, and no check runs when the
// longer run is not longer.
func TestVerifyLoad(t *testing.T) {
	clusters, w, ref := loadTestSetup(t) // Splitwise-HH 2P/1T, Baseline-H100 ×3, 20 s
	rates := []float64{1, 2, 40}
	opt, spec := evaluator.Options{AbortDelayS: 30}, slo.Default()
	run := func(verifyS float64) []LoadRow {
		rows, err := RunLoad(context.Background(), clusters, rates, w, opt, spec, ref, 2)
		if err != nil {
			t.Fatal(err)
		}
		if err := VerifyLoad(context.Background(), clusters, rates, w, opt, spec, ref, 2, verifyS, rows, nil); err != nil {
			t.Fatal(err)
		}
		return rows
	}
	if rows := run(20); slices.ContainsFunc(rows, func(r LoadRow) bool { return r.Verified != nil }) {
		t.Error("a check no longer than the run ran")
	}
	hh := clusters[0].String()
	short := int(2 * 20 * 1.5) // (more than the 20 s trace's requests at 2 req/s, fewer than the 60 s one's)
	defer failLongBelow(short, map[string]int{clusters[0].Sim().Name: 3})()
	rows := run(60)
	passed, failedCheck := 0, 0
	for _, r := range rows {
		switch {
		case !r.Verdict.Pass && r.Verified != nil:
			t.Errorf("%s at %g: failed on its own, yet checked", r.Cluster, r.RPS)
		case r.Verdict.Pass && r.Verified == nil:
			t.Errorf("%s at %g: passed, not checked", r.Cluster, r.RPS)
		case r.Verdict.Pass && r.Cluster == hh && r.RPS > 1 && r.Pass():
			t.Errorf("%s at %g: passes, though its long runs fail", r.Cluster, r.RPS)
		case r.Verdict.Pass && !r.Pass():
			failedCheck++
		}
		if r.Verdict.Pass {
			passed++
		}
	}
	if passed == 0 || failedCheck == 0 {
		t.Fatalf("%d rows passed, %d failed the check: the case tests nothing", passed, failedCheck)
	}
}
