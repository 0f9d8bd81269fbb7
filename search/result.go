package search

import (
	"fmt"
	"splitplan/evaluator/perf"

	"splitplan/slo"
)

// Point is one simulated (or analytically pruned) cluster at one rate.
type Point struct {
	// Design is the design's label (with its policy, if any).
	Design string
	// Prompt and Token are the machine counts (a baseline: Prompt
	// machines in all, Token 0).
	Prompt, Token int
	// RateRPS is the rate simulated.
	RateRPS float64
	// CostUSDPerH and PowerKW are the cluster's cost and power.
	CostUSDPerH, PowerKW float64
	// Requests is the number of requests simulated.
	Requests int
	// Simulated reports whether it was simulated; Pruned whether the
	// analytic bound rejected it instead.
	Simulated, Pruned bool
	// Feasible reports whether every SLO held and the run drained.
	Feasible bool
	// Verdict is the SLO check (nil when pruned, or for the batch goal).
	Verdict *slo.Verdict
	// Note says why the point failed when it is not an SLO figure.
	Note string
	// Stopped reports that its simulation stopped once its failure of a
	// TTFT, TBT or E2E target was certain (Problem.StopFailing): Feasible is
	// false, Verdict nil, the energy unknown and Note says which target
	// failed.
	Stopped bool
	// StopLimit names the target a Stopped point certainly failed ("P90
	// TBT"), and StopS the simulated time by which that was certain.
	StopLimit string
	StopS     float64
	// EnergyKnown reports that the simulation measured energy; AverageKW
	// is then the GPUs' steady draw (evaluator.Result.AverageKW: idle
	// through the arrivals' window plus the work) and JPerOutputToken
	// their energy per output token (means over the workload's replicas
	// simulated).
	EnergyKnown                bool
	AverageKW, JPerOutputToken float64
	// OwnershipUSDPerH is the cost of owning the cluster an hour: its
	// machines' fixed cost (Problem.Ownership) plus the electricity of
	// AverageKW (the fixed cost alone when the energy is unknown).
	OwnershipUSDPerH float64
	// Verified is the point's check over a longer run (Problem.VerifyS),
	// nil when it was not checked. A point that failed it is not
	// Feasible, though its Verdict (of the search's trace) passes.
	Verified *Verification
}

// KWhPerDay is the GPUs' energy a day at the point's average draw
// (0 when unknown).
func (p Point) KWhPerDay() float64 { return p.AverageKW * 24 }

// Machines is the number of machines.
func (p Point) Machines() int { return p.Prompt + p.Token }

// Label names the point, e.g. "Splitwise-HH 35P/5T at 70 req/s".
func (p Point) Label() string {
	if p.Token == 0 {
		return fmt.Sprintf("%s ×%d at %.4g req/s", p.Design, p.Prompt, p.RateRPS)
	}
	return fmt.Sprintf("%s %dP/%dT at %.4g req/s", p.Design, p.Prompt, p.Token, p.RateRPS)
}

// DesignResult is the outcome of one design's search.
type DesignResult struct {
	// Design is the design's label; Baseline whether it is co-located.
	Design   string
	Baseline bool
	// PromptType and TokenType name the pools' machine types (the same
	// for a baseline).
	PromptType, TokenType string
	// Found reports whether some point met the goal's constraints.
	Found bool
	// Best is the optimum (valid when Found), simulated at its rate: the
	// target rate, or its capacity for the throughput and batch goals.
	Best Point
	// CapacityRPS is the highest rate at which Best meets every SLO
	// (throughput and batch goals; the target rate otherwise).
	CapacityRPS float64
	// Closest is, when nothing was found, the simulated point that failed
	// closest to passing (the largest binding slack).
	Closest *Point
	// GridPoints is the size of the design space; Evaluated the distinct
	// (prompt, token) points simulated at least once; Simulations the
	// simulations run; Pruned the points the analytic bound rejected.
	GridPoints, Evaluated, Simulations, Pruned int
	// Stopped counts the simulations (of Simulations) stopped once their
	// failure of a TTFT, TBT or E2E target was certain (Problem.StopFailing).
	Stopped int
	// Provenance says where the design's performance models come from
	// (profiled, calibrated or spec-only, with the source and its error);
	// PromptProvenance and TokenProvenance per pool (the same for a
	// baseline).
	Provenance                        string
	PromptProvenance, TokenProvenance perf.Provenance
	// MaxMachines is the bound on each pool the design was searched
	// within (Problem.MaxMachines, or more with GrowToBudget).
	MaxMachines int
	// BoundedBy is "max-machines" when the optimum (or, with none, the
	// closest point) has a pool at MaxMachines: a larger bound might
	// change the answer. It is "" otherwise.
	BoundedBy string
	// FailsIdle, when nothing was found and the closest point had a pool
	// at the bound, names the SLO (e.g. "P50 TBT") that point's cluster
	// still fails at a tenth of its rate (IdleLoadFraction), its machines
	// nearly idle as ten times as many would leave them: no bound on the
	// machines helps, and BoundedBy is then "".
	FailsIdle string
	// Unverified are the points that met every SLO on the search's trace
	// and were in turn the design's optimum, but failed the verification
	// over a longer run (Problem.VerifyS), in key order; Verifications
	// counts the verification's simulations (apart from Simulations).
	Unverified    []Point
	Verifications int
	// BoundPruned reports a design not searched (or whose search is not
	// reported): its analytic Bound cannot beat the winner — the least
	// objective that could reach the rate (cost and power goals, $/h or
	// kW), or the most capacity any of its clusters could have
	// (throughput goal, req/s). See Problem.PruneDesigns.
	BoundPruned bool
	Bound       float64
}

// Result is the outcome of a search.
type Result struct {
	// Goal, RateRPS and the budgets restate the problem.
	Goal                             Goal
	RateRPS                          float64
	PowerBudgetKW, CostBudgetUSDPerH float64
	// PowerBudgetDrawn reports that PowerBudgetKW bounded the average
	// drawn power, not the provisioned power.
	PowerBudgetDrawn bool
	// Designs holds one result per design, in the problem's order.
	Designs []DesignResult
	// Points holds every simulated point, design by design.
	Points []Point
	// Winner is the index in Designs of the best design, or −1.
	Winner int
	// Partial reports an interrupted search: Designs (and Points) hold
	// only the designs it finished, each complete; Unfinished names the
	// others.
	Partial    bool
	Unfinished []string
	// DesignsPruned counts the designs the analytic bound excluded.
	DesignsPruned int
	// VerifyS is the length of the verification the optima passed
	// (Problem.VerifyS; 0 when none ran), VerifyWinnerOnly whether only
	// the winner's was checked.
	VerifyS          float64
	VerifyWinnerOnly bool
	// starts are the designs' frontier starts (hint, one per design of
	// the problem; nil for a partial result), from which Sensitivity's
	// searches gallop.
	starts []hint
}
