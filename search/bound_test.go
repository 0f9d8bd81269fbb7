package search

import (
	"context"
	"testing"
)

// TestBoundedBy: an optimum held back by MaxMachines says so; one the
// budget stops does not, and GrowToBudget lifts the bound to what the
// budget buys, which changes the answer.
func TestBoundedBy(t *testing.T) {
	t.Parallel()
	// A rate three baseline machines cannot serve: the bound binds.
	p := problem(t, GoalCost, "coding", 30, 3, 20, "Baseline-H100")
	res, err := Run(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	d := res.Designs[0]
	if d.Found || d.BoundedBy != "max-machines" || d.MaxMachines != 3 {
		t.Errorf("cost at 30 req/s within 3 machines: found %v, bounded_by %q, bound %d", d.Found, d.BoundedBy, d.MaxMachines)
	}
	// Throughput within a budget of 8 H100 machines (11.375 kW each), searched
	// with a bound of 4: the bound binds; grown, it does not and the
	// optimum has more machines and more capacity.
	p = problem(t, GoalThroughput, "coding", 0, 4, 20, "Baseline-H100")
	p.PowerBudgetKW = 8 * 11.375
	res, err = Run(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	small := res.Designs[0]
	if !small.Found || small.Best.Prompt != 4 || small.BoundedBy != "max-machines" {
		t.Fatalf("bound 4: found %v with %d machines, bounded_by %q", small.Found, small.Best.Prompt, small.BoundedBy)
	}
	p.GrowToBudget = true
	res, err = Run(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	grown := res.Designs[0]
	if grown.MaxMachines != 8 || !grown.Found || grown.BoundedBy != "" || grown.Best.Prompt <= 4 || grown.CapacityRPS <= small.CapacityRPS {
		t.Errorf("grown to the budget: bound %d, found %v with %d machines at %.4g req/s (bound 4: %.4g), bounded_by %q",
			grown.MaxMachines, grown.Found, grown.Best.Prompt, grown.CapacityRPS, small.CapacityRPS, grown.BoundedBy)
	}
}
