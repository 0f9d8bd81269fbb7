package search

import (
	"context"
	"fmt"
	"math"
	"sort"
	"strings"
	"sync"
	"sync/atomic"

	"splitplan/costpower"
	"splitplan/evaluator"
	"splitplan/evaluator/perf"
	"splitplan/slo"
)

// DesignSpec is one design to search, with its batching policy.
type DesignSpec struct {
	// Design is the catalog name of the design.
	Design string
	// Policy is the batching policy of baseline and mixed-pool machines
	// ("" for the default).
	Policy string
}

// Label is the design's name as reports show it, e.g. "Baseline-H100+sarathi".
func (d DesignSpec) Label() string {
	if d.Policy == "" {
		return d.Design
	}
	return d.Design + "+" + d.Policy
}

// Problem is one search: the designs, the workload, the SLOs and the goal.
type Problem struct {
	// Catalog and Perf hold the machine types, models, designs and
	// performance models.
	Catalog *costpower.Catalog
	Perf    *perf.Table
	// Model is the name of the LLM served.
	Model string
	// Designs are searched in this order.
	Designs []DesignSpec
	// Workload gives the requests at any rate.
	Workload *Workload
	// Seeds, when above 1, replicates the workload with seeds
	// Workload.Seed, Workload.Seed+1, ...: a point is feasible only if
	// every replica meets the SLOs (default 1).
	Seeds int
	// Options are the simulator's options (Policy is set per design).
	Options evaluator.Options
	// SLO are the targets; Reference is the machine type of the slowdown
	// reference (default DGX-A100).
	SLO       slo.Spec
	Reference string
	// Goal is one of Goals().
	Goal Goal
	// RateRPS is the target rate of GoalCost and GoalPower.
	RateRPS float64
	// PowerBudgetKW or CostBudgetUSDPerH bounds GoalThroughput and
	// GoalBatch (exactly one is set).
	PowerBudgetKW, CostBudgetUSDPerH float64
	// MaxMachines bounds each pool (and a baseline's machines).
	MaxMachines int
	// Precision is the relative precision of capacities (default 0.025):
	// rates are searched on the grid (1 + Precision)^k req/s.
	Precision float64
	// Parallel bounds the simulations run at once (default 1).
	Parallel int
	// Exhaustive evaluates every point of every design space.
	Exhaustive bool
	// Progress, when set, is called after every simulation.
	Progress func(Progress)
}

// Progress is how far a search has come.
type Progress struct {
	// Simulations run and points pruned so far, over all designs.
	Simulations, Pruned int64
	// Design and Best describe the latest improvement.
	Design, Best string
}

// search is one run of a Problem.
type search struct {
	p       *Problem
	ctx     context.Context
	sem     chan struct{}
	refPerf perf.IterationModel
	ref     slo.Reference
	// workloads are the replicas of the workload, one per seed.
	workloads []*Workload
	meanP     float64 // mean prompt tokens
	meanD     float64 // mean decode tokens (output − 1)
	sims      atomic.Int64
	pruned    atomic.Int64
	mu        sync.Mutex
	last      Progress
}

func (p *Problem) validate() error {
	switch {
	case p.Goal.NeedsRate():
		if !(p.RateRPS > 0) || math.IsInf(p.RateRPS, 0) {
			return fmt.Errorf("search: goal %s needs a positive rate, got %v", p.Goal, p.RateRPS)
		}
	case p.Goal.NeedsBudget():
		if (p.PowerBudgetKW > 0) == (p.CostBudgetUSDPerH > 0) {
			return fmt.Errorf("search: goal %s needs exactly one positive budget (power or cost)", p.Goal)
		}
		if math.IsInf(p.PowerBudgetKW, 0) || math.IsInf(p.CostBudgetUSDPerH, 0) {
			return fmt.Errorf("search: the budget must be finite")
		}
	default:
		return fmt.Errorf("search: unknown goal %v (want %s)", p.Goal, strings.Join(GoalNames(), ", "))
	}
	if len(p.Designs) == 0 {
		return fmt.Errorf("search: no designs")
	}
	if p.MaxMachines < 1 {
		return fmt.Errorf("search: max machines must be at least 1, got %d", p.MaxMachines)
	}
	if p.Precision < 0 || p.Precision > 1 || math.IsNaN(p.Precision) {
		return fmt.Errorf("search: precision must be in (0, 1], got %v", p.Precision)
	}
	if p.Goal.checksLatency() {
		if err := p.SLO.Validate(); err != nil {
			return err
		}
	}
	return nil
}

// objective is the quantity a point minimizes (GoalCost, GoalPower) or the
// budget's unit (GoalThroughput, GoalBatch).
func (s *search) objective(cl costpower.Cluster) float64 {
	switch {
	case s.p.Goal == GoalPower, s.p.PowerBudgetKW > 0:
		return cl.PowerKW()
	}
	return cl.CostUSDPerH()
}

func (s *search) budget() float64 {
	if s.p.PowerBudgetKW > 0 {
		return s.p.PowerBudgetKW
	}
	return s.p.CostBudgetUSDPerH
}

// rate is the k-th rate of the grid.
func (s *search) rate(k int) float64 { return math.Pow(1+s.p.Precision, float64(k)) }

// rateIndex is the largest k with rate(k) ≤ r (to a tiny tolerance).
func (s *search) rateIndex(r float64) int {
	return int(math.Floor(math.Log(r)/math.Log1p(s.p.Precision) + 1e-9))
}

// upperBoundRPS is a safe analytic bound on the rate cl can sustain: every
// prompt token and every decode token needs machine time at the best rate
// any machine type of the cluster achieves, and the cluster has
// Machines() machines' worth of time per second (borrowing into the
// mixed pool cannot beat that).
func (s *search) upperBoundRPS(cl evaluator.Cluster) float64 {
	opt := s.p.Options
	def := evaluator.DefaultOptions()
	if opt.MaxBatchRequests == 0 {
		opt.MaxBatchRequests = def.MaxBatchRequests
	}
	if opt.MaxBatchTokens == 0 {
		opt.MaxBatchTokens = def.MaxBatchTokens
	}
	promptTPS := math.Max(maxPromptTPS(cl.PromptPerf, opt), maxPromptTPS(cl.TokenPerf, opt))
	kv := cl.Model.KVBytesPerToken(s.p.Options.Compat)
	perReq := (s.meanP + s.meanD + 1) * float64(kv)
	decodeTPS := math.Max(maxDecodeTPS(cl.PromptPerf, cl.Model.KVCapacityBytes(cl.PromptType), perReq, opt),
		maxDecodeTPS(cl.TokenPerf, cl.Model.KVCapacityBytes(cl.TokenType), perReq, opt))
	secondsPerReq := s.meanP/promptTPS + s.meanD/decodeTPS
	if !(secondsPerReq > 0) {
		return math.Inf(1)
	}
	return float64(cl.Machines()) / secondsPerReq
}

// maxPromptTPS is the most prompt tokens per second an iteration of this
// performance model can process, over iteration sizes up to 64k tokens.
func maxPromptTPS(m perf.IterationModel, opt evaluator.Options) float64 {
	best := 0.0
	for x := 1; x <= 1<<16; x *= 2 {
		if t, _ := m.PromptTime(x); t > 0 {
			best = math.Max(best, float64(x)/t)
		}
	}
	// Also the largest batch, which the doubling may skip.
	if t, _ := m.PromptTime(opt.MaxBatchTokens); t > 0 {
		best = math.Max(best, float64(opt.MaxBatchTokens)/t)
	}
	return best
}

// maxDecodeTPS is the most decode tokens per second a machine achieves at
// any batch that fits its KV-cache (at least one request) and the batch
// cap. Contexts are taken as short as possible, which only helps the
// bound.
func maxDecodeTPS(m perf.IterationModel, capBytes int64, perReqBytes float64, opt evaluator.Options) float64 {
	maxB := opt.MaxBatchRequests
	if perReqBytes > 0 {
		if fit := int(float64(capBytes) / perReqBytes * 4); fit < maxB {
			maxB = max(fit, 1) // ×4: requests smaller than the mean fit more
		}
	}
	best := 0.0
	for b := 1; b <= maxB; b++ {
		if t, _ := m.DecodeTime(b, int64(b)); t > 0 {
			best = math.Max(best, float64(b)/t)
		}
	}
	return best
}

// pointKey identifies a simulation.
type pointKey struct {
	prompt, token int
	rate          float64
}

// designSearch is the search of one design.
type designSearch struct {
	s      *search
	spec   DesignSpec
	design costpower.Design
	mu     sync.Mutex
	memo   map[pointKey]*Point
	points []*Point
	sims   int
	pruned int
	err    error
}

// cluster resolves the design at (prompt, token), with its policy.
func (d *designSearch) cluster(prompt, token int) (evaluator.Cluster, error) {
	cl, err := evaluator.NewCluster(d.s.p.Catalog, d.s.p.Perf, d.design.Name, prompt, token, d.s.p.Model, d.s.p.Options.Compat)
	cl.Policy = d.spec.Policy
	return cl, err
}

// costOf returns the point's cluster (machine types resolved) for its
// cost and power, without performance models.
func (d *designSearch) costOf(prompt, token int) costpower.Cluster {
	cl, err := d.s.p.Catalog.NewCluster(d.design.Name, prompt, token)
	if err != nil {
		panic(err) // the counts come from the design space, which is valid
	}
	return cl
}

// feasible simulates (prompt, token) at rate, memoized, and reports
// whether every SLO holds.
//
// Outside exhaustive mode it first infers the answer, when it can, from
// the points already simulated: feasibility only grows with machines and
// falls with the rate, so a failure of a point with at least as many of
// both machines at a rate no higher, or a success of one with at most as
// many at a rate no lower, settles it without a simulation.
func (d *designSearch) feasible(prompt, token int, rate float64) (bool, error) {
	if !d.s.p.Exhaustive {
		if known, ok := d.infer(prompt, token, rate); known {
			return ok, nil
		}
	}
	pt, err := d.eval(prompt, token, rate)
	if err != nil {
		return false, err
	}
	return pt.Feasible, nil
}

func (d *designSearch) eval(prompt, token int, rate float64) (*Point, error) {
	return d.evalBound(prompt, token, rate, true)
}

// evalBound is eval; without bound it simulates even a point the
// analytic bound rejects (to explain why nothing was found).
func (d *designSearch) evalBound(prompt, token int, rate float64, bound bool) (*Point, error) {
	key := pointKey{prompt, token, rate}
	d.mu.Lock()
	if pt, ok := d.memo[key]; ok && (bound || pt.Simulated) {
		d.mu.Unlock()
		return pt, nil
	}
	d.mu.Unlock()
	s := d.s
	cl, err := d.cluster(prompt, token)
	if err != nil {
		return nil, err
	}
	pt := &Point{Design: d.spec.Label(), Prompt: prompt, Token: token, RateRPS: rate,
		CostUSDPerH: cl.CostUSDPerH(), PowerKW: cl.PowerKW()}
	if ub := s.upperBoundRPS(cl); bound && rate > ub {
		pt.Pruned = true
		pt.Note = fmt.Sprintf("analytic bound: at most %.1f req/s", ub)
		d.mu.Lock()
		d.memo[key] = pt
		d.pruned++
		d.mu.Unlock()
		s.pruned.Add(1)
		s.report(d.spec.Label(), "")
		return pt, nil
	}
	opt := s.p.Options
	// Every replica of the workload must pass; the first that fails
	// settles it (and its verdict is reported), else the replica closest
	// to failing is.
	sims := 0
	for i, wl := range s.workloads {
		reqs, err := wl.At(rate)
		if err != nil {
			return nil, err
		}
		if err := s.acquire(); err != nil {
			return nil, err
		}
		res, err := evaluator.Evaluate(cl, reqs, opt)
		s.release()
		if err != nil {
			return nil, fmt.Errorf("%s: %w", pt.Label(), err)
		}
		sims++
		pt.Requests += len(reqs)
		ok, v, note := s.verdict(res)
		worse := i == 0 || !ok ||
			(v != nil && pt.Verdict != nil && v.BindingFigure().Slack < pt.Verdict.BindingFigure().Slack)
		if worse {
			pt.Feasible, pt.Verdict, pt.Note = ok, v, note
			if len(s.workloads) > 1 && !ok {
				pt.Note = strings.TrimSpace(fmt.Sprintf("seed %d: %s", wl.Seed, note))
			}
		}
		if !ok {
			break
		}
	}
	pt.Simulated = true
	d.mu.Lock()
	d.memo[key] = pt
	d.points = append(d.points, pt)
	d.sims += sims
	d.mu.Unlock()
	s.sims.Add(int64(sims))
	s.report(d.spec.Label(), "")
	return pt, nil
}

// verdict checks one simulation against the goal's SLOs (for the batch
// goal, only that it drained).
func (s *search) verdict(res *evaluator.Result) (ok bool, v *slo.Verdict, note string) {
	if !s.p.Goal.checksLatency() {
		ok, note := slo.Drained(res, s.p.SLO.DrainRiseS)
		return ok, nil, note
	}
	chk := s.p.SLO.Check(res, s.ref)
	if !chk.Drained {
		note = chk.DrainNote
	}
	return chk.Pass, &chk, note
}

func (s *search) acquire() error {
	select {
	case s.sem <- struct{}{}:
		return nil
	case <-s.ctx.Done():
		return s.ctx.Err()
	}
}

func (s *search) release() { <-s.sem }

func (s *search) report(design, best string) {
	if s.p.Progress == nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if best != "" {
		s.last.Design, s.last.Best = design, best
	}
	s.last.Simulations, s.last.Pruned = s.sims.Load(), s.pruned.Load()
	s.p.Progress(s.last)
}

// infer answers feasibility from the simulated points by dominance.
func (d *designSearch) infer(prompt, token int, rate float64) (known, feasible bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	for _, p := range d.points {
		switch {
		case !p.Feasible && p.Prompt >= prompt && p.Token >= token && p.RateRPS <= rate:
			return true, false
		case p.Feasible && p.Prompt <= prompt && p.Token <= token && p.RateRPS >= rate:
			return true, true
		}
	}
	return false, false
}

// sortedPoints returns the design's simulated points in a fixed order.
func (d *designSearch) sortedPoints() []Point {
	out := make([]Point, 0, len(d.points))
	for _, p := range d.points {
		out = append(out, *p)
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.Prompt != b.Prompt {
			return a.Prompt < b.Prompt
		}
		if a.Token != b.Token {
			return a.Token < b.Token
		}
		return a.RateRPS < b.RateRPS
	})
	return out
}
