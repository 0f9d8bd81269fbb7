package search

import (
	"context"
	"runtime"
	"testing"

	"splitplan/evaluator/perf/errmodel"
	"splitplan/resolve"
	"splitplan/slo"
)

// benchSearch times the search mk makes as the CLI runs it: on every
// core, each simulation stopped once its failure is certain.
func benchSearch(b *testing.B, mk func() *Problem) {
	var sims, evaluated, grid int
	for i := 0; i < b.N; i++ {
		p := mk()
		p.Parallel = runtime.NumCPU()
		p.StopFailing = true
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

// BenchmarkOptimizeCost70Verified is BenchmarkOptimizeCost70 as the
// command line runs it by default: every optimum verified over 15 minutes
// of the same traffic (Problem.VerifyS).
func BenchmarkOptimizeCost70Verified(b *testing.B) {
	var verifications int
	benchSearch(b, func() *Problem {
		p := problem(b, GoalCost, "coding", 70, 160, 120, allDesigns...)
		p.VerifyS = 900
		return p
	})
	b.StopTimer() // (one more run, untimed, to count its verifications)
	p := problem(b, GoalCost, "coding", 70, 160, 120, allDesigns...)
	p.VerifyS, p.Parallel, p.StopFailing = 900, runtime.NumCPU(), true
	res, err := Run(context.Background(), p)
	if err != nil {
		b.Fatal(err)
	}
	for _, d := range res.Designs {
		verifications += d.Verifications
	}
	b.ReportMetric(float64(verifications), "verifications/op")
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

// gpuPairsProblem is `splitplan optimize --model llama3.1-70b --gpus
// h100,h200,b200` with the goal's flags: every tensor parallelism of
// each GPU and every ordered pair, coding, 120 s.
func gpuPairsProblem(b *testing.B, goal Goal, rate float64) *Problem {
	return gpuSpace(b, goal, rate, 160, 120, []string{"h100", "h200", "b200"}, nil)
}

// BenchmarkGPUPairsCost70 is `optimize --goal cost --rps 70 --model
// llama3.1-70b --gpus h100,h200,b200` (132 designs).
func BenchmarkGPUPairsCost70(b *testing.B) {
	benchSearch(b, func() *Problem { return gpuPairsProblem(b, GoalCost, 70) })
}

// BenchmarkGPUPairsIsoPower is the same space with `--goal throughput
// --power-budget 455`.
func BenchmarkGPUPairsIsoPower(b *testing.B) {
	benchSearch(b, func() *Problem {
		p := gpuPairsProblem(b, GoalThroughput, 0)
		p.PowerBudgetKW = 455
		return p
	})
}

// BenchmarkH200IsoPower is the iso-power search (455 kW) over the H200's
// designs — a baseline per tensor parallelism and a Splitwise design per
// ordered pair of them, llama3.1-70b, coding, 60 s simulations: clusters
// of hundreds of single-GPU replicas, where routing an arrival over a
// pool and the overloaded machines' batches cost most.
func BenchmarkH200IsoPower(b *testing.B) {
	benchSearch(b, func() *Problem {
		p := gpuSpace(b, GoalThroughput, 0, 160, 60, []string{"h200"}, nil)
		p.PowerBudgetKW = 455
		return p
	})
}

// BenchmarkRobustCost70 is `splitplan optimize --goal cost --rps 70
// --confidence 0.9` (32 scenarios of the built-in error model): compare
// with BenchmarkOptimizeCost70, the nominal search it includes.
func BenchmarkRobustCost70(b *testing.B) {
	var sims int64
	var ratio float64
	for i := 0; i < b.N; i++ {
		p := problem(b, GoalCost, "coding", 70, 160, 120, allDesigns...)
		p.Parallel = runtime.NumCPU()
		p.StopFailing = true
		r, err := RunRobust(context.Background(), p, Robust{Confidence: 0.9, Errors: errmodel.Builtin(), WinnerCurveOnly: true})
		if err != nil {
			b.Fatal(err)
		}
		sims = r.Simulations
		ratio = float64(r.NominalTime+r.ScenarioTime) / float64(r.NominalTime)
	}
	b.ReportMetric(float64(sims), "scenario-simulations/op")
	b.ReportMetric(ratio, "x-nominal")
}

// BenchmarkRobustCost70Verified is BenchmarkRobustCost70 as the command
// line runs it by default: the nominal optima verified over 15 minutes
// of the same traffic, and every point a scenario finds feasible judged
// over the scenario's traffic continued as long (scenarioSearch). Its
// x-nominal is against the nominal search with its own check.
func BenchmarkRobustCost70Verified(b *testing.B) {
	var sims, verifications int64
	var ratio float64
	for i := 0; i < b.N; i++ {
		p := problem(b, GoalCost, "coding", 70, 160, 120, allDesigns...)
		p.Parallel, p.StopFailing, p.VerifyS = runtime.NumCPU(), true, 900
		r, err := RunRobust(context.Background(), p, Robust{Confidence: 0.9, Errors: errmodel.Builtin(), WinnerCurveOnly: true})
		if err != nil {
			b.Fatal(err)
		}
		sims, verifications = r.Simulations, r.ScenarioVerifications
		ratio = float64(r.NominalTime+r.ScenarioTime) / float64(r.NominalTime)
	}
	b.ReportMetric(float64(sims), "scenario-simulations/op")
	b.ReportMetric(float64(verifications), "scenario-verifications/op")
	b.ReportMetric(ratio, "x-nominal")
}

// BenchmarkScenarioLoad70 is `evaluate --cluster HA:22:20 --rps 70
// --scenarios 32` on the defaults: the nominal cost optimum of
// Splitwise-HA judged in the 32 scenarios of a robust search, each over
// its two minutes and, where it held, over the quarter hour's check.
func BenchmarkScenarioLoad70(b *testing.B) {
	p := problem(b, GoalCost, "coding", 70, 160, 120, "Splitwise-HA")
	cl, ref := benchCluster(b, p, "Splitwise-HA", 22, 20)
	var sims, passed int
	for i := 0; i < b.N; i++ {
		rows, err := RunLoad(context.Background(), []resolve.Cluster{cl}, []float64{70}, p.Workload, p.Options, p.SLO, ref, runtime.NumCPU())
		if err != nil {
			b.Fatal(err)
		}
		sims, err = ScenarioLoad(context.Background(), []resolve.Cluster{cl}, []float64{70}, p.Workload, p.Options, p.SLO, ref, runtime.NumCPU(), 900,
			Robust{Scenarios: 32, Errors: errmodel.Builtin()}, rows, nil)
		if err != nil {
			b.Fatal(err)
		}
		passed = rows[0].Scenarios.Passed
	}
	b.ReportMetric(float64(sims), "simulations/op")
	b.ReportMetric(float64(passed), "scenarios-passed/op")
}

// benchCluster is the design's cluster at (prompt, token) and the SLO
// reference, as the search resolves them on p's defaults.
func benchCluster(b testing.TB, p *Problem, design string, prompt, token int) (resolve.Cluster, slo.Reference) {
	b.Helper()
	cl, err := resolve.NamedCluster(p.Catalog, p.Perf, design, prompt, token, p.Model)
	if err != nil {
		b.Fatal(err)
	}
	refMachine, err := p.Catalog.ResolveMachine(DefaultReference)
	if err != nil {
		b.Fatal(err)
	}
	model, err := p.Catalog.Model(p.Model)
	if err != nil {
		b.Fatal(err)
	}
	refPerf, _, err := p.Perf.Resolve(model, refMachine)
	if err != nil {
		b.Fatal(err)
	}
	return cl, slo.Reference{Perf: refPerf}
}
