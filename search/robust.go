package search

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sync/errgroup"
	"gonum.org/v1/gonum/stat"

	"splitplan/evaluator/perf"
	"splitplan/evaluator/perf/errmodel"
	"splitplan/resolve"
)

// DefaultScenarios is the number of scenarios of a robust search when
// Robust sets none.
const DefaultScenarios = 32

// MaxScenarios bounds Robust.Scenarios.
const MaxScenarios = 4096

// DefaultConfidences are the levels of the price of certainty
// (RobustDesign.Certainty) when Robust sets none.
var DefaultConfidences = []float64{0.5, 0.6, 0.7, 0.8, 0.9, 0.95, 0.99}

// Robust asks a rate goal's search (GoalCost or GoalPower) for an answer
// with error bars: N scenarios, each one draw of the performance model's
// error (one factor per GPU and phase, Errors) and one workload seed, and
// per design the least-objective machine counts that meet every SLO in at
// least Confidence of them.
type Robust struct {
	// Confidence is the share of scenarios the robust plan must pass, in
	// (0, 1].
	Confidence float64
	// Scenarios is N (0: DefaultScenarios).
	Scenarios int
	// Errors is the error model the scenarios draw from; the zero Model
	// has no model error (the scenarios then differ in their workload
	// seeds only).
	Errors errmodel.Model
	// Seed seeds the draws and the scenarios' workload seeds; scenario 0
	// keeps the problem's own workload seed.
	Seed uint64
	// Confidences are the levels whose robust plans make the price of
	// certainty (nil: DefaultConfidences); Confidence is always one.
	Confidences []float64
	// WinnerCurveOnly scans the price of certainty's other levels for the
	// winning design only (the text report prints its curve alone): the
	// other designs' Certainty then hold the level Confidence alone. The
	// JSON and the figures, which show every design's curve, leave it
	// unset. It changes no design's robust plan, spread or scenario
	// optima, only the simulations counted. (The nominal best design's
	// curve is scanned ahead of the winner's being known, and cut back
	// to its plan's level when another design wins.)
	WinnerCurveOnly bool
	// Progress, when set, is called as each scenario's search of one
	// design ends, with the (scenario, design) searches done and their
	// number (from the scenarios' goroutines, one call at a time).
	Progress func(stage string, done, total int)

	// plainHints, set by tests, starts every design's scenario searches
	// from its own hint (no hint.from nor hint.baseline).
	plainHints bool
}

// ScenarioOptimum is one design's optimum in one scenario.
type ScenarioOptimum struct {
	// Found reports that some point met every SLO in the scenario.
	Found bool
	// Prompt and Token are the optimum's counts; Objective its cost
	// ($/h) or power (kW), as the goal weighs it.
	Prompt, Token int
	Objective     float64
	// FailsIdle, where nothing was found, names the SLO (e.g. "P50 TBT")
	// that the design's largest cluster still fails in the scenario at a
	// tenth of the rate (IdleLoadFraction), its machines nearly idle: no
	// bound on the machines would find a plan there. "" otherwise.
	FailsIdle string
}

// Spread is the P10, P50 and P90 of a design's per-scenario optima: the
// prompt and token counts and the objective, each its own empirical
// quantile (gonum stat.Empirical); +Inf where the quantile falls on
// scenarios in which nothing was found.
type Spread struct {
	Prompt, Token, Objective [3]float64
}

// SpreadQuantiles are the probabilities of Spread's columns.
var SpreadQuantiles = [3]float64{0.1, 0.5, 0.9}

// CertaintyLevel is the robust plan at one confidence.
type CertaintyLevel struct {
	// Confidence and Needed, the scenarios the plan must pass
	// (⌈Confidence·N⌉).
	Confidence float64
	Needed     int
	// Found reports a plan; Prompt, Token and Objective describe it.
	Found         bool
	Prompt, Token int
	Objective     float64
}

// RobustDesign is one design's robust answer.
type RobustDesign struct {
	// Design is the label; PromptType and TokenType the machine types.
	Design                string
	Baseline              bool
	PromptType, TokenType string
	// Found reports a robust plan: Prompt and Token machines meeting
	// every SLO in Passed of the Result.Scenarios (at least Needed), each
	// judged by the plan's own simulations there.
	Found                bool
	Prompt, Token        int
	CostUSDPerH, PowerKW float64
	// Objective is CostUSDPerH or PowerKW, as the goal weighs it.
	Objective float64
	Passed    int
	// Scenarios are the design's optimum in each scenario, in scenario
	// order; Spread their quantiles.
	Scenarios []ScenarioOptimum
	Spread    Spread
	// Certainty is the robust plan at each confidence of the price of
	// certainty, in ascending confidence.
	Certainty []CertaintyLevel
	// BoundedOut reports a design whose robust plan cannot beat the
	// winner's: Bound, a lower bound on its robust objective, is above
	// the winner's (its scenario optima were not all computed, and Found
	// is false). Only a problem that prunes designs (PruneDesigns)
	// bounds designs out.
	BoundedOut bool
	Bound      float64
	// NominalPassed is the number of scenarios in which the design's
	// nominal optimum meets every SLO, judged by its own simulations as
	// the robust plan's passes are; −1 where it has none, or in a GPU-pair
	// space for every design but the nominal best and the robust winner.
	NominalPassed int
	// Verified is the robust plan's check over the nominal traffic
	// continued to Problem.VerifyS, as each nominal optimum's (nil when
	// none ran): reported, not required (the plan stands on its
	// scenarios, each a sample of the search's length).
	Verified *Verification
}

// Wins is how often one design, or one pair of machine types, was a
// scenario's best.
type Wins struct {
	// Name is the design's label, or "prompt type / token type" (a
	// baseline: its machine type).
	Name string
	// Scenarios is the number of scenarios it won.
	Scenarios int
}

// RobustResult is a robust search's answer.
type RobustResult struct {
	// Nominal is the search without model error on the problem's own
	// workload seed.
	Nominal *Result
	// Confidence, Scenarios (N) and Needed (⌈Confidence·N⌉) restate the
	// question.
	Confidence        float64
	Scenarios, Needed int
	// WorkloadSeeds are the scenarios' workload seeds.
	WorkloadSeeds []uint64
	// Designs holds one answer per design, in the problem's order.
	Designs []RobustDesign
	// Winner is the index in Designs of the best robust plan, or −1.
	Winner int
	// DesignWins and PairWins count the scenarios each design and each
	// pair of machine types was best in (most first; designs and pairs
	// that never won are left out); NoWinner the scenarios in which no
	// design met the SLOs.
	DesignWins, PairWins []Wins
	NoWinner             int
	// Verifications counts the simulations that checked the robust plans
	// over the nominal traffic continued (RobustDesign.Verified).
	Verifications int
	// Simulations counts the simulations of the scenarios (the nominal
	// search's are in Nominal), on their own traces; ScenarioVerifications
	// those over their traffic continued to Problem.VerifyS, which judge
	// every point a scenario finds feasible (scenarioSearch).
	Simulations           int64
	ScenarioVerifications int64
	// NominalTime and ScenarioTime are the wall-clock times of the
	// nominal search and of the scenarios' searches and scans after it:
	// for the text report only (no file carries a time, so that outputs
	// stay byte-identical).
	NominalTime, ScenarioTime time.Duration
}

// needed is ⌈c·n⌉ (at least 1).
func needed(c float64, n int) int {
	k := int(math.Ceil(c*float64(n) - 1e-9))
	return min(max(k, 1), n)
}

// scenario is one possible world of a robust search.
type scenario struct {
	index int
	seed  uint64 // the workload's
	r     *Robust
}

// factors are scenario sc's measured/predicted factors of the prompt and
// decode times of cl's prompt machines (fp, fd) and token machines (tp,
// td): one draw per (GPU, phase), so the same GPU has the same factors in
// either pool and in every design.
func (sc scenario) factors(cl resolve.Cluster) (pp, pd, tp, td float64) {
	f := func(kind perf.ProvenanceKind, gpu string, ph errmodel.Phase) float64 {
		return sc.r.Errors.Factor(kind, ph, errmodel.Uniform(sc.r.Seed, sc.index, gpu, ph))
	}
	pg, tg := gpuOf(cl.PromptType.GPU, cl.PromptType.Name), gpuOf(cl.TokenType.GPU, cl.TokenType.Name)
	pk, tk := cl.PromptProvenance.Kind, cl.TokenProvenance.Kind
	return f(pk, pg, errmodel.Prompt), f(pk, pg, errmodel.Decode), f(tk, tg, errmodel.Prompt), f(tk, tg, errmodel.Decode)
}

func gpuOf(gpu, machine string) string {
	if gpu != "" {
		return gpu
	}
	return machine
}

// adjust scales cl's performance models by the scenario's factors.
func (sc scenario) adjust(cl resolve.Cluster) resolve.Cluster {
	pp, pd, tp, td := sc.factors(cl)
	cl.PromptPerf = errmodel.Scaled{Model: cl.PromptPerf, Prompt: pp, Decode: pd}
	cl.TokenPerf = errmodel.Scaled{Model: cl.TokenPerf, Prompt: tp, Decode: td}
	return cl
}

// severity orders a design's scenarios from the slowest (most likely to
// fail) to the fastest: the log of the factors of the phases the design's
// pools run (a baseline's machines run both).
func (sc scenario) severity(cl resolve.Cluster) float64 {
	pp, pd, _, td := sc.factors(cl)
	if cl.Design.IsBaseline() {
		return math.Log(pp) + math.Log(pd)
	}
	return math.Log(pp) + math.Log(td)
}

// workloadSeeds are the scenarios' workload seeds: the problem's for
// scenario 0, then a PCG stream seeded by it and the draws' seed.
func workloadSeeds(base, seed uint64, n int) []uint64 {
	out := make([]uint64, n)
	rng := rand.New(rand.NewPCG(base, seed^0x9e3779b97f4a7c15))
	for i := range out {
		if i == 0 {
			out[i] = base
			continue
		}
		out[i] = rng.Uint64() >> 1 // a seed a plan file can hold (signed)
	}
	return out
}

// RunRobust runs the nominal search of p and its robust search: every
// scenario's search (Run, with the scenario's performance models and
// workload), then per design the robust plan at each confidence of the
// price of certainty (scanned as soon as every scenario has searched the
// design, beside the scenario searches left). The result does not depend
// on p.Parallel.
//
// The robust plan is found cheaply: a point can pass scenario s only if
// it is no better than s's optimum, so the scan of each design's points
// in the goal's order starts at the Needed-th best scenario optimum and
// skips a point passable in too few scenarios without simulating; a point
// is checked first on the scenarios whose verdict is known without a
// simulation, then on the others from the most to the least severe, and
// left at its first excess failure; each scenario's simulations are memoized
// across points and confidences, on the same requests (common random
// numbers). A plan's passes are its own simulations' (knownVerdict), so
// that "meets every SLO in k scenarios" holds of the plan itself.
// Designs whose robust objective is bounded above the winner's are not
// scanned.
func RunRobust(ctx context.Context, p *Problem, r Robust) (*RobustResult, error) {
	if !(p.Goal == GoalCost || p.Goal == GoalPower) {
		return nil, fmt.Errorf("search: a robust search answers goal cost or power, not %s", p.Goal)
	}
	if !(r.Confidence > 0 && r.Confidence <= 1) {
		return nil, fmt.Errorf("search: confidence must be in (0, 1], got %v", r.Confidence)
	}
	if r.Scenarios == 0 {
		r.Scenarios = DefaultScenarios
	}
	if r.Scenarios < 1 || r.Scenarios > MaxScenarios {
		return nil, fmt.Errorf("search: scenarios must be 1 to %d, got %d", MaxScenarios, r.Scenarios)
	}
	if p.Options.Compat {
		return nil, fmt.Errorf("search: a robust search scales the performance models, which the compat scheduler reads as curves: drop the compat mode")
	}
	if err := r.Errors.Validate(); err != nil {
		return nil, err
	}
	if p.Workload == nil {
		return nil, fmt.Errorf("search: no workload")
	}
	levels := []float64{r.Confidence}
	cs := r.Confidences
	if cs == nil {
		cs = DefaultConfidences
	}
	for _, c := range cs {
		if !(c > 0 && c <= 1) {
			return nil, fmt.Errorf("search: confidence level %v is not in (0, 1]", c)
		}
		levels = append(levels, c)
	}
	sort.Float64s(levels)
	levels = dedupe(levels)

	start := time.Now()
	nominal, nds, err := runWith(ctx, p, nil, nil)
	if err != nil {
		return nil, err
	}
	n := r.Scenarios
	nd := len(p.Designs)
	out := &RobustResult{Nominal: nominal, Confidence: r.Confidence, Scenarios: n, Needed: needed(r.Confidence, n),
		WorkloadSeeds: workloadSeeds(p.Workload.Seed, r.Seed, n), Winner: -1, NominalTime: time.Since(start)}
	hints := nominal.starts  // each design's nominal frontier start
	order := make([]int, nd) // the designs from the nominal best
	for i := range order {
		order[i] = i
	}
	nomKey := func(i int) key {
		if dr := nominal.Designs[i]; dr.Found {
			return nds[i].s.keyOf(dr.Best)
		}
		return key{obj: math.Inf(1)}
	}
	sort.SliceStable(order, func(a, b int) bool { return less(nomKey(order[a]), nomKey(order[b])) })
	par := max(p.Parallel, 1)
	sem := make(chan struct{}, par)
	scen := make([]scenarioOptima, n)
	for i := range scen {
		scen[i] = newScenarioOptima(nd)
	}
	dss := make([][]*designSearch, n)
	// The scenario searches and the scans share gctx, cancelled at the
	// first error of either (an errgroup's own context would end with its
	// Wait, before the last scans).
	gctx, cancel := context.WithCancel(ctx)
	defer cancel()
	fail := func(err error) error {
		if err != nil {
			cancel()
		}
		return err
	}
	var g errgroup.Group
	g.SetLimit(par)
	scs := make([]scenario, n)
	out.Designs = make([]RobustDesign, nd)
	for i, dr := range nominal.Designs {
		out.Designs[i] = RobustDesign{Design: dr.Design, Baseline: dr.Baseline, PromptType: dr.PromptType, TokenType: dr.TokenType,
			Scenarios: make([]ScenarioOptimum, n)}
	}
	colOf := func(i int) ([]*designSearch, []key) {
		col := make([]*designSearch, n)
		lowKeys := make([]key, n)
		for s := range n {
			col[s] = dss[s][i]
			lowKeys[s] = scen[s].lowerKey(i, col[s])
		}
		return col, lowKeys
	}
	// Outside a GPU-pair space each design's robust plan is scanned as soon
	// as every scenario has searched the design, beside the scenario
	// searches left (a scan reads only its design's searches; the
	// semaphore bounds the simulations at once): the scans fill the
	// scenario searches' tail.
	// global: a GPU-pair space, whose robust plan one global scan finds.
	global := p.PruneDesigns && !p.Exhaustive
	// plans are each design's scan and its robust plan's position there,
	// for its price of certainty.
	plans := make([]designPlan, nd)
	// curved marks the designs whose curve is scanned. With
	// WinnerCurveOnly the nominal best design's is scanned with its plan,
	// beside the searches left, before the winner is known: it is the
	// robust winner too, most often, whose curve would otherwise be
	// scanned alone at the end, its simulations one at a time (see the
	// searches' order below). Where another design wins, that one's curve
	// is scanned at the end, and the nominal best's is cut back to its
	// plan.
	curved := make([]bool, nd)
	var scanned func(i int) error
	var scans errgroup.Group
	if !global {
		left := make([]int, nd) // the scenarios yet to search each design
		for i := range left {
			left[i] = n
		}
		var leftMu sync.Mutex
		scanned = func(i int) error {
			leftMu.Lock()
			left[i]--
			last := left[i] == 0
			leftMu.Unlock()
			if !last {
				return nil
			}
			scans.Go(func() error {
				col, lowKeys := colOf(i)
				sc, err := newDesignScan(col, scs, lowKeys)
				if err != nil {
					return fail(err)
				}
				rd := &out.Designs[i]
				plans[i] = designPlan{scan: sc}
				if plans[i].at, err = sc.robust(rd, p.RateRPS, r.Confidence); err == nil && (!r.WinnerCurveOnly || i == order[0]) {
					err = plans[i].curve(rd, p.RateRPS, levels, r.Confidence)
					curved[i] = true
				}
				return fail(err)
			})
			return nil
		}
	}
	// The scenarios search the designs design by design (every scenario's
	// first design, then every scenario's second, ...; each scenario's own
	// designs in order, one at a time), so that a design's scan, which
	// waits for every scenario to have searched it, starts early, beside
	// the searches of the designs after it, instead of every scan at the
	// end (at 70 req/s the nominal best's scan and curve, its simulations
	// one at a time, held one of two cores idle for 1.5 s of 8). The
	// order of the tasks is not the order of the answer: each scenario's
	// designs are searched in the same order and from the same state
	// either way.
	for s := range n {
		scs[s] = scenario{index: s, seed: out.WorkloadSeeds[s], r: &r}
	}
	searchers := make([]*scenarioSearcher, n)
	ready := make([]chan struct{}, n) // closed when scenario s's last task ends
	var progMu sync.Mutex
	progDone := 0
	for k := range nd {
		for s := range n {
			prev := ready[s]
			done := make(chan struct{})
			ready[s] = done
			g.Go(func() error {
				defer close(done)
				if prev != nil {
					<-prev
				}
				if gctx.Err() != nil {
					return nil // (the error that cancelled it is returned)
				}
				if k == 0 {
					var err error
					if dss[s], err = scenarioSearch(gctx, p, scs[s], sem, nds); err != nil {
						return fail(err)
					}
					searchers[s] = &scenarioSearcher{so: &scen[s], ds: dss[s], order: order, hints: hints, rate: p.RateRPS,
						sc: &scs[s], share: !r.plainHints, starts: map[string]scenarioStart{}}
				}
				i, err := searchers[s].next()
				if err == nil && scanned != nil {
					err = scanned(i)
				}
				if err == nil && r.Progress != nil {
					progMu.Lock()
					progDone++
					r.Progress("scenario searches", progDone, n*nd)
					progMu.Unlock()
				}
				return fail(err)
			})
		}
	}
	err = g.Wait()
	if serr := scans.Wait(); err == nil {
		err = serr
	}
	if err != nil {
		return nil, err
	}
	// Each scenario's winner.
	designWins, pairWins := map[string]int{}, map[string]int{}
	for _, sr := range scen {
		if sr.winner < 0 {
			out.NoWinner++
			continue
		}
		w := nominal.Designs[sr.winner]
		designWins[w.Design]++
		pairWins[pairName(p, w)]++
	}
	out.DesignWins, out.PairWins = sortedWins(designWins), sortedWins(pairWins)

	// Per design: the scenario optima (lower bounds where the scenario's
	// search bounded the design out) and the bound on its robust plan.
	k := out.Needed
	bounds := make([]float64, nd)
	for i := range nd {
		lower := make([]float64, n)
		for s := range n {
			lower[s] = scen[s].lower(i, dss[s][i])
		}
		sort.Float64s(lower)
		bounds[i] = lower[k-1]
	}
	best := math.Inf(1) // the best robust objective
	for _, ds := range dss {
		ds[0].s.ctx = ctx // (gctx is done once Wait returns)
	}
	completed := make([]bool, nd) // completeScenarios has run
	if global {
		// A GPU-pair space: only the winner is wanted. Every design's
		// points are checked in one global order of the objective (best
		// first), so that no design is scanned past the winner's plan.
		w, plan, err := globalRobust(out.Designs, colOf, scs, p.RateRPS, k, r.Confidence)
		if err != nil {
			return nil, err
		}
		if w >= 0 {
			// The global scan's plan is the design's; the levels around it
			// come from its curve, scanned from its exact optimum in every
			// scenario (none where none was found, as a scan outside a
			// GPU-pair space reads them) instead of the bounds the
			// scenarios' searches left where another pair won: a level
			// that more scenarios need than have a plan is then none
			// without a simulation. (Scanned from the bounds, the GPU-pair
			// run's levels 0.95 and 0.99, with 3 scenarios of no plan,
			// tried every point of the winning pair, 40 s of its 64.)
			rd := &out.Designs[w]
			col, _ := colOf(w)
			keys, err := completeScenarios(rd, scen, col, w, hints[w], p.RateRPS)
			if err != nil {
				return nil, err
			}
			completed[w] = true
			plan.scan.optKey = keys
			if err := plan.curve(rd, p.RateRPS, levels, r.Confidence); err != nil {
				return nil, err
			}
			best = rd.Objective
		}
		for i := range out.Designs {
			if i != w {
				out.Designs[i].Found = false
			}
		}
	} else {
		for _, d := range out.Designs { // (scanned with the scenarios)
			if d.Found {
				best = math.Min(best, d.Objective)
			}
		}
	}

	// In a GPU-pair space every design but the winner is reported bounded
	// out: none of its points that could beat the winner's plan passed.
	for i := range out.Designs {
		d := &out.Designs[i]
		if global && !d.Found {
			b := bounds[i]
			if !math.IsInf(best, 1) {
				b = math.Max(b, best) // it cannot beat the best
			}
			*d = RobustDesign{Design: d.Design, Baseline: d.Baseline, PromptType: d.PromptType, TokenType: d.TokenType,
				BoundedOut: true, Bound: b}
			continue
		}
		if !completed[i] {
			col, _ := colOf(i)
			if _, err := completeScenarios(d, scen, col, i, hints[i], p.RateRPS); err != nil {
				return nil, err
			}
		}
		if d.Found && (out.Winner < 0 || less(robustKey(*d), robustKey(out.Designs[out.Winner]))) {
			out.Winner = i
		}
	}
	if r.WinnerCurveOnly && !global {
		// The winner's curve, scanned as the other mode scans every
		// design's, after its plan; a curve scanned ahead for a design
		// that did not win is cut back to the plan's level.
		w := out.Winner
		if w >= 0 && !curved[w] {
			if err := plans[w].curve(&out.Designs[w], p.RateRPS, levels, r.Confidence); err != nil {
				return nil, err
			}
		}
		for i, c := range curved {
			if c && i != w {
				d := &out.Designs[i]
				for _, lvl := range d.Certainty {
					if lvl.Confidence == r.Confidence {
						d.Certainty = []CertaintyLevel{lvl}
						break
					}
				}
			}
		}
	}
	// Each design's nominal optimum and robust plan judged in every
	// scenario (in a GPU-pair space the nominal best's and the robust
	// winner's alone: the other pairs are reported bounded out). The scan
	// stopped asking a plan's scenarios once it passed enough of them, so
	// its count there is a lower bound; the scenarios it did not ask are
	// simulated now (the rest memoized), and the count is exact.
	cols := make([][]*designSearch, 2*nd)
	pts := make([]*Point, 2*nd)
	for i, dr := range nominal.Designs {
		if dr.Found && (!global || i == nominal.Winner || i == out.Winner) {
			cols[i], _ = colOf(i)
			pts[i] = &nominal.Designs[i].Best
		}
		if d := out.Designs[i]; d.Found {
			cols[nd+i], _ = colOf(i)
			pts[nd+i] = &Point{Prompt: d.Prompt, Token: d.Token}
		}
	}
	counts, err := planPasses(cols, pts, p.RateRPS, par)
	if err != nil {
		return nil, err
	}
	for i := range out.Designs {
		out.Designs[i].NominalPassed = counts[i]
		if out.Designs[i].Found {
			out.Designs[i].Passed = counts[nd+i]
		}
	}
	for _, rs := range dss {
		if len(rs) > 0 {
			out.Simulations += rs[0].s.sims.Load()
			out.ScenarioVerifications += rs[0].s.verifications.Load()
		}
	}
	out.ScenarioTime = time.Since(start) - out.NominalTime
	if err := out.verifyPlans(ctx, nds, p.RateRPS); err != nil {
		return nil, err
	}
	return out, nil
}

// NominalBestPassed is the number of scenarios in which the nominal best
// plan (Nominal's winner's optimum) meets every SLO, judged by its own
// simulations as a robust plan's passes are (RobustDesign.NominalPassed);
// −1 when the nominal search found no plan. How sure the answer without
// error bars is.
func (r *RobustResult) NominalBestPassed() int {
	if w := r.Nominal.Winner; w >= 0 && w < len(r.Designs) {
		return r.Designs[w].NominalPassed
	}
	return -1
}

// planPasses counts, for each plan i with a point pts[i] (a design's
// nominal optimum or robust plan; nil: none, −1), the scenarios (cols[i],
// its design's search in each) in which the point meets every SLO at rate
// by its own simulation (memoized: most scenarios' walks and the scans
// simulated it already; with a check over the longer run, eager),
// parallel at once.
func planPasses(cols [][]*designSearch, pts []*Point, rate float64, parallel int) ([]int, error) {
	passed := make([]atomic.Int64, len(pts))
	var g errgroup.Group
	g.SetLimit(max(parallel, 1))
	for i, pt := range pts {
		if pt == nil {
			continue
		}
		for _, d := range cols[i] {
			g.Go(func() error {
				ok, err := d.simulated(pt.Prompt, pt.Token, rate)
				if ok {
					passed[i].Add(1)
				}
				return err
			})
		}
	}
	err := g.Wait()
	out := make([]int, len(pts))
	for i, pt := range pts {
		out[i] = -1
		if pt != nil {
			out[i] = int(passed[i].Load())
		}
	}
	return out, err
}

// beyond reports that a lower bound b is above the best objective (by
// more than the tolerance less uses).
func beyond(b, best float64) bool {
	return !math.IsInf(b, 1) && b > best && b-best > 1e-9*math.Max(1, math.Abs(best))
}

func robustKey(d RobustDesign) key { return key{d.Objective, d.Prompt + d.Token, d.Prompt} }

func dedupe(v []float64) []float64 {
	out := v[:0]
	for i, x := range v {
		if i == 0 || x != v[i-1] {
			out = append(out, x)
		}
	}
	return out
}

// pairName names the GPUs of a design's pools, "prompt GPU / token GPU"
// or, for a baseline, "GPU co-located", each GPU by its family in upper
// case ("H100"; the machine type's name where the catalog has none).
func pairName(p *Problem, d DesignResult) string {
	gpu := func(machine string) string {
		if m, err := p.Catalog.Machine(machine); err == nil && m.GPUFamily() != "" {
			return strings.ToUpper(m.GPUFamily())
		}
		return machine
	}
	if d.Baseline {
		return gpu(d.PromptType) + " co-located"
	}
	return gpu(d.PromptType) + " / " + gpu(d.TokenType)
}

func sortedWins(m map[string]int) []Wins {
	out := make([]Wins, 0, len(m))
	for name, n := range m {
		out = append(out, Wins{Name: name, Scenarios: n})
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Scenarios != out[j].Scenarios {
			return out[i].Scenarios > out[j].Scenarios
		}
		return out[i].Name < out[j].Name
	})
	return out
}

// scenarioOptima are one scenario's optima: opt[i] is design i's (nil:
// none found, or bounded out when bounded[i]), with a lower bound on the
// objective of a design bounded out; winner indexes the best design (−1:
// none).
type scenarioOptima struct {
	opt     []*Point
	bounded []bool
	bound   []float64
	winner  int
}

// lower is a lower bound on design i's objective in the scenario: its
// optimum's when found, +Inf when none, its analytic bound when bounded
// out.
func (so *scenarioOptima) lower(i int, d *designSearch) float64 {
	switch {
	case so.bounded[i]:
		return so.bound[i]
	case so.opt[i] != nil:
		return d.s.keyOf(*so.opt[i]).obj
	}
	return math.Inf(1)
}

// lowerKey is a key no point of design i passing the scenario beats:
// its optimum's, or its lower bound's when bounded out (+Inf when
// nothing was found).
func (so *scenarioOptima) lowerKey(i int, d *designSearch) key {
	switch {
	case so.bounded[i]:
		return key{obj: so.bound[i]}
	case so.opt[i] != nil:
		return d.s.keyOf(*so.opt[i])
	}
	return key{obj: math.Inf(1)}
}

// scenarioSearcher finds each design's optimum in one scenario (ds, in
// the problem's order), searching them one at a time in order (the
// nominal best first; next) and, when the problem prunes designs (a
// GPU-pair space), only as far as deciding the scenario's winner: a
// design whose analytic bound cannot beat the best found so far is
// bounded out, and another is searched only among its points that would
// beat it (bounded out by the best's objective when none does).
// Sequential within the scenario, so the answer does not depend on
// timing. With share, a design starts from what the scenario's first
// Splitwise design with prompt machines of its type found (hint.from for
// a Splitwise design, hint.baseline for a baseline of that machine type);
// the first Splitwise design of a prompt type starts from its nominal
// hint scaled by the scenario's prompt-time factor of its prompt GPU
// (hint.scaled).
type scenarioSearcher struct {
	so    *scenarioOptima
	ds    []*designSearch
	order []int
	hints []hint
	rate  float64
	sc    *scenario
	share bool
	// starts holds the frontier's start found in this scenario by the
	// first Splitwise design searched of each prompt machine type, and its
	// nominal hint, by that machine type.
	starts map[string]scenarioStart
	k      int // the designs of order searched
}

type scenarioStart struct{ start, nominal hint }

// next searches the next design of the order and returns its index.
func (ss *scenarioSearcher) next() (int, error) {
	i := ss.order[ss.k]
	ss.k++
	so, d, rate, sc := ss.so, ss.ds[i], ss.rate, ss.sc
	p := d.s.p
	reg := d.region()
	if p.PruneDesigns && !p.Exhaustive && so.winner >= 0 {
		b, ok, err := d.designBound(reg)
		if err != nil {
			return i, err
		}
		if ok && beyond(b, d.s.keyOf(*so.opt[so.winner]).obj) {
			so.bounded[i], so.bound[i] = true, b
			return i, nil
		}
	}
	var best *Point
	var err error
	if p.PruneDesigns && !p.Exhaustive && so.winner >= 0 {
		// Only whether the design beats the winner matters here: search
		// the points that would (the design's optimum when one does).
		inc := d.s.keyOf(*so.opt[so.winner])
		beating := d.beating(reg, inc)
		if best, _, err = d.verifiedMin(beating, func() (*Point, float64, error) {
			b, err := d.rateMin(beating, rate)
			return b, rate, err
		}); err != nil {
			return i, err
		}
		if best == nil {
			so.bounded[i], so.bound[i] = true, inc.obj
			return i, nil
		}
	} else {
		h := ss.hints[i]
		if f, ok := ss.starts[d.design.Prompt]; ok && ss.share && !d.design.IsBaseline() {
			h = h.from(f.start, f.nominal)
		} else if !d.design.IsBaseline() && h.p > 0 {
			cl, err := d.cluster(d.design.MinCounts())
			if err != nil {
				return i, err
			}
			pp, _, _, _ := sc.factors(cl)
			h = h.scaled(pp)
		}
		if f, ok := ss.starts[d.design.Machine]; ok && ss.share && d.design.IsBaseline() {
			h = h.baseline(f.start, f.nominal)
		}
		var start hint
		first := true
		best, _, err = d.verifiedMin(reg, func() (*Point, float64, error) {
			b, st, err := d.hintedMin(reg, rate, h)
			if first {
				start, first = st, false // (where the frontier starts: the first walk's)
			}
			return b, rate, err
		})
		if err != nil {
			return i, err
		}
		if _, ok := ss.starts[d.design.Prompt]; !ok && start.p > 0 && !d.design.IsBaseline() {
			ss.starts[d.design.Prompt] = scenarioStart{start, ss.hints[i]}
		}
	}
	so.opt[i] = best
	if best != nil && (so.winner < 0 || less(d.s.keyOf(*best), d.s.keyOf(*so.opt[so.winner])) ||
		!less(d.s.keyOf(*so.opt[so.winner]), d.s.keyOf(*best)) && i < so.winner) {
		so.winner = i
	}
	return i, nil
}

// newScenarioOptima is an empty scenarioOptima of nd designs.
func newScenarioOptima(nd int) scenarioOptima {
	return scenarioOptima{opt: make([]*Point, nd), bounded: make([]bool, nd), bound: make([]float64, nd), winner: -1}
}

// beating is the part of the region whose points beat key inc.
func (d *designSearch) beating(reg region, inc key) region {
	out := region{tb: make([]int, len(reg.tb)), n: reg.n}
	keyOf := d.keyFunc()
	for p := 1; p <= reg.pmax; p++ {
		if d.design.IsBaseline() {
			if less(keyOf(p, 0), inc) {
				out.pmax = p
			}
			continue
		}
		t := reg.tb[p]
		for t > 0 && !less(keyOf(p, t), inc) {
			t--
		}
		out.tb[p] = t
		if t > 0 {
			out.pmax = p
		}
	}
	return out
}

// completeScenarios fills the design's optimum in every scenario,
// searching it in the scenarios whose search bounded the design out, and
// returns the optima's keys (+Inf where the scenario has none).
func completeScenarios(rd *RobustDesign, scen []scenarioOptima, col []*designSearch, i int, h hint, rate float64) ([]key, error) {
	// The scenarios at once (each its own search; their simulations
	// bounded by the semaphore they share). An error is the first
	// scenario's in order.
	errs := make([]error, len(col))
	keys := make([]key, len(col))
	var g errgroup.Group
	for s, d := range col {
		g.Go(func() error {
			best := scen[s].opt[i]
			if scen[s].bounded[i] {
				var err error
				reg := d.region()
				if best, _, err = d.verifiedMin(reg, func() (*Point, float64, error) {
					b, _, err := d.hintedMin(reg, rate, h)
					return b, rate, err
				}); err != nil {
					errs[s] = err
					return nil
				}
			}
			if best != nil {
				keys[s] = d.s.keyOf(*best)
				rd.Scenarios[s] = ScenarioOptimum{Found: true, Prompt: best.Prompt, Token: best.Token, Objective: keys[s].obj}
				return nil
			}
			keys[s] = key{obj: math.Inf(1)}
			rd.Scenarios[s].FailsIdle, errs[s] = d.idleFailure(rate)
			return nil
		})
	}
	_ = g.Wait() // (the errors are errs, in the scenarios' order)
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	rd.Spread = spreadOf(rd.Scenarios)
	return keys, nil
}

// idleFailure is the SLO that the design's largest cluster in its region
// (the most machines in all) fails at IdleLoadFraction of rate in d's
// scenario, its machines nearly idle (failsIdle: not counted as the
// search's simulations), or "" when it meets every one there or the
// region is empty.
func (d *designSearch) idleFailure(rate float64) (string, error) {
	pts := d.maximal(d.region())
	if len(pts) == 0 {
		return "", nil
	}
	big := pts[0]
	for _, q := range pts[1:] {
		if q[0]+q[1] > big[0]+big[1] {
			big = q
		}
	}
	return d.failsIdle(&Point{Prompt: big[0], Token: big[1], RateRPS: rate})
}

// hint is where a design's nominal frontier starts: the fewest prompt
// machines feasible (with the most token machines) and the fewest token
// machines feasible there; for a baseline, the fewest machines. Zero
// when the nominal search found nothing feasible. shared marks a hint
// from another design of the scenario (hint.from), whose first prompt
// count is this design's as a rule.
type hint struct {
	p, t   int
	shared bool
}

// hint reads the nominal search's points.
func (d *designSearch) hint() hint {
	var h hint
	for _, pt := range d.points {
		if !pt.Feasible {
			continue
		}
		if h.p == 0 || pt.Prompt < h.p || pt.Prompt == h.p && pt.Token < h.t {
			h = hint{p: pt.Prompt, t: pt.Token}
		}
	}
	return h
}

// from is the hint of a design whose prompt pool is of the same machine
// type as one already searched in the scenario, which found its
// frontier's start at start against its nominal hint nominal: the first
// prompt count feasible with the most token machines is the other's (it
// depends on the prompt pool, which both have), and the token count moves
// from h's as the other's moved from its nominal hint.
func (h hint) from(start, nominal hint) hint {
	return hint{p: start.p, t: max(h.t+start.t-nominal.t, 1), shared: true}
}

// scaled is a Splitwise design's nominal hint in a scenario whose prompt
// times are f times the nominal's on its prompt GPU: the prompt machines
// needed scale with their prompt time. A zero hint (none: bisect) stays
// zero.
func (h hint) scaled(f float64) hint {
	if h.p < 1 {
		return h
	}
	return hint{p: max(int(math.Round(float64(h.p)*f)), 1), t: h.t}
}

// baseline is the hint of a baseline whose machine type is the prompt
// pool's of a Splitwise design already searched in the scenario, which
// found its first prompt count at start.p against its nominal hint's
// nominal.p: the fewest machines move by the square root of that ratio,
// as a baseline's machines spend only part of their time on prompts. It
// only moves where the gallop starts (not marked shared).
func (h hint) baseline(start, nominal hint) hint {
	if start.p < 1 || nominal.p < 1 {
		return h
	}
	return hint{p: max(int(math.Round(float64(h.p)*math.Sqrt(float64(start.p)/float64(nominal.p)))), 1)}
}

// hintedMin is rateMin started from a hint (the nominal frontier's, or
// from): the first prompt count feasible and its fewest token machines
// are found by galloping from the hint's instead of bisecting the whole
// range (a shared hint's prompt count is checked by one simulation below
// it), then the frontier walk goes on as frontierMin's. Feasibility
// being monotone, it finds frontierMin's point; without a hint, or
// exhaustive, it is rateMin. start is where the gallops put the walk's
// start (zero when they did not run).
func (d *designSearch) hintedMin(reg region, rate float64, h hint) (best *Point, start hint, err error) {
	if d.s.p.Exhaustive || h.p == 0 {
		best, err = d.rateMin(reg, rate)
		return best, hint{}, err
	}
	if d.design.IsBaseline() {
		if reg.pmax < 1 {
			return nil, hint{}, nil
		}
		n, found, err := gallopMin(reg.pmax, h.p, func(n int) (bool, error) { return d.feasible(n, 0, rate) })
		if err != nil || !found {
			return nil, hint{}, err
		}
		if n, err = d.skipHoles(n, 0, func(n int) (bool, error) { return d.simulated(n, 0, rate) }); err != nil {
			return nil, hint{}, err
		}
		best, err = d.eval(n, 0, rate)
		return best, hint{}, err
	}
	if reg.pmax < 2 {
		best, err = d.rateMin(reg, rate)
		return best, hint{}, err
	}
	tb := reg.tb[1]
	end := 1
	for end < reg.pmax && reg.tb[end+1] == tb {
		end++
	}
	if h.p > end {
		best, err = d.rateMin(reg, rate)
		return best, hint{}, err
	}
	if h.shared && h.p > 1 {
		// The shared first prompt count is as a rule this design's: a
		// failure one below it and a feasible token count found at it show
		// it without simulating it with every token machine.
		ok, err := d.feasible(h.p-1, tb, rate)
		if err != nil {
			return nil, hint{}, err
		}
		if !ok {
			t, found, err := gallopMin(tb, h.t, func(t int) (bool, error) { return d.feasible(h.p, t, rate) })
			if err != nil {
				return nil, hint{}, err
			}
			if found {
				best, err = d.frontierWalk(reg, rate, h.p, t, nil)
				return best, hint{p: h.p, t: t}, err
			}
		}
	}
	// A design's own hint (nominal, or scaled): the gallop starts one
	// prompt machine below it, as a failing simulation (stopped early)
	// costs less than a passing one (run to its end), and the scenarios'
	// first counts fall on either side of the hint.
	hp := h.p
	if !h.shared {
		hp--
	}
	p, found, err := gallopMin(end, hp, func(p int) (bool, error) { return d.feasible(p, tb, rate) })
	if err != nil {
		return nil, hint{}, err
	}
	if !found {
		best, err = d.rateMin(reg, rate) // nothing in the prefix: walk it all
		return best, hint{}, err
	}
	t, _, err := gallopMin(tb, h.t, func(t int) (bool, error) { return d.feasible(p, t, rate) })
	if err != nil {
		return nil, hint{}, err
	}
	best, err = d.frontierWalk(reg, rate, p, t, nil)
	return best, hint{p: p, t: t}, err
}

// gallopMin is the least x in [1, hi] with f(x), f growing with x,
// found from start by galloping (steps doubling) toward it and bisecting
// the last step; found is false when f(hi) fails.
func gallopMin(hi, start int, f func(int) (bool, error)) (x int, found bool, err error) {
	x = min(max(start, 1), hi)
	ok, err := f(x)
	if err != nil {
		return 0, false, err
	}
	if ok {
		good, bad := x, 0
		for step := 1; good-step > 0; step *= 2 {
			c := good - step
			if ok, err = f(c); err != nil {
				return 0, false, err
			}
			if !ok {
				bad = c
				break
			}
			good = c
		}
		good, err = fewestFeasible(bad, good, f)
		return good, err == nil, err
	}
	bad := x
	for step := 1; bad < hi; step *= 2 {
		c := min(bad+step, hi)
		if ok, err = f(c); err != nil {
			return 0, false, err
		}
		if ok {
			good, err := fewestFeasible(bad, c, f)
			return good, err == nil, err
		}
		bad = c
	}
	return 0, false, nil
}

// rateMin is the design's optimum at rate, searched as Run searches a
// rate goal's (cost and power).
func (d *designSearch) rateMin(reg region, rate float64) (*Point, error) {
	if d.s.p.Exhaustive {
		return d.exhaustiveMin(reg, rate)
	}
	return d.frontierMin(reg, rate, true, nil)
}

// spreadQuantiles are the empirical quantiles SpreadQuantiles of x,
// which it sorts.
func spreadQuantiles(x []float64) [3]float64 {
	sort.Float64s(x)
	var q [3]float64
	for j, p := range SpreadQuantiles {
		q[j] = stat.Quantile(p, stat.Empirical, x, nil)
	}
	return q
}

func spreadOf(opt []ScenarioOptimum) Spread {
	var sp Spread
	col := func(v func(o ScenarioOptimum) float64) [3]float64 {
		x := make([]float64, len(opt))
		for i, o := range opt {
			x[i] = math.Inf(1)
			if o.Found {
				x[i] = v(o)
			}
		}
		return spreadQuantiles(x)
	}
	sp.Prompt = col(func(o ScenarioOptimum) float64 { return float64(o.Prompt) })
	sp.Token = col(func(o ScenarioOptimum) float64 { return float64(o.Token) })
	sp.Objective = col(func(o ScenarioOptimum) float64 { return o.Objective })
	return sp
}

// scenarioSearch is scenario sc's search of the designs nds (searched
// nominally by p): p's problem on the scenario's workload seed, its
// performance models adjusted by the scenario's draw, its simulations
// bounded by sem; one fresh designSearch per design.
func scenarioSearch(ctx context.Context, p *Problem, sc scenario, sem chan struct{}, nds []*designSearch) ([]*designSearch, error) {
	ps := *p
	w := p.Workload
	ps.Workload = w.with(sc.seed, w.DurationS)
	ps.Progress, ps.Notes = nil, nil
	if ps.Exhaustive {
		ps.DropPoints = false // the scan asks the scenario's points again
	}
	s, err := newSearch(ctx, &ps)
	if err != nil {
		return nil, err
	}
	s.adjust, s.sem = sc.adjust, sem
	if len(nds) > 0 {
		s.latencies = nds[0].s.latencies
	}
	// With a verification (Problem.VerifyS) a scenario judges a point as
	// the nominal search judges its optima: over the scenario's trace and
	// over its traffic continued to the verification's length (the same
	// seed), every point found feasible checked at once (eager; the robust
	// scan's verdicts go through eval too), so that the scenario optima,
	// their quantiles and the robust plans' scenario counts stand on the
	// same two checks as the nominal optima beside them. (Checked only
	// where a scenario's walk had settled, as the nominal search checks,
	// the same answers took 1.5× the time at 70 req/s: each failure sent
	// the walk one point on.)
	ds := make([]*designSearch, len(nds))
	for j, d := range nds {
		ds[j] = &designSearch{s: s, spec: d.spec, design: d.design, memo: map[pointKey]*Point{}, eager: s.verify != nil}
	}
	return ds, nil
}

// robust finds the design's robust plan at confidence conf and reports it
// as the design's (Certainty: that level alone; designPlan.curve adds the
// others), returning the position in the key order of the first point
// that passes the scenarios conf needs (len(idx): none), from whose
// objective the plan is chosen (surest). A point passes a scenario only
// if it does not beat the scenario's key.
func (sc *designScan) robust(rd *RobustDesign, rate float64, conf float64) (int, error) {
	need := needed(conf, len(sc.col))
	exhaustive := sc.col[0].s.p.Exhaustive
	start := 0
	if !exhaustive {
		start = sc.start(need)
	}
	pos, passed, err := sc.first(start, len(sc.idx), need, rate, exhaustive)
	if err != nil {
		return 0, err
	}
	return pos, sc.setPlan(rd, pos, passed, rate, conf, exhaustive)
}

// setPlan reports the surest point of the objective of the point at
// position pos of the key order (none at len(idx)), which passed passed
// scenarios, as rd's robust plan at conf, its price of certainty that
// level alone.
func (sc *designScan) setPlan(rd *RobustDesign, pos, passed int, rate, conf float64, exhaustive bool) error {
	pos, passed, err := sc.surest(pos, passed, rate, exhaustive)
	if err != nil {
		return err
	}
	lvl := CertaintyLevel{Confidence: conf, Needed: needed(conf, len(sc.col))}
	if pos < len(sc.idx) {
		pt, kc := sc.pts[sc.idx[pos]], sc.keys[sc.idx[pos]]
		lvl.Found, lvl.Prompt, lvl.Token, lvl.Objective = true, pt[0], pt[1], kc.obj
		cc := sc.col[0].costOf(pt[0], pt[1])
		rd.Found, rd.Prompt, rd.Token, rd.Objective, rd.Passed = true, pt[0], pt[1], kc.obj, passed
		rd.CostUSDPerH, rd.PowerKW = cc.CostUSDPerH(), cc.PowerKW()
	}
	rd.Certainty = []CertaintyLevel{lvl}
	return nil
}

// first is the first position in [from, end) of the key order whose
// point passes need scenarios, and the scenarios it passed (end when
// none does).
func (sc *designScan) first(from, end, need int, rate float64, exhaustive bool) (pos, passed int, err error) {
	for pos = from; pos < end; pos++ {
		passed, err = passes(sc.col, sc.order, sc.optKey, sc.pts[sc.idx[pos]], sc.keys[sc.idx[pos]], rate, need, exhaustive)
		if err != nil || passed >= need {
			return pos, passed, err
		}
	}
	return end, 0, nil
}

// surest is the plan chosen among the points of the first passing one's
// objective (pos, which passed passed scenarios; none at len(idx)): the
// one that passes the most scenarios, the first in key order among those,
// with the scenarios it passed (exactly, where another point shares the
// objective; else at least). A planner offered several splits of one cost
// takes the surest: of the Splitwise-HH plans at $1,102/h of the guide's
// short robust run, 23P/6T meets every SLO in 6 of 8 scenarios and 24P/5T
// in 7. Pruned, the levels are asked from every scenario down, each point
// in key order, and the first point to pass a level is the plan: a count
// asked for more passes than a point has stops at its excess failure,
// which the scenarios' order (the most severe first) finds early, and the
// verdicts are memoized, so only the plan is simulated in every scenario
// it passes (asked from the needed count up, every point that passes it
// would be). The answer is the exhaustive count's.
func (sc *designScan) surest(pos, passed int, rate float64, exhaustive bool) (int, int, error) {
	if pos >= len(sc.idx) {
		return pos, passed, nil
	}
	kc := sc.keys[sc.idx[pos]]
	end := pos + 1 + sort.Search(len(sc.idx)-pos-1, func(j int) bool {
		return beyond(sc.keys[sc.idx[pos+1+j]].obj, kc.obj)
	})
	if end == pos+1 {
		return pos, passed, nil
	}
	if exhaustive { // (an exhaustive count is exact)
		best, most := pos, passed
		for q := pos + 1; q < end; q++ {
			n, err := passes(sc.col, sc.order, sc.optKey, sc.pts[sc.idx[q]], sc.keys[sc.idx[q]], rate, most, true)
			if err != nil {
				return 0, 0, err
			}
			if n > most {
				best, most = q, n
			}
		}
		return best, most, nil
	}
	for level := len(sc.col); level > passed; level-- {
		for q := pos; q < end; q++ {
			n, err := passes(sc.col, sc.order, sc.optKey, sc.pts[sc.idx[q]], sc.keys[sc.idx[q]], rate, level, false)
			if err != nil {
				return 0, 0, err
			}
			if n >= level {
				return q, level, nil
			}
		}
	}
	return pos, passed, nil
}

// designPlan is a design's scan and its robust plan's position in the
// scan's key order (len(idx): none).
type designPlan struct {
	scan *designScan
	at   int
}

// curve completes the price of certainty of rd, whose robust plan at conf
// (rd.Certainty, that level alone) was chosen from the objective of the
// point at pl.at, the first to pass conf's scenarios: its plan at each of
// levels (ascending), the plan at conf kept. A level below conf has its
// first passing point no later in key order than conf's (which passes
// more scenarios than it needs), a level above it none earlier, and none
// when conf has none; so the curve never falls. Each level's plan is the
// surest of its first passing point's objective, and where that is conf's
// objective it is conf's plan (the surest of an objective is the same
// point from whichever level it is asked), so the plan at conf comes out
// the same whichever curves are scanned.
func (pl designPlan) curve(rd *RobustDesign, rate float64, levels []float64, conf float64) error {
	sc, at := pl.scan, pl.at
	plan := rd.Certainty[0]
	exhaustive := sc.col[0].s.p.Exhaustive
	var curve []CertaintyLevel
	start := 0
	for _, c := range levels {
		if c == conf {
			curve = append(curve, plan)
			start = at
			continue
		}
		need := needed(c, len(sc.col))
		lvl := CertaintyLevel{Confidence: c, Needed: need}
		end := len(sc.idx)
		if c < conf {
			end = at
		} else if !plan.Found {
			curve = append(curve, lvl)
			continue
		}
		if !exhaustive {
			start = max(start, sc.start(need))
		}
		var passed int
		var err error
		if start, passed, err = sc.first(start, end, need, rate, exhaustive); err != nil {
			return err
		}
		if start < end {
			q, _, err := sc.surest(start, passed, rate, exhaustive)
			if err != nil {
				return err
			}
			pt, kc := sc.pts[sc.idx[q]], sc.keys[sc.idx[q]]
			lvl.Found, lvl.Prompt, lvl.Token, lvl.Objective = true, pt[0], pt[1], kc.obj
		} else if c < conf && plan.Found {
			// conf's plan, which passes at least need scenarios.
			start = at
			lvl.Found, lvl.Prompt, lvl.Token, lvl.Objective = true, plan.Prompt, plan.Token, plan.Objective
		}
		curve = append(curve, lvl)
	}
	rd.Certainty = curve
	return nil
}

// globalRobustRound is how many designs' next points globalRobust checks
// at once: a constant, so that the points checked, and the simulations
// counted, do not depend on the parallelism.
const globalRobustRound = 2

// globalRobust finds the design of the best robust plan at need k: every
// design's points (from its k-th scenario lower bound) in one global
// order of the key (ties: the design's index), the cheapest heads of
// globalRobustRound designs checked at once, until a plan passes and
// every point that would beat it has failed. It sets the winner's plan at
// confidence conf in designs (the surest of the first passing point's
// objective) and returns its index (−1: none) with its scan and that
// first point's position there.
func globalRobust(designs []RobustDesign, colOf func(int) ([]*designSearch, []key), scs []scenario, rate float64, k int, conf float64) (int, designPlan, error) {
	type cursor struct {
		i    int
		scan *designScan
		pos  int
	}
	var heads []*cursor
	dscans := make([]*designScan, len(designs))
	for i := range designs {
		col, low := colOf(i)
		sc, err := newDesignScan(col, scs, low)
		if err != nil {
			return -1, designPlan{}, err
		}
		dscans[i] = sc
		c := &cursor{i: i, scan: sc, pos: sc.start(k)}
		if c.pos < len(sc.idx) {
			heads = append(heads, c)
		}
	}
	keyAt := func(c *cursor) key { return c.scan.keys[c.scan.idx[c.pos]] }
	before := func(a, b *cursor) bool {
		ka, kb := keyAt(a), keyAt(b)
		if less(ka, kb) {
			return true
		}
		if less(kb, ka) {
			return false
		}
		return a.i < b.i
	}
	win, winPos, winPassed := -1, 0, 0
	var winKey key
	for len(heads) > 0 {
		sort.SliceStable(heads, func(a, b int) bool { return before(heads[a], heads[b]) })
		round := heads[:min(globalRobustRound, len(heads))]
		if win >= 0 {
			// Only points that would beat the plan found are left to check.
			m := 0
			for m < len(round) && less(keyAt(round[m]), winKey) {
				m++
			}
			if m == 0 {
				break
			}
			round = round[:m]
		}
		passed := make([]int, len(round))
		g := errgroup.Group{}
		for j, c := range round {
			g.Go(func() error {
				pt := c.scan.pts[c.scan.idx[c.pos]]
				var err error
				passed[j], err = passes(c.scan.col, c.scan.order, c.scan.optKey, pt, keyAt(c), rate, k, false)
				return err
			})
		}
		if err := g.Wait(); err != nil {
			return -1, designPlan{}, err
		}
		for j, c := range round {
			if passed[j] >= k {
				kc := keyAt(c)
				if win < 0 || less(kc, winKey) || !less(winKey, kc) && c.i < win {
					win, winPos, winPassed, winKey = c.i, c.pos, passed[j], kc
				}
			}
			c.pos++
		}
		next := heads[:0]
		for _, c := range heads {
			if c.pos < len(c.scan.idx) && c.i != win {
				next = append(next, c)
			}
		}
		heads = next
	}
	if win < 0 {
		return -1, designPlan{}, nil
	}
	sc := dscans[win]
	if err := sc.setPlan(&designs[win], winPos, winPassed, rate, conf, false); err != nil {
		return -1, designPlan{}, err
	}
	return win, designPlan{scan: sc, at: winPos}, nil
}

// designScan is one design's points in the goal's order and its
// scenarios from the most severe, for the robust scans.
type designScan struct {
	col    []*designSearch
	pts    [][2]int
	keys   []key
	idx    []int // pts in key order
	order  []int // the scenarios, from the most severe
	optKey []key
}

func newDesignScan(col []*designSearch, scs []scenario, optKey []key) (*designScan, error) {
	d0 := col[0]
	sc := &designScan{col: col, optKey: optKey}
	sc.pts = d0.regionPoints(d0.region())
	sc.keys = make([]key, len(sc.pts))
	keyOf := d0.keyFunc()
	for i, pt := range sc.pts {
		sc.keys[i] = keyOf(pt[0], pt[1])
	}
	sc.idx = make([]int, len(sc.pts))
	for i := range sc.idx {
		sc.idx[i] = i
	}
	sort.SliceStable(sc.idx, func(a, b int) bool { return less(sc.keys[sc.idx[a]], sc.keys[sc.idx[b]]) })
	cl, err := d0.cluster(d0.design.MinCounts())
	if err != nil {
		return nil, err
	}
	n := len(col)
	sev := make([]float64, n)
	sc.order = make([]int, n)
	for s := range n {
		sc.order[s] = s
		sev[s] = scs[s].severity(cl) // (the types and provenances are every scenario's)
	}
	// From the most severe scenario: a point fails there the likeliest,
	// and the soonest (a failing simulation stops once its failure is
	// certain). (Asking first the scenarios whose optimum is the closest
	// to the point finds its failures in fewer simulations but later in
	// each: the GPU-pair robust search takes 15% more CPU time.)
	sort.SliceStable(sc.order, func(a, b int) bool { return sev[sc.order[a]] > sev[sc.order[b]] })
	return sc, nil
}

// start is the first point, in key order, that could pass need
// scenarios: none beats the need-th smallest of the scenarios' keys.
func (sc *designScan) start(need int) int {
	ok := append([]key(nil), sc.optKey...)
	sort.Slice(ok, func(a, b int) bool { return less(ok[a], ok[b]) })
	pos := 0
	for pos < len(sc.idx) && less(sc.keys[sc.idx[pos]], ok[need-1]) {
		pos++
	}
	return pos
}

// passes counts the scenarios in which point pt (of key kc) meets every
// SLO, stopping once it cannot reach need (or, pruned, once it has, and
// then reporting need): the scenarios whose optimum beats kc fail without
// a simulation, the verdicts known without one (memoized: knownVerdict)
// count next, and the other scenarios are simulated in order.
func passes(col []*designSearch, order []int, optKey []key, pt [2]int, kc key, rate float64, need int, exhaustive bool) (int, error) {
	n := len(col)
	eligible := n
	if !exhaustive {
		eligible = 0
		for _, ok := range optKey {
			if !less(kc, ok) {
				eligible++
			}
		}
		if eligible < need {
			return 0, nil
		}
	}
	passed, failed := 0, 0
	if !exhaustive {
		var unknown []int // the scenarios whose verdict needs a simulation
		for _, s := range order {
			if less(kc, optKey[s]) {
				continue // beats the scenario's optimum: fails there
			}
			switch known, ok := col[s].knownVerdict(pt[0], pt[1], rate); {
			case !known:
				unknown = append(unknown, s)
			case ok:
				passed++
			default:
				failed++
				if failed > eligible-need {
					return passed, nil
				}
			}
		}
		if passed >= need {
			return need, nil
		}
		if failed > eligible-need {
			return passed, nil
		}
		order = unknown
	}
	// What is left needs a simulation: the verdicts known without one
	// were counted above (pruned), and no other scan touches a design's
	// scenario searches while this one runs.
	for _, s := range order {
		ok, err := col[s].simulated(pt[0], pt[1], rate) // (eager: checked over the longer run too)
		if err != nil {
			return 0, err
		}
		if ok {
			passed++
			if !exhaustive && passed >= need {
				return passed, nil
			}
		} else {
			failed++
			if !exhaustive && failed > eligible-need {
				return passed, nil
			}
		}
	}
	return passed, nil
}

// knownVerdict is the robust scan's verdict of a point when it needs no
// simulation (known): the point's own, when it was simulated (or refused
// by the analytic bound), else a failure when a point with at least its
// machines failed. A pass is never inferred: where feasibility is not
// monotone (a point that fails above one that passes), a pass inferred
// from a neighbour can be wrong, and the robust plan would claim
// scenarios its own simulation fails (Splitwise-AA's plan at 70 req/s,
// 58P/16T, was said to meet the SLOs in 29 of 32 scenarios and met them
// in 28). An inferred failure can only make a plan dearer than it need
// be, never claim what it does not meet. In an eager search (a scenario
// with a verification) a point's own pass is known only once it held
// over the longer run too, as infer reads it.
func (d *designSearch) knownVerdict(prompt, token int, rate float64) (known, ok bool) {
	d.mu.Lock()
	pt, sim := d.memo[pointKey{prompt, token, rate}]
	d.mu.Unlock()
	if sim && (!pt.Feasible || !d.eager || pt.Verified != nil) {
		return true, pt.Feasible
	}
	return d.failsAbove(prompt, token, rate), false
}

// failsAbove reports a point simulated failing at rate or lower with at
// least (prompt, token) machines of each kind.
func (d *designSearch) failsAbove(prompt, token int, rate float64) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	for _, p := range d.points {
		if p.failsFor(prompt, token, rate) {
			return true
		}
	}
	return false
}

// keyFunc is d.key without resolving the design by name at every point:
// the objective of a copy of one cluster with the counts set, the same
// arithmetic.
func (d *designSearch) keyFunc() func(prompt, token int) key {
	t0 := 1
	if d.design.IsBaseline() {
		t0 = 0
	}
	tmpl := d.costOf(1, t0)
	return func(prompt, token int) key {
		cl := tmpl
		cl.Prompt, cl.Token = prompt, token
		return key{d.s.objective(cl), prompt + token, prompt}
	}
}
