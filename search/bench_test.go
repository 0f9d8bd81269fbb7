package search

import (
	"context"
	"runtime"
	"testing"
)

func benchSearch(b *testing.B, mk func() *Problem) {
	var sims, evaluated, grid int
	for i := 0; i < b.N; i++ {
		p := mk()
		p.Parallel = runtime.NumCPU()
		res, err := Run(context.Background(), p)
		if err != nil {
			b.Fatal(err)
		}
		sims, evaluated, grid = 0, 0, 0
		for _, d := range res.Designs {
			sims += d.Simulations
			evaluated += d.Evaluated
			grid += d.GridPoints
		}
	}
	b.ReportMetric(float64(sims), "simulations/op")
	b.ReportMetric(float64(evaluated), "points/op")
	b.ReportMetric(100*float64(evaluated)/float64(grid), "%grid")
	b.ReportMetric(float64(sims)*float64(b.N)/b.Elapsed().Seconds(), "simulations/s")
}

// BenchmarkOptimizeCost70 is `splitplan optimize --goal cost --rps 70` on
// the defaults: BLOOM-176B, coding, 120 s, six designs, up to 160 machines
// per pool.
func BenchmarkOptimizeCost70(b *testing.B) {
	benchSearch(b, func() *Problem { return problem(b, GoalCost, "coding", 70, 160, 120, allDesigns...) })
}

// BenchmarkIsoPowerConversation is the iso-power search of the Splitwise
// paper: a budget of 40 DGX-H100 (455 kW), conversation, six designs.
func BenchmarkIsoPowerConversation(b *testing.B) {
	benchSearch(b, func() *Problem {
		p := problem(b, GoalThroughput, "conversation", 0, 160, 120, allDesigns...)
		p.PowerBudgetKW = 40 * 11.375
		return p
	})
}
