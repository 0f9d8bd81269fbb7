package search

import (
	"fmt"
	"splitplan/internal/enum"
	"strings"
)

// Goal is what a search optimizes. The zero value is no goal (Run rejects
// it). Adding a goal means a constant here, its name, its answers to the
// methods below, and its stage in Run.
type Goal int

// Goals.
const (
	// GoalCost: the cheapest point that meets every SLO at RateRPS.
	GoalCost Goal = iota + 1
	// GoalPower: the point of least provisioned power that meets every
	// SLO at RateRPS.
	GoalPower
	// GoalThroughput: within PowerBudgetKW or CostBudgetUSDPerH, the
	// point with the highest capacity (ties: the cheaper, then the
	// leaner in the budget's unit).
	GoalThroughput
	// GoalBatch: within the budget, the point with the highest capacity
	// per dollar per hour at saturation, with no latency SLO (the run
	// must only drain).
	GoalBatch
	// GoalEnergy: the point of least energy a day (GPU kWh/day, from the
	// simulation's energy) that meets every SLO at RateRPS.
	GoalEnergy
	// GoalTCO: the point of least cost of ownership ($/h: hardware
	// amortized, energy × PUE × price, operating cost) that meets every
	// SLO at RateRPS.
	GoalTCO
)

// goalNames are the goals' names, indexed by Goal.
var goalNames = [...]string{GoalCost: "cost", GoalPower: "power", GoalThroughput: "throughput", GoalBatch: "batch",
	GoalEnergy: "energy", GoalTCO: "tco"}

// Goals lists the goals.
func Goals() []Goal {
	return []Goal{GoalCost, GoalPower, GoalThroughput, GoalBatch, GoalEnergy, GoalTCO}
}

// GoalNames lists the goals' names, in the order of Goals.
func GoalNames() []string {
	out := make([]string, 0, len(goalNames))
	for _, g := range Goals() {
		out = append(out, g.String())
	}
	return out
}

func (g Goal) valid() bool { return g >= GoalCost && g <= GoalTCO }

// String is the goal's name, e.g. "cost" ("Goal(N)" for an invalid value).
func (g Goal) String() string { return enum.Name(goalNames[:], g, "Goal") }

// ParseGoal reads a goal's name (any case).
func ParseGoal(s string) (Goal, error) {
	if i, ok := enum.Index(goalNames[:], s); ok {
		return Goal(i), nil
	}
	return 0, fmt.Errorf("search: unknown goal %q (want %s)", s, strings.Join(GoalNames(), ", "))
}

// MarshalText writes the goal's name; an invalid goal is an error.
func (g Goal) MarshalText() ([]byte, error) {
	if !g.valid() {
		return nil, fmt.Errorf("search: cannot marshal invalid goal %d", int(g))
	}
	return []byte(g.String()), nil
}

// UnmarshalText reads a goal's name (as ParseGoal).
func (g *Goal) UnmarshalText(text []byte) error {
	v, err := ParseGoal(string(text))
	if err != nil {
		return err
	}
	*g = v
	return nil
}

// NeedsRate reports whether the goal serves a given rate (Problem.RateRPS)
// at the least cost or power.
func (g Goal) NeedsRate() bool {
	return g == GoalCost || g == GoalPower || g == GoalEnergy || g == GoalTCO
}

// NeedsSimulation reports whether the goal's objective is only known once
// a point is simulated (its energy), not from its machine counts.
func (g Goal) NeedsSimulation() bool { return g == GoalEnergy || g == GoalTCO }

// NeedsBudget reports whether the goal searches the rate itself within a
// power or cost budget (exactly one of Problem.PowerBudgetKW and
// Problem.CostBudgetUSDPerH).
func (g Goal) NeedsBudget() bool { return g == GoalThroughput || g == GoalBatch }

// checksLatency reports whether points must meet the latency SLOs (the
// batch goal only asks that a run drains).
func (g Goal) checksLatency() bool { return g != GoalBatch }

// ChecksLatency reports whether the goal's points must meet the latency
// SLOs (the batch goal only asks that a run drains).
func (g Goal) ChecksLatency() bool { return g.checksLatency() }

// Merit is the figure designs are compared on for the goal: the optimum's
// cost ($/h) or power (kW), its capacity (req/s), or its capacity per
// dollar (req/s per $/h); higherBetter says which way is better.
func (g Goal) Merit(d DesignResult) (v float64, higherBetter bool) {
	switch g {
	case GoalCost:
		return d.Best.CostUSDPerH, false
	case GoalPower:
		return d.Best.PowerKW, false
	case GoalEnergy:
		return d.Best.KWhPerDay(), false
	case GoalTCO:
		return d.Best.OwnershipUSDPerH, false
	case GoalBatch:
		return d.CapacityRPS / d.Best.CostUSDPerH, true
	}
	return d.CapacityRPS, true
}

// Wording: how reports name each goal, kept here so that a new goal is
// described where it is defined.

// budgetText is the budget of res as reports show it: "455 kW" or "$1520/h".
func budgetText(res *Result) string {
	if res.CostBudgetUSDPerH > 0 {
		return fmt.Sprintf("$%g/h", res.CostBudgetUSDPerH)
	}
	if res.PowerBudgetDrawn {
		return fmt.Sprintf("%g kW drawn", res.PowerBudgetKW)
	}
	return fmt.Sprintf("%g kW", res.PowerBudgetKW)
}

// Headline says what res searched for, followed by workload (in
// parentheses), e.g. "least cost serving 70 req/s (bloom-176b, ...)".
func (g Goal) Headline(res *Result, workload string) string {
	switch g {
	case GoalCost:
		return fmt.Sprintf("least cost serving %g req/s (%s)", res.RateRPS, workload)
	case GoalPower:
		return fmt.Sprintf("least provisioned power serving %g req/s (%s)", res.RateRPS, workload)
	case GoalEnergy:
		return fmt.Sprintf("least GPU energy (kWh/day) serving %g req/s (%s)", res.RateRPS, workload)
	case GoalTCO:
		return fmt.Sprintf("least cost of ownership ($/h) serving %g req/s (%s)", res.RateRPS, workload)
	case GoalBatch:
		return fmt.Sprintf("most req/s per $/h at saturation, no latency SLO, clusters spending %s (%s)", budgetText(res), workload)
	}
	return fmt.Sprintf("most req/s within %s meeting every SLO (%s)", budgetText(res), workload)
}

// Title is the goal of res in a figure title, e.g. "iso-power 455 kW, most
// req/s within SLO".
func (g Goal) Title(res *Result) string {
	switch g {
	case GoalCost:
		return fmt.Sprintf("iso-throughput %g req/s, least cost", res.RateRPS)
	case GoalPower:
		return fmt.Sprintf("iso-throughput %g req/s, least power", res.RateRPS)
	case GoalEnergy:
		return fmt.Sprintf("iso-throughput %g req/s, least energy", res.RateRPS)
	case GoalTCO:
		return fmt.Sprintf("iso-throughput %g req/s, least ownership cost", res.RateRPS)
	}
	budget := "iso-power " + budgetText(res)
	if res.CostBudgetUSDPerH > 0 {
		budget = "iso-cost " + budgetText(res)
	}
	if g == GoalBatch {
		return budget + ", most req/s per $/h at saturation"
	}
	return budget + ", most req/s within SLO"
}

// Describe words a design's optimum after its machine counts, e.g.
// "23 prompt + 6 token machines, $1102.0/h, 329.9 kW".
func (g Goal) Describe(d DesignResult, counts string) string {
	b := d.Best
	switch g {
	case GoalCost, GoalPower:
		return fmt.Sprintf("%s, $%.1f/h, %.1f kW", counts, b.CostUSDPerH, b.PowerKW)
	case GoalEnergy:
		return fmt.Sprintf("%s, %.0f kWh/day, %.3g J/token, $%.1f/h, %.1f kW", counts, b.KWhPerDay(), b.JPerOutputToken, b.CostUSDPerH, b.PowerKW)
	case GoalTCO:
		return fmt.Sprintf("%s, $%.2f/h owned, %.0f kWh/day, $%.1f/h rented, %.1f kW", counts, b.OwnershipUSDPerH, b.KWhPerDay(), b.CostUSDPerH, b.PowerKW)
	case GoalBatch:
		return fmt.Sprintf("%s, %.4g req/s at saturation, %.4g req/s per $/h", counts, d.CapacityRPS, d.CapacityRPS/b.CostUSDPerH)
	}
	return fmt.Sprintf("%s, %.4g req/s within every SLO, $%.1f/h, %.1f kW", counts, d.CapacityRPS, b.CostUSDPerH, b.PowerKW)
}

// ByPower reports whether the goal's figures are drawn against provisioned
// power rather than cost.
func (g Goal) ByPower(res *Result) bool {
	if g.NeedsRate() {
		return g == GoalPower || g == GoalEnergy
	}
	return res.PowerBudgetKW > 0
}

// MeritName names what the goal compares designs on, as tables say it:
// "cost", "provisioned power", "GPU energy", "cost of ownership",
// "capacity" or "capacity per dollar".
func (g Goal) MeritName() string {
	switch g {
	case GoalPower:
		return "provisioned power"
	case GoalEnergy:
		return "GPU energy"
	case GoalTCO:
		return "cost of ownership"
	case GoalCost:
		return "cost"
	case GoalBatch:
		return "capacity per dollar"
	}
	return "capacity"
}

// MeritLabel is the figure MeritName names with its unit, as an axis or a
// colour scale labels it, e.g. "cost ($/h)".
func (g Goal) MeritLabel() string {
	switch g {
	case GoalPower:
		return "provisioned power (kW)"
	case GoalEnergy:
		return "GPU energy (kWh/day)"
	case GoalTCO:
		return "ownership ($/h)"
	case GoalCost:
		return "cost ($/h)"
	case GoalBatch:
		return "req/s per $/h"
	}
	return "capacity (req/s)"
}
