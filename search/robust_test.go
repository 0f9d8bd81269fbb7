package search

import (
	"context"
	"fmt"
	"math"
	"reflect"
	"runtime"
	"slices"
	"splitplan/slo"
	"strings"
	"testing"

	"splitplan/evaluator/perf/errmodel"
)

// robustSummary is the robust answer in words, for comparisons.
func robustSummary(r *RobustResult) string {
	var b strings.Builder
	for _, d := range r.Designs {
		fmt.Fprintf(&b, "%s: ", d.Design)
		switch {
		case d.BoundedOut:
			fmt.Fprintf(&b, "bounded out (%.6g)\n", d.Bound)
			continue
		case d.Found:
			fmt.Fprintf(&b, "%d/%d %.6g passed %d", d.Prompt, d.Token, d.Objective, d.Passed)
		default:
			b.WriteString("none")
		}
		fmt.Fprintf(&b, " spread %v certainty %v scen %v\n", d.Spread, d.Certainty, d.Scenarios)
	}
	fmt.Fprintf(&b, "winner %d wins %v %v none %d\n", r.Winner, r.DesignWins, r.PairWins, r.NoWinner)
	return b.String()
}

// TestRobustZeroErrorOneScenario: with no model error and one scenario
// (the problem's own workload seed), the robust optimum is the nominal
// one for every design, at every confidence.
func TestRobustZeroErrorOneScenario(t *testing.T) {
	t.Parallel()
	p := problem(t, GoalCost, "coding", 6, 8, 30, "Splitwise-HH", "Splitwise-HA", "Baseline-H100")
	p.StopFailing = true
	r, err := RunRobust(context.Background(), p, Robust{Confidence: 0.9, Scenarios: 1})
	if err != nil {
		t.Fatal(err)
	}
	for i, d := range r.Designs {
		nom := r.Nominal.Designs[i]
		if d.Found != nom.Found || d.Prompt != nom.Best.Prompt || d.Token != nom.Best.Token || d.Objective != nom.Best.CostUSDPerH {
			t.Errorf("%s: robust %d/%d $%v (found %v), nominal %d/%d $%v (found %v)", d.Design, d.Prompt, d.Token, d.Objective, d.Found,
				nom.Best.Prompt, nom.Best.Token, nom.Best.CostUSDPerH, nom.Found)
		}
		for _, c := range d.Certainty {
			if c.Found != d.Found || c.Prompt != d.Prompt || c.Token != d.Token {
				t.Errorf("%s at %v: %+v, want the nominal optimum", d.Design, c.Confidence, c)
			}
		}
	}
	if r.Winner != r.Nominal.Winner {
		t.Errorf("robust winner %d, nominal %d", r.Winner, r.Nominal.Winner)
	}
	if r.NominalBestPassed() != 1 {
		t.Errorf("the nominal best passes %d of the one scenario, its own run", r.NominalBestPassed())
	}
	t.Log(robustSummary(r))
}

// robustProblem is a small space with model error: three designs, up to
// six machines a pool, 30 s simulations.
func robustProblem(t testing.TB) *Problem {
	p := problem(t, GoalCost, "coding", 6, 6, 30, "Splitwise-HH", "Splitwise-AA", "Baseline-H100")
	p.StopFailing = true
	return p
}

// TestRobustMonotoneInConfidence: the robust objective never decreases
// with the confidence, and the robust plan passes at least the scenarios
// it needs.
func TestRobustMonotoneInConfidence(t *testing.T) {
	t.Parallel()
	r, err := RunRobust(context.Background(), robustProblem(t), Robust{Confidence: 0.9, Scenarios: 12, Errors: errmodel.Builtin(), Seed: 3,
		Confidences: []float64{0.25, 0.5, 0.75, 0.9, 1}})
	if err != nil {
		t.Fatal(err)
	}
	t.Log(robustSummary(r))
	bounded := 0
	for _, d := range r.Designs {
		if d.BoundedOut {
			continue
		}
		prev, found := 0.0, true
		for _, c := range d.Certainty {
			if !c.Found {
				found = false
				continue
			}
			if !found {
				t.Errorf("%s: a plan at %v after none at a lower confidence", d.Design, c.Confidence)
			}
			if c.Objective < prev {
				t.Errorf("%s: objective %v at %v below %v at a lower confidence", d.Design, c.Objective, c.Confidence, prev)
			}
			prev = c.Objective
		}
		if d.Found && d.Passed < r.Needed {
			t.Errorf("%s: robust plan passed %d scenarios, needs %d", d.Design, d.Passed, r.Needed)
		}
		// A plan passes a scenario only at or above that scenario's
		// optimum, so a plan passing k scenarios costs at least the k-th
		// least scenario optimum; and the spread's quantiles rise.
		var opt []float64
		for _, o := range d.Scenarios {
			if o.Found {
				opt = append(opt, o.Objective)
			}
		}
		slices.Sort(opt)
		for _, c := range d.Certainty {
			if !c.Found {
				continue
			}
			if c.Needed > len(opt) {
				t.Errorf("%s: a plan at %v needs %d scenarios, only %d have an optimum", d.Design, c.Confidence, c.Needed, len(opt))
				continue
			}
			bounded++
			if c.Objective < opt[c.Needed-1]-1e-9 {
				t.Errorf("%s: plan at %v costs %v, below the %d-th least scenario optimum %v", d.Design, c.Confidence, c.Objective, c.Needed, opt[c.Needed-1])
			}
		}
		for j := 1; j < 3; j++ {
			if d.Spread.Objective[j] < d.Spread.Objective[j-1] {
				t.Errorf("%s: spread %v not rising", d.Design, d.Spread.Objective)
			}
		}
	}
	if bounded == 0 {
		t.Error("no plan checked against the scenario optima")
	}
}

// TestRobustPrunedEqualsExhaustive: the robust search's shortcuts (the
// scenario optima's bound, severity order, early stop, memoized
// verdicts) find the plans that simulating every point in every scenario
// finds. The second space holds a point that passes a scenario that a
// point with more machines fails: Splitwise-HA's plan at confidence 0.5,
// which the scan put at 3/4 while it inferred verdicts from neighbours
// (exhaustive: 4/2).
func TestRobustPrunedEqualsExhaustive(t *testing.T) {
	t.Parallel()
	knownCase := func(t testing.TB) *Problem {
		p := problem(t, GoalCost, "coding", 6, 6, 30, "Splitwise-HH", "Splitwise-HA", "Splitwise-HHcap")
		p.StopFailing = true
		return p
	}
	for _, c := range []struct {
		name string
		mk   func(testing.TB) *Problem
		rb   Robust
	}{
		{"small", robustProblem, Robust{Confidence: 0.75, Scenarios: 8, Errors: errmodel.Builtin(), Seed: 5, Confidences: []float64{0.5, 1}}},
		{"not monotone", knownCase, Robust{Confidence: 0.75, Scenarios: 8, Errors: errmodel.Builtin(), Seed: 7}},
	} {
		t.Run(c.name, func(t *testing.T) {
			fast, err := RunRobust(context.Background(), c.mk(t), c.rb)
			if err != nil {
				t.Fatal(err)
			}
			pe := c.mk(t)
			pe.Exhaustive, pe.StopFailing = true, false
			slow, err := RunRobust(context.Background(), pe, c.rb)
			if err != nil {
				t.Fatal(err)
			}
			checkRobustEqual(t, fast, slow)
		})
	}
}

func checkRobustEqual(t *testing.T, fast, slow *RobustResult) {
	t.Helper()
	for i := range fast.Designs {
		f, s := fast.Designs[i], slow.Designs[i]
		if f.BoundedOut {
			if !(s.Found && s.Objective >= fast.Designs[fast.Winner].Objective) && s.Found {
				t.Errorf("%s bounded out, but the exhaustive plan %d/%d costs %v", f.Design, s.Prompt, s.Token, s.Objective)
			}
			continue
		}
		if f.Found != s.Found || f.Prompt != s.Prompt || f.Token != s.Token {
			t.Errorf("%s: pruned %d/%d (found %v), exhaustive %d/%d (found %v)", f.Design, f.Prompt, f.Token, f.Found, s.Prompt, s.Token, s.Found)
		}
		if !reflect.DeepEqual(f.Scenarios, s.Scenarios) {
			t.Errorf("%s: scenario optima differ:\npruned     %v\nexhaustive %v", f.Design, f.Scenarios, s.Scenarios)
		}
		if len(f.Certainty) != len(s.Certainty) {
			t.Errorf("%s: %d levels pruned, %d exhaustive", f.Design, len(f.Certainty), len(s.Certainty))
			continue
		}
		for j := range f.Certainty {
			a, b := f.Certainty[j], s.Certainty[j]
			if a.Found != b.Found || a.Prompt != b.Prompt || a.Token != b.Token {
				t.Errorf("%s at %v: pruned %+v, exhaustive %+v", f.Design, a.Confidence, a, b)
			}
		}
	}
	if fast.Winner != slow.Winner {
		t.Errorf("winner %d pruned, %d exhaustive", fast.Winner, slow.Winner)
	}
	t.Logf("simulations: pruned %d, exhaustive %d", fast.Simulations, slow.Simulations)
}

// TestRobustDeterministicParallel: the same answer at -j 1 and -j 2,
// with and without the verification of every scenario's verdicts.
func TestRobustDeterministicParallel(t *testing.T) {
	t.Parallel()
	for _, verify := range []float64{0, 90} {
		t.Run(fmt.Sprintf("verify %gs", verify), func(t *testing.T) { robustDeterministic(t, verify) })
	}
}

func robustDeterministic(t *testing.T, verifyS float64) {
	rb := Robust{Confidence: 0.9, Scenarios: 10, Errors: errmodel.Builtin(), Seed: 11}
	var got []string
	for _, j := range []int{1, 2, max(runtime.NumCPU(), 3)} {
		p := robustProblem(t)
		p.Parallel, p.VerifyS = j, verifyS
		r, err := RunRobust(context.Background(), p, rb)
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, robustSummary(r))
	}
	for i := 1; i < len(got); i++ {
		if got[i] != got[0] {
			t.Errorf("answers differ with the parallelism:\n%s\nvs\n%s", got[0], got[i])
		}
	}
}

// TestSensitivity: slower iterations, a higher rate or longer outputs
// never make the best plan cheaper, faster ones never dearer; moving the
// KV-transfer bandwidth leaves a space without a transfer bottleneck
// where it was.
func TestSensitivity(t *testing.T) {
	t.Parallel()
	p := problem(t, GoalCost, "coding", 6, 8, 30, "Splitwise-HH", "Baseline-H100")
	p.StopFailing = true
	base, err := Run(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	rows, err := Sensitivity(context.Background(), p, base, []float64{-0.25, 0.25})
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 2*len(SensitivityInputs) {
		t.Fatalf("%d rows, want %d", len(rows), 2*len(SensitivityInputs))
	}
	best := func(r *Result) float64 {
		if r.Winner < 0 {
			return math.Inf(1)
		}
		return r.Designs[r.Winner].Best.CostUSDPerH
	}
	b := best(base)
	for _, r := range rows {
		v := best(r.Result)
		t.Logf("%s %+g: $%v (nominal $%v)", r.Input, r.Change, v, b)
		harder := r.Change > 0
		if r.Input == InputKVBandwidth {
			continue
		}
		if harder && v < b || !harder && v > b {
			t.Errorf("%s %+g%%: best $%v against $%v nominal", r.Input, 100*r.Change, v, b)
		}
	}
}

// TestSensitivityHinted: the searches started from the nominal one's
// frontier starts find the optima that searches bisecting the whole range
// find, with fewer simulations (their starts are not decoration), on
// every design and input; and the answer does not depend on the
// parallelism.
func TestSensitivityHinted(t *testing.T) {
	t.Parallel()
	steps := []float64{-0.25, 0.1}
	// sens is the analysis at parallelism par, its searches started from
	// the nominal search's starts (hinted) or bisecting.
	sens := func(par int, hinted bool) []SensitivityRow {
		p := problem(t, GoalCost, "coding", 20, 40, 30, "Splitwise-HH", "Splitwise-HA", "Baseline-H100")
		p.StopFailing, p.Parallel = true, par
		var base *Result
		if hinted {
			var err error
			if base, err = Run(context.Background(), p); err != nil {
				t.Fatal(err)
			}
		}
		rows, err := Sensitivity(context.Background(), p, base, steps)
		if err != nil {
			t.Fatal(err)
		}
		return rows
	}
	plain, hinted := sens(1, false), sens(1, true)
	sims := func(rows []SensitivityRow) (n int) {
		for _, r := range rows {
			for _, d := range r.Result.Designs {
				n += d.Simulations
			}
		}
		return n
	}
	for i := range plain {
		a, b := plain[i].Result, hinted[i].Result
		for j := range a.Designs {
			da, db := a.Designs[j], b.Designs[j]
			if da.Found != db.Found || da.Best.Prompt != db.Best.Prompt || da.Best.Token != db.Best.Token {
				t.Errorf("%s %+g, %s: hinted %v %dP/%dT, bisected %v %dP/%dT", plain[i].Input, plain[i].Change, da.Design,
					db.Found, db.Best.Prompt, db.Best.Token, da.Found, da.Best.Prompt, da.Best.Token)
			}
		}
		if a.Winner != b.Winner {
			t.Errorf("%s %+g: winner %d hinted, %d bisected", plain[i].Input, plain[i].Change, b.Winner, a.Winner)
		}
	}
	if sp, sh := sims(plain), sims(hinted); sh >= sp {
		t.Errorf("hinted searches ran %d simulations, the bisecting ones %d: the starts save nothing", sh, sp)
	} else {
		t.Logf("simulations: %d hinted, %d bisected", sh, sp)
	}
	par := sens(4, true)
	for i := range par {
		a, b := hinted[i].Result, par[i].Result
		if a.Winner != b.Winner {
			t.Errorf("%s %+g: the winner moved with the parallelism", par[i].Input, par[i].Change)
			continue
		}
		if a.Winner >= 0 {
			x, y := a.Designs[a.Winner].Best, b.Designs[b.Winner].Best
			x.Verdict, y.Verdict = nil, nil // (pointers to equal verdicts)
			if x != y {
				t.Errorf("%s %+g: the answer moved with the parallelism: %+v vs %+v", par[i].Input, par[i].Change, x, y)
			}
		}
	}
}

// TestRobustPruneDesigns: bounding designs out (a GPU-pair space) keeps
// every scenario's winner, the robust winner and its plan, spread and
// price of certainty.
func TestRobustPruneDesigns(t *testing.T) {
	t.Parallel()
	// strict: a P50 TBT limit at 1.02× the lone reference machine's, which
	// some scenarios' draws make no cluster meet: the winner then has no
	// plan in them, and the levels that need them none.
	strict := func() *Problem {
		p := problem(t, GoalCost, "coding", 2, 12, 30, "Baseline-A100", "Splitwise-AA")
		p.StopFailing = true
		for i, tg := range p.SLO.Targets {
			if tg.Metric == slo.TBT && tg.Percentile == 50 {
				p.SLO.Targets[i].Factor = 1.02
			}
		}
		return p
	}
	cases := []struct {
		mk   func() *Problem
		rb   Robust
		none bool // the winner lacks a plan in some scenario
	}{
		{func() *Problem { return robustProblem(t) }, Robust{Confidence: 0.8, Scenarios: 8, Errors: errmodel.Builtin(), Seed: 9}, false},
		{strict, Robust{Confidence: 0.5, Scenarios: 8, Errors: errmodel.Builtin(), Seed: 5}, true},
	}
	for ci, tc := range cases {
		full, err := RunRobust(context.Background(), tc.mk(), tc.rb)
		if err != nil {
			t.Fatal(err)
		}
		pp := tc.mk()
		pp.PruneDesigns = true
		pruned, err := RunRobust(context.Background(), pp, tc.rb)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(full.DesignWins, pruned.DesignWins) || full.NoWinner != pruned.NoWinner {
			t.Errorf("case %d: scenario wins %v (none %d) in full, %v (none %d) pruned", ci, full.DesignWins, full.NoWinner, pruned.DesignWins, pruned.NoWinner)
		}
		if full.Winner != pruned.Winner {
			t.Fatalf("case %d: robust winner %d in full, %d pruned", ci, full.Winner, pruned.Winner)
		}
		if full.Winner < 0 {
			t.Fatalf("case %d: no robust winner: %s", ci, robustSummary(full))
		}
		if !reflect.DeepEqual(full.Designs[full.Winner], pruned.Designs[pruned.Winner]) {
			t.Errorf("case %d: winner's answer differs:\nfull   %+v\npruned %+v", ci, full.Designs[full.Winner], pruned.Designs[pruned.Winner])
		}
		for i, d := range pruned.Designs {
			if !d.BoundedOut && !reflect.DeepEqual(d, full.Designs[i]) {
				t.Errorf("case %d: %s differs when designs are pruned:\nfull   %+v\npruned %+v", ci, d.Design, full.Designs[i], d)
			}
		}
		missing, noLevel := 0, 0
		for _, o := range pruned.Designs[pruned.Winner].Scenarios {
			if !o.Found {
				missing++
			}
		}
		for _, c := range pruned.Designs[pruned.Winner].Certainty {
			if !c.Found {
				noLevel++
			}
		}
		if tc.none && (missing == 0 || noLevel == 0) {
			t.Errorf("case %d: the winner lacks a plan in %d scenarios and at %d levels; the case wants some of each: %s", ci, missing, noLevel, robustSummary(pruned))
		}
		t.Log(robustSummary(pruned))
	}
}

// TestRobustSharedPromptHint: designs whose prompt pools (or, a
// baseline, machines) are of one machine type start their scenario
// searches from where the first Splitwise design of them found its
// frontier's start (hint.from, hint.baseline), which changes no answer:
// the scenario optima and the plans at every confidence are those of the
// searches started from each design's own nominal hint.
func TestRobustSharedPromptHint(t *testing.T) {
	t.Parallel()
	rb := Robust{Confidence: 0.75, Scenarios: 8, Errors: errmodel.Builtin(), Seed: 7, Confidences: []float64{0.5, 1}}
	var got [2]string
	var sims [2]int64
	for k, plain := range []bool{false, true} {
		p := problem(t, GoalCost, "coding", 12, 16, 30, "Splitwise-HH", "Splitwise-HA", "Splitwise-HHcap", "Baseline-H100")
		p.StopFailing = true
		rb.plainHints = plain
		r, err := RunRobust(context.Background(), p, rb)
		if err != nil {
			t.Fatal(err)
		}
		got[k], sims[k] = robustSummary(r), r.Simulations
	}
	if got[0] != got[1] {
		t.Errorf("shared and plain hints give different answers:\n%s\nvs\n%s", got[0], got[1])
	}
	t.Logf("simulations: shared hints %d, plain %d\n%s", sims[0], sims[1], got[0])
}

// TestHintFrom: a hint taken from another design of the same prompt
// machine type keeps that design's first prompt count, moves the token
// count as it moved (never below one machine) and is marked shared.
func TestHintFrom(t *testing.T) {
	h := hint{p: 22, t: 11}
	if got := h.from(hint{p: 20, t: 12}, hint{p: 22, t: 9}); got != (hint{p: 20, t: 14, shared: true}) {
		t.Errorf("from: %+v, want 20/14", got)
	}
	if got := (hint{p: 5, t: 2}).from(hint{p: 4, t: 1}, hint{p: 5, t: 6}); got != (hint{p: 4, t: 1, shared: true}) {
		t.Errorf("from: %+v, want 4/1", got)
	}
}

// TestHintBaseline: a baseline's hint from a Splitwise design of its
// machine type moves its machines by the square root of the ratio of that
// design's first prompt counts, and is left alone without one.
func TestHintBaseline(t *testing.T) {
	h := hint{p: 58}
	if got := h.baseline(hint{p: 26, t: 9}, hint{p: 22, t: 9}); got != (hint{p: 63}) { // 58·√(26/22) = 63.05
		t.Errorf("baseline: %+v, want 63", got)
	}
	if got := h.baseline(hint{p: 19}, hint{p: 22}); got != (hint{p: 54}) { // 58·√(19/22) = 53.90
		t.Errorf("baseline: %+v, want 54", got)
	}
	if got := h.baseline(hint{}, hint{p: 22}); got != h {
		t.Errorf("baseline without a start: %+v, want %+v", got, h)
	}
}

// TestHintScaled: a Splitwise design's nominal hint in a scenario scales
// its prompt machines with the prompt-time factor (at least one), and
// keeps its token machines.
func TestHintScaled(t *testing.T) {
	if got := (hint{p: 22, t: 9}).scaled(1.157); got != (hint{p: 25, t: 9}) { // 25.45
		t.Errorf("scaled: %+v, want 25/9", got)
	}
	if got := (hint{p: 22, t: 9}).scaled(0.916); got != (hint{p: 20, t: 9}) { // 20.15
		t.Errorf("scaled: %+v, want 20/9", got)
	}
	if got := (hint{p: 1, t: 3}).scaled(0.4); got != (hint{p: 1, t: 3}) {
		t.Errorf("scaled: %+v, want 1/3", got)
	}
	if got := (hint{}).scaled(1.25); got != (hint{}) {
		t.Errorf("scaled: %+v, want the zero hint kept", got)
	}
}

// TestRobustWinnerCurveOnly: scanning the price of certainty for the
// winner alone (the text report's run) gives every design the plan,
// scenario optima and spread of scanning every design's curve (the
// JSON's), and the winner the same curve. The nominal best design's curve
// is scanned ahead, before the winner is known: in the first case another
// design wins the robust search, so that curve is cut back to its plan's
// level and the winner's scanned at the end; in the second the nominal
// best wins.
func TestRobustWinnerCurveOnly(t *testing.T) {
	t.Parallel()
	cases := []struct {
		mk          func() *Problem
		seed        uint64
		nominalWins bool
	}{
		{func() *Problem { return robustProblem(t) }, 3, false},
		{func() *Problem {
			p := problem(t, GoalCost, "coding", 6, 8, 30, "Splitwise-HH", "Splitwise-AA", "Baseline-H100", "Splitwise-HA")
			p.StopFailing = true
			return p
		}, 0, true},
	}
	for ci, tc := range cases {
		rb := Robust{Confidence: 0.9, Scenarios: 10, Errors: errmodel.Builtin(), Seed: tc.seed}
		all, err := RunRobust(context.Background(), tc.mk(), rb)
		if err != nil {
			t.Fatal(err)
		}
		rb.WinnerCurveOnly = true
		one, err := RunRobust(context.Background(), tc.mk(), rb)
		if err != nil {
			t.Fatal(err)
		}
		if all.Winner < 0 || one.Winner != all.Winner {
			t.Fatalf("case %d: winner %d with every curve, %d with the winner's", ci, all.Winner, one.Winner)
		}
		nb := -1 // the nominal best
		for i, d := range one.Nominal.Designs {
			if d.Found && (nb < 0 || d.Best.CostUSDPerH < one.Nominal.Designs[nb].Best.CostUSDPerH) {
				nb = i
			}
		}
		if (nb == one.Winner) != tc.nominalWins {
			t.Errorf("case %d: nominal best %d, robust winner %d: the case no longer tests what it says", ci, nb, one.Winner)
		}
		for i := range all.Designs {
			a, o := all.Designs[i], one.Designs[i]
			if len(a.Certainty) != len(DefaultConfidences) {
				t.Errorf("case %d, %s: %d levels with every curve, want %d", ci, a.Design, len(a.Certainty), len(DefaultConfidences))
			}
			if i == all.Winner {
				if !reflect.DeepEqual(a, o) {
					t.Errorf("case %d: winner %s differs:\nevery curve %+v\nwinner's    %+v", ci, a.Design, a, o)
				}
				continue
			}
			var conf CertaintyLevel
			for _, c := range a.Certainty {
				if c.Confidence == rb.Confidence {
					conf = c
				}
			}
			if len(o.Certainty) != 1 || o.Certainty[0] != conf {
				t.Errorf("case %d, %s: curve %+v with the winner's only, want the level %+v alone", ci, a.Design, o.Certainty, conf)
			}
			a.Certainty, o.Certainty = nil, nil
			if !reflect.DeepEqual(a, o) {
				t.Errorf("case %d, %s differs:\nevery curve %+v\nwinner's    %+v", ci, a.Design, a, o)
			}
		}
		if one.Simulations > all.Simulations {
			t.Errorf("case %d: the winner's curve alone took %d simulations, every curve %d", ci, one.Simulations, all.Simulations)
		}
	}
}

// TestRobustPlansPassTheirOwnSimulations: each design's robust plan, at
// every level of the price of certainty, meets every SLO in its own
// simulation of at least the scenarios it needs (the scan never infers
// a pass: from a neighbour simulated around it, it passed a plan that
// failed a scenario where feasibility is not monotone). The GPU-pair
// path's global scan (PruneDesigns) is checked too.
func TestRobustPlansPassTheirOwnSimulations(t *testing.T) {
	t.Parallel()
	for _, prune := range []bool{false, true} {
		rb := Robust{Confidence: 0.9, Scenarios: 10, Errors: errmodel.Builtin(), Seed: 3}
		p := robustProblem(t)
		p.PruneDesigns = prune
		r, err := RunRobust(context.Background(), p, rb)
		if err != nil {
			t.Fatal(err)
		}
		if n := checkOwnSimulations(t, r, &rb); n == 0 {
			t.Fatalf("prune %v: no robust plan to check", prune)
		}
	}
}

// checkOwnSimulations simulates every plan of r's price of certainty in
// every scenario afresh, checks it passes the scenarios it needs, and
// returns the plans checked.
func checkOwnSimulations(t *testing.T, r *RobustResult, rb *Robust) int {
	t.Helper()
	p := robustProblem(t)
	p.StopFailing = false
	_, nds, err := runWith(context.Background(), p, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	_, ds := scenarioSearches(t, p, nds, r, rb, make(chan struct{}, 1))
	checked := 0
	for i, d := range r.Designs {
		for _, c := range d.Certainty {
			if !c.Found {
				continue
			}
			passed := passedAfresh(t, ds, i, c.Prompt, c.Token, p.RateRPS)
			if passed < c.Needed {
				t.Errorf("%s at %v: %d/%d passes %d of its own simulations, needs %d", d.Design, c.Confidence, c.Prompt, c.Token, passed, c.Needed)
			}
			checked++
		}
	}
	return checked
}

// passedAfresh counts the scenarios (of ds, fresh scenario searches) in
// which design i's point prompt/token meets every SLO by its own
// simulation.
func passedAfresh(t *testing.T, ds [][]*designSearch, i, prompt, token int, rate float64) int {
	t.Helper()
	n := 0
	for s := range ds {
		pt, err := ds[s][i].eval(prompt, token, rate)
		if err != nil {
			t.Fatal(err)
		}
		if pt.Feasible {
			n++
		}
	}
	return n
}

// TestRobustScenarioFailsIdle: where a design has no plan in a scenario,
// the scenario's optimum says which SLO its largest cluster still fails
// with its machines nearly idle, when one does. A P50 TBT limit at the
// lone reference machine's own TBT (1.02×) is met idle in the scenarios
// that draw the A100's decode faster and failed in those that draw it
// slower.
func TestRobustScenarioFailsIdle(t *testing.T) {
	t.Parallel()
	p := problem(t, GoalCost, "coding", 2, 12, 30, "Baseline-A100")
	for i, tg := range p.SLO.Targets {
		if tg.Metric == slo.TBT && tg.Percentile == 50 {
			p.SLO.Targets[i].Factor = 1.02
		}
	}
	r, err := RunRobust(context.Background(), p, Robust{Confidence: 0.5, Scenarios: 8, Errors: errmodel.Builtin(), Seed: 5})
	if err != nil {
		t.Fatal(err)
	}
	idle, found := 0, 0
	for s, o := range r.Designs[0].Scenarios {
		switch {
		case o.Found:
			found++
			if o.FailsIdle != "" {
				t.Errorf("scenario %d: found a plan and fails %s idle", s, o.FailsIdle)
			}
		case o.FailsIdle != "":
			idle++
			if o.FailsIdle != "P50 TBT" {
				t.Errorf("scenario %d fails %s idle, want P50 TBT", s, o.FailsIdle)
			}
		}
	}
	t.Logf("%d scenarios with a plan, %d failing idle, of %d", found, idle, len(r.Designs[0].Scenarios))
	if idle == 0 || found == 0 {
		t.Errorf("want scenarios of both kinds: %d with a plan, %d failing idle", found, idle)
	}
}

// TestRobustPlanSurestOfItsObjective: at every confidence the robust plan
// passes, by its own simulations, at least as many scenarios as any other
// point of its objective (another split of the same cost), and is the
// first in key order of those that pass as many: checked against a fresh
// simulation of every such point in every scenario. On this space (HH at
// 8 req/s, at most 16 machines, 8 scenarios) the first passing point at
// 0.75 (4P/2T, 6 of 8 scenarios) is not the surest of its cost (5P/1T
// passes all 8), so the test fails if the plan is the first passing
// point of its cost.
func TestRobustPlanSurestOfItsObjective(t *testing.T) {
	t.Parallel()
	mk := func() *Problem {
		p := problem(t, GoalCost, "coding", 8, 16, 30, "Splitwise-HH")
		p.StopFailing = true
		return p
	}
	for _, exhaustive := range []bool{false, true} {
		rb := Robust{Confidence: 0.75, Scenarios: 8, Errors: errmodel.Builtin(), Seed: 5,
			Confidences: []float64{0.5, 0.75, 0.9, 1}}
		p := mk()
		p.Exhaustive = exhaustive
		r, err := RunRobust(context.Background(), p, rb)
		if err != nil {
			t.Fatal(err)
		}
		q := mk()
		q.StopFailing = false
		_, nds, err := runWith(context.Background(), q, nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		_, ds := scenarioSearches(t, q, nds, r, &rb, make(chan struct{}, 1))
		d0 := ds[0][0]
		keyOf := d0.keyFunc()
		count := map[[2]int]int{}
		passed := func(pt [2]int) int {
			n, ok := count[pt]
			if !ok {
				n = passedAfresh(t, ds, 0, pt[0], pt[1], q.RateRPS)
				count[pt] = n
			}
			return n
		}
		d := r.Designs[0]
		checked, tied := 0, 0
		for _, c := range d.Certainty {
			if !c.Found {
				continue
			}
			plan := [2]int{c.Prompt, c.Token}
			kp, np := keyOf(plan[0], plan[1]), passed(plan)
			if np < c.Needed {
				t.Errorf("exhaustive %v, %v: plan %v passes %d, needs %d", exhaustive, c.Confidence, plan, np, c.Needed)
			}
			for _, pt := range d0.regionPoints(d0.region()) {
				k := keyOf(pt[0], pt[1])
				if pt == plan || less(k, kp) && less(kp, k) || beyond(k.obj, kp.obj) || beyond(kp.obj, k.obj) {
					continue
				}
				tied++
				if n := passed(pt); n > np || n == np && less(k, kp) {
					t.Errorf("exhaustive %v, %v: plan %v passes %d of %d scenarios, %v of the same objective %d", exhaustive, c.Confidence, plan, np, len(ds), pt, n)
				}
			}
			checked++
		}
		if checked == 0 || tied == 0 {
			t.Fatalf("exhaustive %v: %d plans and %d points of their objective checked: %s", exhaustive, checked, tied, robustSummary(r))
		}
		if c := d.Certainty[1]; c.Prompt != 5 || c.Token != 1 {
			t.Errorf("exhaustive %v: plan at 0.75 %d/%d, want 5/1 (the surest of its cost): %s", exhaustive, c.Prompt, c.Token, robustSummary(r))
		}
	}
}
