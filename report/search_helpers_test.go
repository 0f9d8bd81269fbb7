package report

import (
	"context"
	"splitplan/resolve"
	"testing"

	"splitplan/costpower"
	"splitplan/search"
	"splitplan/slo"
	"splitplan/traces"
)

// tinySearch runs a small real search: at most maxMachines per pool, a
// durationS-second coding workload, bloom-176b.
func tinySearch(t testing.TB, goal search.Goal, rate float64, powerKW float64, maxMachines int, durationS float64, designs ...string) (*search.Result, *search.Problem) {
	t.Helper()
	d, err := traces.Builtin("coding")
	if err != nil {
		t.Fatal(err)
	}
	cat := costpower.Default()
	var specs []search.DesignSpec
	for _, n := range designs {
		dd, err := cat.Design(n)
		if err != nil {
			t.Fatal(err)
		}
		specs = append(specs, search.DesignSpec{Design: dd})
	}
	p := &search.Problem{
		Catalog: cat, Perf: resolve.DefaultSource(), Model: "bloom-176b", Designs: specs,
		Workload: &search.Workload{Sizes: d, DurationS: durationS, Seed: 0},
		SLO:      slo.Default(), Goal: goal, RateRPS: rate, PowerBudgetKW: powerKW, MaxMachines: maxMachines, Parallel: 1,
	}
	p.Options.AbortDelayS = 30
	res, err := search.Run(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	return res, p
}
