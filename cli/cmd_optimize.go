package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"splitplan/costpower"
	"splitplan/evaluator"
	"splitplan/report"
	"splitplan/search"
	"splitplan/slo"
	"splitplan/traces"
)

// sloFlags are the SLO flags of every command that judges latencies.
func sloFlags(def sloConfig) []cli.Flag {
	join := func(v []float64) string {
		s := make([]string, len(v))
		for i, f := range v {
			s[i] = strconv.FormatFloat(f, 'g', -1, 64)
		}
		return strings.Join(s, ",")
	}
	flags := []cli.Flag{
		&cli.StringFlag{Name: "slo-set", Value: slo.DefaultSet, Usage: "the SLO targets: paper (P50/P90/P99 of TTFT, TBT and E2E), tokens (of TTFT, ITL — every gap between tokens — and stall — a request's longest gap), goodput (P90 TTFT and TBT), or a list of METRIC_pNN keys such as ttft_p99,itl_p99,stall_p90,queue_p90 (METRIC ttft, tbt or tpot, e2e, itl, stall, queue)"},
		&cli.StringFlag{Name: "slo-ttft", Value: join(def.SLOTTFT), Usage: "P50,P90,P99 TTFT slowdown limits against the reference machine"},
		&cli.StringFlag{Name: "slo-tbt", Value: join(def.SLOTBT), Usage: "P50,P90,P99 TBT slowdown limits"},
		&cli.StringFlag{Name: "slo-e2e", Value: join(def.SLOE2E), Usage: "P50,P90,P99 E2E slowdown limits"},
		&cli.StringFlag{Name: "slo-abs", Usage: "absolute limits in seconds replacing slowdowns, or added when the set has no such target, e.g. tbt_p99=0.2,ttft_p90=2,itl_p99=100ms,queue_p90=1"},
		&cli.StringFlag{Name: "attainment", Usage: "goodput: at least this `FRACTION` of requests (e.g. 0.9) must meet every per-request limit (--ttft, --tpot, --itl, --stall, --e2e, --queue) at once; the SLOs are then these alone unless --slo-set names more"},
	}
	for _, l := range goodputLimits {
		flags = append(flags, &cli.StringFlag{Name: l.Name, Usage: "goodput: " + l.Bounds})
	}
	return flags
}

// sloReferenceFlag is the machine type slowdowns are measured against.
func sloReferenceFlag(def sloConfig) cli.Flag {
	return &cli.StringFlag{Name: "slo-reference", Value: def.SLOReference, Usage: "machine type the slowdowns are measured against: a catalog type, or one at a tensor parallelism (DGX-A100-tp1, A100·tp1)"}
}

// searchFlags are the flags that define a search (everything but where
// optimize writes its answer), shared by optimize and the plot commands
// that run a search of their own.
func searchFlags() []cli.Flag {
	def := defaultOptimizeConfig()
	flags := []cli.Flag{
		&cli.StringFlag{Name: "goal", Usage: "cost, power, energy or tco (least rental $/h, provisioned kW, GPU kWh/day or ownership $/h at --rps), throughput (most req/s within --power-budget or --cost-budget), batch (most req/s per $ at saturation within a budget)"},
		&cli.Float64Flag{Name: "amortize-years", Value: costpower.DefaultOwnership().AmortizeYears, Usage: "tco: years the hardware price is amortized over (a common GPU-server depreciation period)"},
		&cli.Float64Flag{Name: "pue", Value: costpower.DefaultOwnership().PUE, Usage: "tco: the site's power usage effectiveness (between the Uptime Institute 2023 average, 1.58, and hyperscale sites, ~1.1)"},
		&cli.Float64Flag{Name: "electricity-price", Value: costpower.DefaultOwnership().ElectricityUSDPerKWh, Usage: "tco: electricity price in $/kWh (the US EIA 2023 average industrial price)"},
		&cli.Float64Flag{Name: "opex-per-gpu-h", Value: costpower.DefaultOwnership().OpexUSDPerGPUH, Usage: "tco: operating cost per GPU-hour beyond energy: space, support, network (an assumption)"},
		unsetFloat64{&cli.Float64Flag{Name: "power-budget", Usage: "power budget in kW (goals throughput and batch)"}},
		unsetFloat64{&cli.Float64Flag{Name: "cost-budget", Usage: "cost budget in $/h (goals throughput and batch)"}},
		&cli.StringFlag{Name: "power-budget-kind", Value: "provisioned", Usage: "what --power-budget bounds: provisioned (the machines' provisioned kW) or drawn (goal throughput: the GPUs' average kW drawn, from the simulation)"},
		&cli.StringFlag{Name: "designs", Value: "all", Usage: "comma-separated designs to search (e.g. HH,HA,Baseline-H100), or all"},
		&cli.StringFlag{Name: "gpus", Usage: "generate the designs from these GPUs (e.g. h100,h200,b200): a baseline per GPU and tensor parallelism, and a Splitwise design per ordered pair; the designs that cannot beat the best are bounded out analytically"},
		&cli.StringFlag{Name: "power-caps", Usage: "also search every design (or --gpus instance type) with its GPUs power-capped at these fractions of board power, prompt and token pools capped apart: lo:hi:step (0.5:1.0:0.1) or a list (0.7,1)"},
		&cli.StringSliceFlag{Name: "price", Usage: "price of one GPU-hour, e.g. h200=3.9 (repeatable or comma-separated; the defaults and their source: splitplan catalog)"},
		&cli.StringFlag{Name: "model", Value: def.Model, Usage: "model served (catalog lists the built-in ones)"},
		modelConfigFlag,
		&cli.IntFlag{Name: "max-machines", Value: def.MaxMachines, Usage: "most machines in each pool (and in a baseline)"},
		&cli.IntFlag{Name: "seeds", Value: def.Seeds, Usage: "replicate the workload with seeds SEED, SEED+1, ...: a cluster must meet the SLOs on every one (more robust, N times the simulations)"},
		&cli.Float64Flag{Name: "precision", Value: def.Precision, Usage: "relative precision of capacities (rates are searched on the grid (1+p)^k)"},
		&cli.StringFlag{Name: "verify", Value: def.Verify, Usage: "every optimum must also meet the SLOs over this much of the same traffic (the search's trace continued), or the search goes on past it: a cluster can hold for minutes and tip over within the hour (0: no check)"},
		&cli.IntFlag{Name: "j", Value: runtime.NumCPU(), Usage: "simulations run at once"},
		&cli.BoolFlag{Name: "exhaustive", Usage: "simulate every point of every design space (slow; for checking the pruned search)"},
	}
	flags = append(flags, sloFlags(def.sloConfig)...)
	flags = append(flags, sloReferenceFlag(def.sloConfig),
		&cli.StringFlag{Name: "abort-after", Value: def.AbortAfter, Usage: "a simulation stops, unsustainable, once a request waited this long to start a phase (0 runs every simulation to the end)"},
		&cli.StringFlag{Name: "compat", Usage: "splitwise-sim reproduces the reference simulator"},
		&cli.StringFlag{Name: "transfer", Value: evaluator.TransferAuto.String(), Usage: "KV-cache transfer: auto, serialized or layerwise"},
		planFlag,
		memoryUtilizationFlag,
		kernelsFitFlag,
	)
	wf := workloadFlags(0)
	for i, f := range wf {
		if sf, ok := f.(*cli.Float64Flag); ok && sf.Name == "rps" {
			sf.Usage = "target rate in requests per second (goals cost, power, energy and tco)"
			wf[i] = unsetFloat64{sf}
		}
		if sf, ok := f.(*cli.StringFlag); ok && sf.Name == "trace" {
			sf.Usage = "trace `FILE` whose (prompt, output) sizes are resampled at each rate"
		}
	}
	flags = append(flags, wf...)
	return append(flags, policyFlags()...)
}

func optimizeCommand() *cli.Command {
	flags := searchFlags()
	// The output flags follow --plan, where they always were in the help.
	var out []cli.Flag
	for _, f := range flags {
		out = append(out, f)
		if f == planFlag {
			out = append(out,
				&cli.StringFlag{Name: "format", Value: "table", Usage: "output: table or json"},
				&cli.StringFlag{Name: "out", Usage: "write the optima, one row per design, to CSV `FILE` (with --confidence: the robust table, one row per design, docs/formats.md)"},
				&cli.StringFlag{Name: "points", Usage: "write every simulated point with its verdict to CSV `FILE`"},
				&cli.StringFlag{Name: "pairs", Usage: "with --gpus, write the best design of every (prompt GPU, token GPU) pair to CSV `FILE`"},
				&cli.StringFlag{Name: "plot", Usage: "write the heatmaps, the Pareto (or cost/power by design) and the summary figures, PNG and SVG, into `DIR`"},
				reportFlag(),
			)
			out = append(out, scheduleFlags()...)
		}
	}
	out = append(out, robustFlags()...) // optimize_robust.go
	return &cli.Command{
		Name:  "optimize",
		Usage: "find, for every design, the best numbers of prompt and token machines for a goal",
		UsageText: "splitplan optimize --goal cost --rps 70\n" +
			"splitplan optimize --goal throughput --power-budget 455 --workload conversation\n" +
			"splitplan optimize --goal power --rps 70 --designs HH,HA,Baseline-H100 --out optima.csv\n" +
			"splitplan optimize --goal cost --rps 70 --designs HH,Baseline-H100,Baseline-H100+sarathi",
		Description: "A design name may carry a batching policy for its baseline and mixed-pool machines:\n" +
			"Baseline-H100+sarathi, Baseline-A100+prefill-first, HH+sarathi. --policy sets it for every\n" +
			"design named without one.",
		Flags:  categorized(out),
		Action: optimize,
	}
}

// problemFrom turns an optimize configuration, with the flags that are not
// part of a plan's [optimize] table (-j, --exhaustive, --transfer and the
// policy flags), into a search problem, validating everything once: one
// step a configuration part (goal, search limits, simulation and SLOs,
// designs, workload).
func problemFrom(c *cli.Context, pl *plan, cfg *optimizeConfig) (*search.Problem, error) {
	p, err := goalFrom(c, cfg)
	if err != nil {
		return nil, err
	}
	if err := searchLimitsFrom(c, cfg, p); err != nil {
		return nil, err
	}
	if err := simulationFrom(c, pl, cfg, p); err != nil {
		return nil, err
	}
	if err := designsFrom(c, pl, cfg, p); err != nil {
		return nil, err
	}
	if p.Workload, err = rateWorkload(cfg.workloadConfig, p.Options.Compat); err != nil {
		return nil, err
	}
	if err := checkVerifyLonger(c, cfg.Verify, p.VerifyS, p.Workload.DurationS); err != nil {
		return nil, err
	}
	if p.Goal.NeedsRate() {
		if n := p.RateRPS * p.Workload.DurationS; n > traces.MaxSynthesized {
			return nil, badInputf("--rps %g for --duration %s makes about %.3g requests per simulation: at most %d can be simulated; lower --rps or --duration",
				p.RateRPS, traces.SecondsText(p.Workload.DurationS), n, traces.MaxSynthesized)
		}
		if err := checkVerifyRequests(cfg.Verify, p.VerifyS, p.RateRPS, "every optimum"); err != nil {
			return nil, err
		}
	}
	return p, nil
}

// goalFrom starts the problem with the goal part: the goal, its rate or
// budget, what a power budget bounds, and the model served.
func goalFrom(c *cli.Context, cfg *optimizeConfig) (*search.Problem, error) {
	if cfg.Goal == "" {
		if cfg.RPSGiven || cfg.given["power-budget"] || cfg.given["cost-budget"] {
			return nil, badInputf("--goal is required: cost, power, energy or tco with --rps, throughput or batch with a budget")
		}
		return nil, badInputf("--goal is required (one of %s)", strings.Join(search.GoalNames(), ", "))
	}
	goal, err := search.ParseGoal(cfg.Goal)
	if err != nil {
		return nil, badInputf("--goal must be one of %s, got %q", strings.Join(search.GoalNames(), ", "), cfg.Goal)
	}
	p := &search.Problem{Goal: goal, Model: cfg.Model}
	switch {
	case goal.NeedsRate():
		err = cfg.workloadConfig.setRate(p, cfg.given["power-budget"] || cfg.given["cost-budget"])
	case goal.NeedsBudget():
		err = budgetFrom(cfg, p)
	}
	if err != nil {
		return nil, err
	}
	switch kind := c.String("power-budget-kind"); kind {
	case "provisioned":
	case "drawn":
		if goal != search.GoalThroughput || !cfg.given["power-budget"] {
			return nil, badInputf("--power-budget-kind drawn goes with --goal throughput and --power-budget KW")
		}
		p.PowerBudgetDrawn = true
	default:
		return nil, badInputf("--power-budget-kind must be provisioned or drawn, got %q", kind)
	}
	return p, nil
}

// budgetFrom sets the budget of a goal within a budget (throughput, batch).
func budgetFrom(cfg *optimizeConfig, p *search.Problem) error {
	pb, cb := cfg.PowerBudgetKW, cfg.CostBudgetUSDPerH
	if cfg.RPSGiven {
		return badInputf("--goal %s searches the rate itself: drop --rps, give --power-budget or --cost-budget", p.Goal)
	}
	if cfg.given["power-budget"] == cfg.given["cost-budget"] {
		return badInputf("--goal %s needs exactly one of --power-budget KW or --cost-budget USD_PER_H", p.Goal)
	}
	if cfg.given["power-budget"] && (!(pb > 0) || math.IsInf(pb, 0)) {
		return badInputf("--power-budget must be a positive number of kW, got %v", pb)
	}
	if cfg.given["cost-budget"] && (!(cb > 0) || math.IsInf(cb, 0)) {
		return badInputf("--cost-budget must be a positive number of $/h, got %v", cb)
	}
	p.PowerBudgetKW, p.CostBudgetUSDPerH = pb, cb
	return nil
}

// searchLimitsFrom sets the search part: pool sizes, seeds, precision,
// parallelism, exhaustiveness, what is kept, and the ownership costs.
func searchLimitsFrom(c *cli.Context, cfg *optimizeConfig, p *search.Problem) error {
	var err error
	if n := cfg.MaxMachines; n < 1 || n > 10000 {
		return badInputf("--max-machines must be from 1 to 10000, got %d", n)
	}
	p.MaxMachines = cfg.MaxMachines
	// A budget bounds the machine count already: unless --max-machines is
	// given, search up to what the budget buys.
	p.GrowToBudget = !cfg.given["max-machines"]
	if n := cfg.Seeds; n < 1 || n > 100 {
		return badInputf("--seeds must be from 1 to 100, got %d", n)
	}
	p.Seeds = cfg.Seeds
	if pr := cfg.Precision; !(pr > 0 && pr <= 0.5) {
		return badInputf("--precision must be in (0, 0.5], got %v", pr)
	}
	p.Precision = cfg.Precision
	if p.VerifyS, err = parseVerify(cfg.Verify); err != nil {
		return err
	}
	if j := c.Int("j"); j < 1 {
		return badInputf("-j must be at least 1, got %d", j)
	}
	p.Parallel = c.Int("j")
	p.Exhaustive = c.Bool("exhaustive")
	p.MaxKeptPoints = search.DefaultMaxKeptPoints
	// A simulation stops once its failure is certain, unless every
	// point's SLO figures are written (--points, --report): the optima, the
	// closest points and the figures, which read only feasible points'
	// figures, are the same.
	p.StopFailing = c.String("points") == "" && c.String("report") == ""
	p.Ownership, err = ownershipFromFlags(c)
	return err
}

// checkVerifyRequests refuses a --verify (flag's value v, verifyS
// seconds) whose check of what at rate would hold more requests than can
// be synthesized.
func checkVerifyRequests(v string, verifyS, rate float64, what string) error {
	if n := rate * verifyS; n > traces.MaxSynthesized {
		return badInputf("--verify %s at --rps %g checks %s on about %.3g requests, more than the %d that can be simulated: shorten --verify (or 0 for no check)",
			v, rate, what, n, traces.MaxSynthesized)
	}
	return nil
}

// checkVerifyLonger refuses a --verify (the flag's value v, verifyS
// seconds), given on the command line or by a plan, that is no longer
// than the traffic every simulation already runs (durationS): the check
// continues that traffic beyond its end, so it would check nothing, and a
// check asked for is never dropped silently. The default quarter hour
// beside a longer --duration is no such request: the runs already span
// it.
func checkVerifyLonger(c *cli.Context, v string, verifyS, durationS float64) error {
	if verifyS > 0 && verifyS <= durationS && isSet(c, "verify") {
		d := traces.SecondsText(durationS)
		return badInputf("--verify %s is no longer than the %s every simulation already runs (--duration): the check runs the same traffic continued past that, so it would check nothing; give more than %s, or 0 for no check",
			v, d, d)
	}
	return nil
}

// parseVerify reads --verify: a duration, or 0 for no check.
func parseVerify(v string) (float64, error) {
	return parseSecondsOrOff("verify", v, ": expected how much traffic a passing answer is checked over, like 1h or 30m (or 0 for no check)")
}

// simulationFrom sets the simulation and SLO parts: the catalog and its
// performance models, the model, the simulator's options, the SLOs and
// their reference machine.
func simulationFrom(c *cli.Context, pl *plan, cfg *optimizeConfig, p *search.Problem) error {
	p.Catalog, p.Perf = pl.Catalog, pl.perfSource()
	if _, err := pl.Catalog.Model(p.Model); err != nil {
		return badInputf("--model: %v", err)
	}
	compat, err := evaluator.ParseCompat(cfg.Compat)
	if err != nil {
		return badInputf("--compat: %v", err)
	}
	p.Options.Compat = compat
	if err := pl.checkCompatMemory(c, compat); err != nil {
		return err
	}
	if p.Options.Transfer, err = evaluator.ParseTransferMode(c.String("transfer")); err != nil {
		return badInputf("--transfer must be auto, serialized or layerwise, got %q", c.String("transfer"))
	}
	if p.Options.AbortDelayS, err = parseAbort(cfg.AbortAfter); err != nil {
		return err
	}
	if p.SLO, err = cfg.spec(); err != nil {
		return err
	}
	ref, err := pl.Catalog.ResolveMachine(cfg.SLOReference)
	if err != nil {
		return badInputf("--slo-reference: %v", err)
	}
	p.Reference = ref.Name
	return nil
}

// searchFrom builds the optimize configuration of c (with fallback as the
// goal when none is given) and its problem.
func searchFrom(c *cli.Context, fallback *optimizeConfig, designs []string) (*search.Problem, error) {
	pl, err := planFrom(c)
	if err != nil {
		return nil, err
	}
	cfg, err := optimizeConfigFrom(c, fallback)
	if err != nil {
		return nil, err
	}
	if pl.configModel != "" && !cfg.given["model"] {
		cfg.Model = pl.configModel
	}
	if designs != nil {
		cfg.Designs = designs
	}
	return problemFrom(c, pl, cfg)
}

// searchGCPercent is the garbage collector's target (GOGC) while a search
// or a sweep runs. A search keeps a small live heap (the workload's
// requests and the points found) and allocates about a megabyte a
// simulation that it drops at once, so at Go's default of 100 the
// collector runs every few simulations; at 400 it runs a quarter as often
// for at most five times the live heap (the paper evaluation: 8% less
// time, 24 → 40 MB). A GOGC set in the environment wins.
const searchGCPercent = 400

// searchMemoryLimit is the soft memory limit (GOMEMLIMIT) a search runs
// under with searchGCPercent: the collector runs as often as it must to
// stay under it, so that a search that keeps many points (--points,
// --plot, up to search.DefaultMaxKeptPoints) holds no more than five
// times their live heap while that is small and about this much when it
// is not.
const searchMemoryLimit = 512 << 20

// searchGC sets searchGCPercent unless the environment sets GOGC, with
// searchMemoryLimit unless it sets GOMEMLIMIT, and returns what restores
// the previous targets.
func searchGC() (restore func()) {
	if os.Getenv("GOGC") != "" {
		return func() {}
	}
	prev := debug.SetGCPercent(searchGCPercent)
	prevLimit := int64(-1)
	if os.Getenv("GOMEMLIMIT") == "" {
		prevLimit = debug.SetMemoryLimit(searchMemoryLimit)
	}
	return func() {
		debug.SetGCPercent(prev)
		if prevLimit >= 0 {
			debug.SetMemoryLimit(prevLimit)
		}
	}
}

func optimize(c *cli.Context) error {
	if err := noArgs(c); err != nil {
		return err
	}
	if !checkOnly(c.Context) {
		defer searchGC()()
	}
	format, spec, scheduled, err := optimizeOutputs(c)
	if err != nil {
		return err
	}
	p, err := searchFrom(c, nil, nil)
	if err != nil {
		return err
	}
	if scheduled {
		return optimizeSchedule(c, p, spec)
	}
	if c.String("pairs") != "" && !p.PruneDesigns {
		return badInputf("--pairs needs --gpus (the pairs are those of the GPUs it names)")
	}
	// The points CSV (and --report's points table) prints every point's
	// energy; otherwise only the reported points' is measured
	// (search.Problem.Options.Energy).
	p.Options.Energy = c.String("points") != "" || c.String("report") != ""
	// Only --points, --plot and --report read every point: without them an
	// exhaustive search keeps what it reports, in bounded memory.
	p.DropPoints = c.String("points") == "" && c.String("plot") == "" && c.String("report") == ""
	if robust, err := robustRequested(c); err != nil || robust {
		if err != nil {
			return err
		}
		return optimizeRobust(c, p, format) // optimize_robust.go
	}
	if checkOnly(c.Context) {
		return p.Validate()
	}
	prog := newProgress(c.App.ErrWriter)
	p.Progress = prog.update
	start := time.Now()
	res, err := search.Run(c.Context, p)
	prog.done()
	if err != nil && res != nil && res.Partial {
		return writePartial(c, res, p, err)
	}
	if err != nil {
		return explainSearchError(err, p)
	}
	return writeOptimize(c, res, p, format, time.Since(start))
}

// optimizeOutputs checks optimize's output flags before any search: the
// --format, the files and directories it will write, and the schedule
// (spec, and whether --schedule asked for one).
func optimizeOutputs(c *cli.Context) (format string, spec search.ScheduleSpec, scheduled bool, err error) {
	format = c.String("format")
	if format != "table" && format != "json" {
		return "", spec, false, badInputf("--format must be table or json, got %q", format)
	}
	if err := checkOutputs(c, "out", "points", "pairs", "sensitivity-out"); err != nil {
		return "", spec, false, err
	}
	if err := checkOutputDir(c, "plot"); err != nil {
		return "", spec, false, err
	}
	if spec, scheduled, err = scheduleSpecFrom(c); err != nil {
		return "", spec, false, err
	}
	if err := checkOutputs(c, "schedule-out"); err != nil {
		return "", spec, false, err
	}
	return format, spec, scheduled, checkReport(c)
}

// writeOptimize writes a search's answer: its files (--out, --points,
// --pairs), the table or JSON on stdout, the --plot figures and the
// --report.
func writeOptimize(c *cli.Context, res *search.Result, p *search.Problem, format string, elapsed time.Duration) error {
	if err := writeOptimizeFiles(c, res, p, func(f io.Writer) error { return report.WriteOptimaCSV(f, res, p.SLO) }); err != nil {
		return err
	}
	w := reportWriter(c, "out", "points", "pairs")
	if format == "json" {
		if err := report.WriteOptimaJSON(w, res, p); err != nil {
			return err
		}
	} else {
		report.PrintOptima(w, res, p, elapsed)
	}
	if dir := c.String("plot"); dir != "" {
		paths, err := report.WriteOptimizePlots(dir, res, p)
		if format != "json" {
			for _, path := range paths {
				fmt.Fprintf(w, "wrote     %s\n", path)
			}
		}
		if err != nil {
			return err
		}
	}
	return optimizeReport(c, res, p)
}

// writeOptimizeFiles writes optimize's files: --out with optima (the
// optima CSV, or the robust one), --points and --pairs.
func writeOptimizeFiles(c *cli.Context, res *search.Result, p *search.Problem, optima func(io.Writer) error) error {
	if path := c.String("out"); path != "" {
		if err := writeOutput(c.Context, path, c.App.Writer, optima); err != nil {
			return err
		}
	}
	if path := c.String("points"); path != "" {
		if err := writeOutput(c.Context, path, c.App.Writer, func(f io.Writer) error { return report.WritePointsCSV(f, res, p.SLO) }); err != nil {
			return err
		}
	}
	if path := c.String("pairs"); path != "" {
		recs, _, _, _ := report.PairsOf(res, p.Catalog)
		if err := writeOutput(c.Context, path, c.App.Writer, func(f io.Writer) error { return report.WritePairsCSV(f, recs) }); err != nil {
			return err
		}
	}
	return nil
}

// explainSearchError turns a search's errors about its input into bad
// input that says what to change: an exhaustive search too large to keep
// its points, a request drawn from a trace file (explainDrawn).
func explainSearchError(err error, p *search.Problem) error {
	var re *search.ReferenceError
	if errors.As(err, &re) {
		return badInputf("--slo-reference: %v", err)
	}
	if errors.Is(err, evaluator.ErrNoRequests) {
		if p.RateRPS == 0 { // a budget goal: the search chose the rate
			return badInputf("--duration %s: a rate the %s search tried draws no request in it (the search measures each design's capacity from low rates up): raise --duration, e.g. to 60s", traces.SecondsText(p.Workload.DurationS), p.Goal)
		}
		return badInputf("--rps %g over --duration %s draws no request: raise --rps or --duration", p.RateRPS, traces.SecondsText(p.Workload.DurationS))
	}
	var be *search.BudgetBeyondBoundError
	if errors.As(err, &be) {
		return badInputf("--cost-budget/--power-budget: %s: the budget buys more than %d machines of a pool, where optimize stops growing the space to the budget: give --max-machines N to search up to N machines a pool within the budget, or a smaller budget",
			be.Design, search.MaxGrownMachines)
	}
	var ke *search.KeptPointsError
	if errors.As(err, &ke) {
		return badInputf("--exhaustive: %d points in %d design spaces would be simulated and kept for --points, --plot or the figure (about %d MB; at most %d points): lower --max-machines, name fewer --designs or --gpus, or drop --points and --plot (optimize then keeps only each design's optimum, in bounded memory)",
			ke.Points, ke.Designs, int64(ke.Points)*search.KeptPointBytes>>20, ke.Limit)
	}
	return explainDrawn(err, p.Workload)
}

// partialError is an interrupted search's error once the designs it
// finished are written: it says what was written and unwraps to the
// interruption (context.Canceled).
type partialError struct {
	msg string
	err error
}

func (e *partialError) Error() string { return e.msg }
func (e *partialError) Unwrap() error { return e.err }

// writePartial writes to --out the designs an interrupted search finished
// (the CSV's partial column marks the file) and returns err, saying so.
func writePartial(c *cli.Context, res *search.Result, p *search.Problem, err error) error {
	path := c.String("out")
	if path == "" || len(res.Designs) == 0 {
		return err
	}
	// The run's context is done: write regardless, the file is small.
	werr := writeOutput(context.WithoutCancel(c.Context), path, c.App.Writer, func(f io.Writer) error {
		return report.WriteOptimaCSV(f, res, p.SLO)
	})
	if werr != nil {
		return fmt.Errorf("%w; writing the finished designs: %v", err, werr)
	}
	names := make([]string, len(res.Designs))
	for i, d := range res.Designs {
		names[i] = d.Design
	}
	return &partialError{err: err, msg: fmt.Sprintf("interrupted; wrote the %d of %d designs finished (%s) to %s, marked partial; not finished: %s",
		len(res.Designs), len(res.Designs)+len(res.Unfinished), strings.Join(names, ", "), path, strings.Join(res.Unfinished, ", "))}
}

// ownershipFromFlags reads the ownership-cost flags (goal tco), each
// checked with the flag named in the error (costpower.OwnershipFields).
func ownershipFromFlags(c *cli.Context) (costpower.Ownership, error) {
	o := costpower.Ownership{AmortizeYears: c.Float64("amortize-years"), PUE: c.Float64("pue"),
		ElectricityUSDPerKWh: c.Float64("electricity-price"), OpexUSDPerGPUH: c.Float64("opex-per-gpu-h")}
	for _, f := range costpower.OwnershipFields {
		if err := f.Check(o); err != nil {
			return o, badInputf("%v", err)
		}
	}
	return o, nil
}
