package search

import (
	"context"
	"testing"

	"splitplan/costpower"
)

// capProblem is a small space with the power-cap dimension: Llama-3.1-70B
// on H100 instance types at every tensor parallelism that holds it, each
// uncapped and capped at 60% of board power, every (prompt, token) pair.
func capProblem(t testing.TB, goal Goal, rate float64, maxMachines int, durationS float64) *Problem {
	t.Helper()
	p := problem(t, goal, "coding", rate, maxMachines, durationS)
	p.Model = "llama3.1-70b"
	model, err := p.Catalog.Model(p.Model)
	if err != nil {
		t.Fatal(err)
	}
	gen, _, err := p.Catalog.AddCappedGPUDesigns([]string{"h100"}, []float64{0.6, 1}, model, costpower.MinKVTokens)
	if err != nil {
		t.Fatal(err)
	}
	capped := 0
	for _, g := range gen {
		p.Designs = append(p.Designs, DesignSpec{Design: g.Name})
		if g.Prompt.GPUPowerCap == 0.6 || g.Token.GPUPowerCap == 0.6 {
			capped++
		}
	}
	if capped == 0 || capped == len(gen) {
		t.Fatalf("%d of %d designs capped: the space has no cap dimension", capped, len(gen))
	}
	p.PruneDesigns = true
	return p
}

// TestPrunedEqualsExhaustiveWithCaps: with prompt and token caps as a
// dimension of the design space, bounding designs out and the per-design
// searches give the exhaustive grid's winner for the cost, power,
// throughput and energy goals, and no design bounded out could have beaten
// it.
func TestPrunedEqualsExhaustiveWithCaps(t *testing.T) {
	if testing.Short() {
		t.Skip("exhaustive grids")
	}
	cases := []struct {
		name string
		p    func() *Problem
	}{
		{"cost", func() *Problem { return capProblem(t, GoalCost, 6, 4, 20) }},
		{"power", func() *Problem { return capProblem(t, GoalPower, 6, 4, 20) }},
		{"energy", func() *Problem { return capProblem(t, GoalEnergy, 6, 4, 20) }},
		{"throughput", func() *Problem {
			p := capProblem(t, GoalThroughput, 0, 3, 20)
			p.PowerBudgetKW = 40
			return p
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			pruned, err := Run(context.Background(), tc.p())
			if err != nil {
				t.Fatal(err)
			}
			ex := tc.p()
			ex.Exhaustive = true
			full, err := Run(context.Background(), ex)
			if err != nil {
				t.Fatal(err)
			}
			if winner(pruned) != winner(full) {
				t.Errorf("pruned winner %s, exhaustive %s", winner(pruned), winner(full))
			}
			for i, d := range pruned.Designs {
				f := full.Designs[i]
				if !d.BoundPruned || !f.Found {
					continue
				}
				m, _ := ex.Goal.Merit(f)
				if ex.Goal.NeedsRate() && m < d.Bound*(1-1e-9) || !ex.Goal.NeedsRate() && m > d.Bound*(1+1e-9) {
					t.Errorf("%s: bound %v but its exhaustive optimum reaches %v", d.Design, d.Bound, m)
				}
			}
			t.Logf("%s: %d of %d designs bounded out; winner %s", tc.name, pruned.DesignsPruned, len(pruned.Designs), winner(pruned))
		})
	}
}
