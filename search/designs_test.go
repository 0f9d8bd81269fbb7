package search

import (
	"context"
	"fmt"
	"testing"

	"splitplan/costpower"
)

// gpuProblem is a small GPU-pair space: Llama-3.1-70B on A100, H100 and
// H200 nodes at every tensor parallelism that holds it, bounded designs.
func gpuProblem(t testing.TB, goal Goal, rate float64, maxMachines int, durationS float64) *Problem {
	t.Helper()
	return gpuSpace(t, goal, rate, maxMachines, durationS, []string{"a100", "h100", "h200"}, nil)
}

// gpuSpace is the space `optimize --model llama3.1-70b --gpus GPUS
// --power-caps CAPS` searches (no caps: nil), coding workload.
func gpuSpace(t testing.TB, goal Goal, rate float64, maxMachines int, durationS float64, gpus []string, caps []float64) *Problem {
	t.Helper()
	p := problem(t, goal, "coding", rate, maxMachines, durationS)
	p.Model = "llama3.1-70b"
	model, err := p.Catalog.Model(p.Model)
	if err != nil {
		t.Fatal(err)
	}
	gen, _, err := p.Catalog.AddCappedGPUDesigns(gpus, caps, model, costpower.MinKVTokens)
	if err != nil {
		t.Fatal(err)
	}
	for _, g := range gen {
		p.Designs = append(p.Designs, specsOf(t, p.Catalog, g.Name)...)
	}
	p.PruneDesigns = true
	return p
}

// checkPrunedEqualsExhaustive runs the problem mk makes with designs
// bounded out and exhaustively: the same winner, nothing bounded out in
// the exhaustive run, and every design bounded out no better, exhaustively,
// than its bound.
func checkPrunedEqualsExhaustive(t *testing.T, name string, mk func() *Problem) {
	t.Helper()
	pruned, err := Run(context.Background(), mk())
	if err != nil {
		t.Fatal(err)
	}
	ex := mk()
	ex.Exhaustive = true
	full, err := Run(context.Background(), ex)
	if err != nil {
		t.Fatal(err)
	}
	if winner(pruned) != winner(full) {
		t.Errorf("pruned winner %s, exhaustive %s", winner(pruned), winner(full))
	}
	if full.DesignsPruned != 0 {
		t.Errorf("exhaustive search bounded %d designs out", full.DesignsPruned)
	}
	for i, d := range pruned.Designs {
		f := full.Designs[i]
		if d.Design != f.Design {
			t.Fatalf("design %d: %s vs %s", i, d.Design, f.Design)
		}
		if !d.BoundPruned || !f.Found {
			continue
		}
		m, _ := ex.Goal.Merit(f)
		if ex.Goal.NeedsRate() && m < d.Bound*(1-1e-9) || !ex.Goal.NeedsRate() && m > d.Bound*(1+1e-9) {
			t.Errorf("%s: bound %v but its exhaustive optimum reaches %v", d.Design, d.Bound, m)
		}
	}
	t.Logf("%s: %d of %d designs bounded out; winner %s", name, pruned.DesignsPruned, len(pruned.Designs), winner(pruned))
}

func winner(r *Result) string {
	if r.Winner < 0 {
		return "none"
	}
	d := r.Designs[r.Winner]
	return fmt.Sprintf("%s %d/%d $%.2f %.2f kW cap %.4g", d.Design, d.Best.Prompt, d.Best.Token, d.Best.CostUSDPerH, d.Best.PowerKW, d.CapacityRPS)
}

// TestPrunedDesignsEqualExhaustive: bounding whole designs out never
// changes the winner of a GPU-pair space, for the cost, power and
// throughput goals; a design reported as bounded out indeed cannot beat
// it (its exhaustive optimum is no better than its bound).
func TestPrunedDesignsEqualExhaustive(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("exhaustive grids")
	}
	cases := []struct {
		name string
		p    func() *Problem
	}{
		{"cost", func() *Problem { return gpuProblem(t, GoalCost, 6, 5, 30) }},
		{"power", func() *Problem { return gpuProblem(t, GoalPower, 6, 5, 30) }},
		{"throughput", func() *Problem {
			p := gpuProblem(t, GoalThroughput, 0, 4, 30)
			p.CostBudgetUSDPerH = 120
			return p
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) { checkPrunedEqualsExhaustive(t, tc.name, tc.p) })
	}
}

// TestBoundingDesignsChangesNothing: with the per-design search the same,
// bounding whole designs out gives the same winner and the same optimum
// for every design it does not bound out, on budgets where the
// per-design capacity search and the exhaustive grid differ (capacity is
// not monotone in the machines of these small clusters; see
// TestPrunedDesignsEqualExhaustive for where they agree).
func TestBoundingDesignsChangesNothing(t *testing.T) {
	t.Parallel()
	for _, budget := range []float64{80, 100} {
		p := gpuProblem(t, GoalThroughput, 0, 4, 20)
		p.CostBudgetUSDPerH = budget
		bounded, err := Run(context.Background(), p)
		if err != nil {
			t.Fatal(err)
		}
		p = gpuProblem(t, GoalThroughput, 0, 4, 20)
		p.CostBudgetUSDPerH = budget
		p.PruneDesigns = false
		all, err := Run(context.Background(), p)
		if err != nil {
			t.Fatal(err)
		}
		if winner(bounded) != winner(all) {
			t.Errorf("$%g/h: winner %s with designs bounded out, %s without", budget, winner(bounded), winner(all))
		}
		for i, d := range bounded.Designs {
			if d.BoundPruned {
				continue
			}
			a := all.Designs[i]
			if d.Found != a.Found || d.Best.Prompt != a.Best.Prompt || d.Best.Token != a.Best.Token || d.CapacityRPS != a.CapacityRPS {
				t.Errorf("$%g/h: %s: %d/%d cap %v with bounding, %d/%d cap %v without", budget, d.Design,
					d.Best.Prompt, d.Best.Token, d.CapacityRPS, a.Best.Prompt, a.Best.Token, a.CapacityRPS)
			}
		}
	}
}

// TestPrunedDesignsDeterministic: which designs are reported bounded out,
// and every optimum, do not depend on the parallelism.
func TestPrunedDesignsDeterministic(t *testing.T) {
	t.Parallel()
	var first string
	for _, j := range []int{1, 2, 5} {
		p := gpuProblem(t, GoalCost, 6, 5, 20)
		p.Parallel = j
		r, err := Run(context.Background(), p)
		if err != nil {
			t.Fatal(err)
		}
		s := summary(r)
		for _, d := range r.Designs {
			if d.BoundPruned {
				s += fmt.Sprintf("%s bounded %v; ", d.Design, d.Bound)
			}
		}
		s += fmt.Sprintf("points %d", len(r.Points))
		if first == "" {
			first = s
		} else if s != first {
			t.Errorf("-j %d:\n%s\nwant (-j 1):\n%s", j, s, first)
		}
	}
}
