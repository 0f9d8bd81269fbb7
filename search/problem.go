package search

import (
	"context"
	"fmt"
	"math"
	"splitplan/resolve"
	"strings"
	"sync"
	"sync/atomic"

	"splitplan/costpower"
	"splitplan/evaluator"
	"splitplan/slo"
)

// DesignSpec is one design to search, with its batching policy.
type DesignSpec struct {
	// Design is the design as the catalog resolved it once, at the edge
	// (costpower.Catalog.Design or ResolveDesign): the search does not
	// look it up again by name.
	Design costpower.Design
	// Policy is the batching policy of baseline and mixed-pool machines
	// (the zero value: mixed batching).
	Policy evaluator.Policy
}

// Label is the design's name as reports show it, e.g. "Baseline-H100+sarathi".
func (d DesignSpec) Label() string {
	if d.Policy.IsDefault() {
		return d.Design.Name
	}
	return d.Design.Name + "+" + d.Policy.String()
}

// Problem is one search: the designs, the workload, the SLOs and the goal.
type Problem struct {
	// Catalog and Perf hold the machine types, models, designs and
	// performance models.
	Catalog *costpower.Catalog
	Perf    resolve.Source
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
	// Options.Energy measures every simulated point's energy (for the
	// points CSV); without it only the energy goals, the drawn power
	// budget and the reported points (each design's optimum or closest
	// point) have theirs measured.
	Options evaluator.Options
	// SLO are the targets; Reference is the machine type of the slowdown
	// reference (default DGX-A100): a catalog type or one at a tensor
	// parallelism (costpower.Catalog.ResolveMachine, e.g. "A100·tp1").
	SLO       slo.Spec
	Reference string
	// Goal is one of Goals().
	Goal Goal
	// RateRPS is the target rate of GoalCost and GoalPower.
	RateRPS float64
	// PowerBudgetKW or CostBudgetUSDPerH bounds GoalThroughput and
	// GoalBatch (exactly one is set).
	PowerBudgetKW, CostBudgetUSDPerH float64
	// PowerBudgetDrawn reads PowerBudgetKW as the GPUs' average drawn
	// power (GoalThroughput only): the answer is the highest rate at which
	// a design's least-energy cluster meeting every SLO draws at most the
	// budget on average (see maxCapacityDrawn).
	PowerBudgetDrawn bool
	// Ownership prices the cost of ownership (GoalTCO, and every point's
	// OwnershipUSDPerH); the zero value means costpower.DefaultOwnership.
	Ownership costpower.Ownership
	// MaxMachines bounds each pool (and a baseline's machines).
	MaxMachines int
	// GrowToBudget raises, for GoalThroughput and GoalBatch, each design's
	// bound to what the budget can buy in one pool when that is more than
	// MaxMachines (up to MaxGrownMachines): the budget already bounds the
	// count, and a smaller bound would change the answer.
	GrowToBudget bool
	// Precision is the relative precision of capacities (default
	// DefaultPrecision):
	// rates are searched on the grid (1 + Precision)^k req/s.
	Precision float64
	// Parallel bounds the simulations run at once (default 1).
	Parallel int
	// PruneDesigns bounds whole designs analytically before searching
	// them and leaves out those that cannot beat the best design (for a
	// large generated space; not for the batch goal, nor with
	// Exhaustive). A design left out is reported with its bound.
	PruneDesigns bool
	// Exhaustive evaluates every point of every design space.
	Exhaustive bool
	// DropPoints says the caller reads only the points a result reports
	// (each design's optimum or closest point), not Result.Points: an
	// exhaustive search for a rate goal then keeps, per design, only its
	// best and closest points and the keys of its stopped simulations
	// instead of every point, so that its memory does not grow with the
	// design spaces (Result.Points stays empty). Other searches keep
	// their points (they simulate a small part of the spaces).
	DropPoints bool
	// MaxKeptPoints, when positive, bounds the points an exhaustive
	// search of a rate goal that keeps its points (not DropPoints) may
	// simulate: a larger design space is refused before any simulation
	// with a *KeptPointsError.
	MaxKeptPoints int
	// StopFailing stops each simulation as soon as its failure of a TTFT,
	// TBT or E2E target is certain (evaluator.Stop), instead of running it to
	// its end: the verdicts, and so the optima, are the same, and a
	// search spends most of its time in clusters that fail. The points
	// stopped have no SLO figures (Point.Stopped): set it only when the
	// caller reads the figures of the points that are reported (the
	// optima and, when nothing is found, the closest point, whose
	// simulations are completed), not of every point (Result.Points):
	// a stopped point has no energy either. The compat scheduler always
	// runs to the end.
	StopFailing bool
	// VerifyS, when longer than the workload's duration, is the length
	// of the check every optimum must also pass: its cluster simulated
	// again at its rate on the same traffic continued to VerifyS seconds
	// (the same seed, so the search's trace is its first part), to its
	// end. A cluster can meet every SLO over a few minutes and not over
	// an hour: near its capacity a Splitwise design's token pool can
	// tip into borrowing prompt machines for good (docs/model.md). An
	// optimum that fails is no longer feasible, and its design's search
	// goes on past it (DesignResult.Unverified lists such points); the
	// search's own figures stay those of its trace. 0 checks nothing.
	VerifyS float64
	// VerifyWinnerOnly verifies only what decides the winner: the best
	// design's optimum, again after it moves, until a verified optimum
	// is the best (Sensitivity, which reports the best plan alone). The
	// other designs' optima are then unverified (Point.Verified nil).
	VerifyWinnerOnly bool
	// Notes are said to the reader with the result (e.g. designs left
	// out because no performance model covers them).
	Notes []string
	// Progress, when set, is called after every simulation.
	Progress func(Progress)
}

// Progress is how far a search has come.
type Progress struct {
	// Simulations run and points pruned so far, over all designs.
	Simulations, Pruned int64
	// Design and Best describe the latest improvement.
	Design, Best string
	// Finished, in the one report made when a design's search ends, is
	// that design's label ("" in every other report).
	Finished string
}

// search is one run of a Problem.
type search struct {
	p   *Problem
	ctx context.Context
	sem chan struct{}
	ref slo.Reference
	// workloads are the replicas of the workload, one per seed.
	workloads []*Workload
	meanP     float64 // mean prompt tokens
	meanD     float64 // mean decode tokens (output − 1)
	sims      atomic.Int64
	pruned    atomic.Int64
	mu        sync.Mutex
	last      Progress
	// energy reports that every simulation measures the energy: the
	// goal or the budget weighs it, or the caller asked for it
	// (Problem.Options.Energy: every point's energy is read). Otherwise
	// only the points the result reports get it (fillEnergy).
	energy bool
	// verify are the workload replicas continued to VerifyS (nil: no
	// verification); verifications counts their simulations.
	verify         []*Workload
	verifyStoppers []*slo.Stopper
	verifications  atomic.Int64
	// stoppers give the Stop limits of each workload replica's requests
	// (Problem.StopFailing).
	stoppers []*slo.Stopper
	// readsITL reports that the verdict reads the ITL (an SLO target on
	// it): without one, the simulations leave it out (Options.NoITL).
	readsITL bool
	// latencies holds *[]evaluator.RequestLatency: the room of results
	// whose verdicts are read, for the next simulations (replicas); a
	// robust search's scenario searches share the nominal search's.
	latencies *sync.Pool
	// adjust, when set, changes every design's resolved cluster before
	// any simulation (a robust search's scenario scales its performance
	// models, robust.go).
	adjust func(resolve.Cluster) resolve.Cluster
}

// Validate checks the problem as Run does before it searches, so that a
// caller can refuse a problem without running it (a study checks its jobs
// before any runs).
func (p *Problem) Validate() error {
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
	if p.VerifyS < 0 || math.IsNaN(p.VerifyS) || math.IsInf(p.VerifyS, 0) {
		return fmt.Errorf("search: the verification's length must be a finite number of seconds, 0 for none, got %v", p.VerifyS)
	}
	if p.Precision < 0 || p.Precision > 1 || math.IsNaN(p.Precision) {
		return fmt.Errorf("search: precision must be in (0, 1], got %v", p.Precision)
	}
	if p.PowerBudgetDrawn && (p.Goal != GoalThroughput || !(p.PowerBudgetKW > 0)) {
		return fmt.Errorf("search: a drawn power budget goes with goal throughput and a power budget")
	}
	if err := p.Ownership.Validate(); err != nil {
		return fmt.Errorf("search: %w", err)
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
