package search_test

import (
	"context"
	"fmt"
	"splitplan/resolve"

	"splitplan/costpower"
	"splitplan/evaluator"
	"splitplan/search"
	"splitplan/slo"
	"splitplan/traces"
)

// Find the cheapest Splitwise-HH and Baseline-H100 clusters (at most four
// machines per pool) that serve 3 req/s of the coding workload within the
// Splitwise SLOs.
func ExampleRun() {
	sizes, err := traces.Builtin("coding")
	if err != nil {
		fmt.Println(err)
		return
	}
	// The designs are resolved once, by name, where the user names them.
	cat := costpower.Default()
	hh, err := cat.Design("Splitwise-HH")
	if err != nil {
		fmt.Println(err)
		return
	}
	h100, err := cat.Design("Baseline-H100")
	if err != nil {
		fmt.Println(err)
		return
	}
	p := &search.Problem{
		Catalog: cat, Perf: resolve.DefaultSource(), Model: "bloom-176b",
		Designs:  []search.DesignSpec{{Design: hh}, {Design: h100}},
		Workload: &search.Workload{Sizes: sizes, DurationS: 20},
		Options:  evaluator.Options{AbortDelayS: 30},
		SLO:      slo.Default(), Goal: search.GoalCost, RateRPS: 3, MaxMachines: 4,
	}
	res, err := search.Run(context.Background(), p)
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, d := range res.Designs {
		if !d.Found {
			fmt.Printf("%s: none\n", d.Design)
			continue
		}
		fmt.Printf("%s: %s, $%.1f/h, binding %s\n", d.Design, d.Best.Label(), d.Best.CostUSDPerH, d.Best.Verdict.BindingFigure().Name())
	}
	fmt.Println("best:", res.Designs[res.Winner].Design)
	// Output:
	// Splitwise-HH: Splitwise-HH 2P/1T at 3 req/s, $114.0/h, binding P50 TBT
	// Baseline-H100: Baseline-H100 ×3 at 3 req/s, $114.0/h, binding P99 TBT
	// best: Splitwise-HH
}
