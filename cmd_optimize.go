package main

import (
	"fmt"
	"io"
	"math"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/urfave/cli/v2"

	"splitplan/evaluator"
	"splitplan/search"
	"splitplan/slo"
)

func init() { commands = append(commands, optimizeCommand) }

func optimizeCommand() *cli.Command {
	flags := []cli.Flag{
		&cli.StringFlag{Name: "goal", Usage: "cost or power (least at --rps), throughput (most req/s within --power-budget or --cost-budget), batch (most req/s per $ at saturation within a budget)"},
		&cli.Float64Flag{Name: "power-budget", Usage: "power budget in kW (goals throughput and batch)"},
		&cli.Float64Flag{Name: "cost-budget", Usage: "cost budget in $/h (goals throughput and batch)"},
		&cli.StringFlag{Name: "designs", Value: "all", Usage: "comma-separated designs to search (e.g. HH,HA,Baseline-H100), or all"},
		&cli.StringFlag{Name: "model", Value: "bloom-176b", Usage: "model served"},
		&cli.IntFlag{Name: "max-machines", Value: 160, Usage: "most machines in each pool (and in a baseline)"},
		&cli.IntFlag{Name: "seeds", Value: 1, Usage: "replicate the workload with seeds SEED, SEED+1, ...: a cluster must meet the SLOs on every one (more robust, N times the simulations)"},
		&cli.Float64Flag{Name: "precision", Value: 0.025, Usage: "relative precision of capacities (rates are searched on the grid (1+p)^k)"},
		&cli.IntFlag{Name: "j", Value: runtime.NumCPU(), Usage: "simulations run at once"},
		&cli.BoolFlag{Name: "exhaustive", Usage: "simulate every point of every design space (slow; for checking the pruned search)"},
		&cli.StringFlag{Name: "slo-ttft", Value: "2,3,6", Usage: "P50,P90,P99 TTFT slowdown limits against the reference machine"},
		&cli.StringFlag{Name: "slo-tbt", Value: "1.25,1.5,5", Usage: "P50,P90,P99 TBT slowdown limits"},
		&cli.StringFlag{Name: "slo-e2e", Value: "1.25,1.5,5", Usage: "P50,P90,P99 E2E slowdown limits"},
		&cli.StringFlag{Name: "slo-abs", Usage: "absolute limits in seconds replacing slowdowns, e.g. tbt_p99=0.2,ttft_p90=2"},
		&cli.StringFlag{Name: "slo-reference", Value: "DGX-A100", Usage: "machine type the slowdowns are measured against"},
		&cli.StringFlag{Name: "abort-after", Value: "30s", Usage: "a simulation stops, unsustainable, once a request waited this long to start a phase (0 runs every simulation to the end)"},
		&cli.StringFlag{Name: "compat", Usage: "splitwise-sim reproduces the reference simulator"},
		&cli.StringFlag{Name: "transfer", Value: evaluator.TransferAuto, Usage: "KV-cache transfer: auto, serialized or layerwise"},
		planFlag,
		&cli.StringFlag{Name: "format", Value: "table", Usage: "output: table or json"},
		&cli.StringFlag{Name: "out", Usage: "write the optima, one row per design, to CSV `FILE`"},
		&cli.StringFlag{Name: "points", Usage: "write every simulated point with its verdict to CSV `FILE`"},
		&cli.StringFlag{Name: "plot", Usage: "write the heatmaps, the Pareto (or cost/power by design) and the summary figures, PNG and SVG, into `DIR`"},
	}
	wf := workloadFlags(0)
	for _, f := range wf {
		if sf, ok := f.(*cli.Float64Flag); ok && sf.Name == "rps" {
			sf.Usage = "target rate in requests per second (goals cost and power)"
		}
		if sf, ok := f.(*cli.StringFlag); ok && sf.Name == "trace" {
			sf.Usage = "trace `FILE` whose (prompt, output) sizes are resampled at each rate"
		}
	}
	flags = append(flags, wf...)
	flags = append(flags, policyFlags()...)
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
		Flags:  flags,
		Action: optimize,
	}
}

// sloFromFlags builds the SLO spec from the --slo-* flags.
func sloFromFlags(c *cli.Context) (slo.Spec, error) {
	spec := slo.Default()
	pct := []float64{50, 90, 99}
	for _, m := range []slo.Metric{slo.TTFT, slo.TBT, slo.E2E} {
		flag := "slo-" + m.String()
		parts := strings.Split(c.String(flag), ",")
		if len(parts) != 3 {
			return spec, badInputf("--%s: expected three slowdown limits for P50,P90,P99 like 2,3,6, got %q", flag, c.String(flag))
		}
		for i, s := range parts {
			f, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
			if err != nil || !(f > 0) || math.IsInf(f, 0) {
				return spec, badInputf("--%s: %q is not a positive slowdown factor", flag, s)
			}
			for j := range spec.Targets {
				if spec.Targets[j].Metric == m && spec.Targets[j].Percentile == pct[i] {
					spec.Targets[j].Factor = f
				}
			}
		}
	}
	if abs := c.String("slo-abs"); abs != "" {
		for _, kv := range strings.Split(abs, ",") {
			k, v, ok := strings.Cut(strings.TrimSpace(kv), "=")
			sec, err := parseSeconds(v)
			if !ok || err != nil {
				return spec, badInputf("--slo-abs: %q: expected METRIC_pNN=SECONDS like tbt_p99=0.2 or tbt_p99=200ms", kv)
			}
			found := false
			for j := range spec.Targets {
				if spec.Targets[j].Key() == strings.ToLower(k) {
					spec.Targets[j].AbsoluteS, found = sec, true
				}
			}
			if !found {
				return spec, badInputf("--slo-abs: unknown SLO %q (one of ttft_p50, ttft_p90, ttft_p99, tbt_p50, ..., e2e_p99)", k)
			}
		}
	}
	if err := spec.Validate(); err != nil {
		return spec, badInput(err)
	}
	return spec, nil
}

// problemFromFlags turns the optimize flags into a search problem.
func problemFromFlags(c *cli.Context) (*search.Problem, error) {
	if err := applyOptimizeSection(c); err != nil {
		return nil, err
	}
	if c.String("goal") == "" {
		if c.IsSet("rps") || c.IsSet("power-budget") || c.IsSet("cost-budget") {
			return nil, badInputf("--goal is required: cost or power with --rps, throughput or batch with a budget")
		}
		return nil, badInputf("--goal is required (one of %s)", strings.Join(search.GoalNames(), ", "))
	}
	goal, err := search.ParseGoal(c.String("goal"))
	if err != nil {
		return nil, badInputf("--goal must be one of %s, got %q", strings.Join(search.GoalNames(), ", "), c.String("goal"))
	}
	p := &search.Problem{Goal: goal, Model: c.String("model")}
	rps, pb, cb := c.Float64("rps"), c.Float64("power-budget"), c.Float64("cost-budget")
	switch {
	case goal.NeedsRate():
		if !c.IsSet("rps") {
			return nil, badInputf("--goal %s needs --rps (the rate to serve)", goal)
		}
		if !(rps > 0) || math.IsInf(rps, 0) {
			return nil, badInputf("--rps must be a positive number of requests per second, got %v", rps)
		}
		if c.IsSet("power-budget") || c.IsSet("cost-budget") {
			return nil, badInputf("--goal %s takes --rps, not a budget (budgets are for --goal throughput or batch)", goal)
		}
		p.RateRPS = rps
	case goal.NeedsBudget():
		if c.IsSet("rps") {
			return nil, badInputf("--goal %s searches the rate itself: drop --rps, give --power-budget or --cost-budget", goal)
		}
		if c.IsSet("power-budget") == c.IsSet("cost-budget") {
			return nil, badInputf("--goal %s needs exactly one of --power-budget KW or --cost-budget USD_PER_H", goal)
		}
		if c.IsSet("power-budget") && (!(pb > 0) || math.IsInf(pb, 0)) {
			return nil, badInputf("--power-budget must be a positive number of kW, got %v", pb)
		}
		if c.IsSet("cost-budget") && (!(cb > 0) || math.IsInf(cb, 0)) {
			return nil, badInputf("--cost-budget must be a positive number of $/h, got %v", cb)
		}
		p.PowerBudgetKW, p.CostBudgetUSDPerH = pb, cb
	default:
		return nil, badInputf("--goal must be one of %s, got %q", strings.Join(search.GoalNames(), ", "), c.String("goal"))
	}
	if n := c.Int("max-machines"); n < 1 || n > 10000 {
		return nil, badInputf("--max-machines must be from 1 to 10000, got %d", n)
	}
	p.MaxMachines = c.Int("max-machines")
	if n := c.Int("seeds"); n < 1 || n > 100 {
		return nil, badInputf("--seeds must be from 1 to 100, got %d", n)
	}
	p.Seeds = c.Int("seeds")
	if pr := c.Float64("precision"); !(pr > 0 && pr <= 0.5) {
		return nil, badInputf("--precision must be in (0, 0.5], got %v", pr)
	}
	p.Precision = c.Float64("precision")
	if j := c.Int("j"); j < 1 {
		return nil, badInputf("-j must be at least 1, got %d", j)
	}
	p.Parallel = c.Int("j")
	p.Exhaustive = c.Bool("exhaustive")

	pl, err := loadPlan(c.String("plan"))
	if err != nil {
		return nil, err
	}
	p.Catalog, p.Perf = pl.Catalog, pl.Perf
	if _, err := pl.Catalog.Model(p.Model); err != nil {
		return nil, badInputf("--model: %v", err)
	}
	compat, err := evaluator.ParseCompat(c.String("compat"))
	if err != nil {
		return nil, badInputf("--compat: %v", err)
	}
	p.Options.Compat = compat
	switch t := c.String("transfer"); t {
	case evaluator.TransferAuto, evaluator.TransferSerialized, evaluator.TransferLayerwise:
		p.Options.Transfer = t
	default:
		return nil, badInputf("--transfer must be auto, serialized or layerwise, got %q", t)
	}
	if p.Options.AbortDelayS, err = abortFromFlags(c); err != nil {
		return nil, err
	}
	if p.SLO, err = sloFromFlags(c); err != nil {
		return nil, err
	}
	if _, err := pl.Catalog.Machine(c.String("slo-reference")); err != nil {
		return nil, badInputf("--slo-reference: %v", err)
	}
	p.Reference = c.String("slo-reference")

	names := pl.Catalog.DesignNames()
	if d := strings.TrimSpace(c.String("designs")); d != "" && !strings.EqualFold(d, "all") {
		names = nil
		for _, n := range strings.Split(d, ",") {
			if n = strings.TrimSpace(n); n != "" {
				names = append(names, n)
			}
		}
		if len(names) == 0 {
			return nil, badInputf("--designs: no design named")
		}
	}
	defPolicy, err := evaluator.ParsePolicy(c.String("policy"))
	if err != nil {
		return nil, badInputf("--policy: %v", err)
	}
	if defPolicy == evaluator.PolicyMixed {
		defPolicy = ""
	}
	seen := map[string]bool{}
	sarathi := defPolicy == evaluator.PolicySarathi
	for _, n := range names {
		spec, err := designSpec(pl, n, defPolicy)
		if err != nil {
			return nil, badInputf("--designs: %v", err)
		}
		if spec.Policy == evaluator.PolicySarathi {
			sarathi = true
		}
		if seen[strings.ToLower(spec.Label())] {
			return nil, badInputf("--designs: %s is named twice", spec.Label())
		}
		seen[strings.ToLower(spec.Label())] = true
		p.Designs = append(p.Designs, spec)
	}
	if err := sarathiFlags(c, sarathi, &p.Options); err != nil {
		return nil, err
	}
	for _, spec := range p.Designs {
		if spec.Policy != evaluator.PolicySarathi || p.Options.TBTSLOS <= 0 {
			continue
		}
		d, _ := pl.Catalog.Design(spec.Design)
		cl, err := evaluator.NewCluster(pl.Catalog, pl.Perf, d.Name, 1, map[bool]int{true: 0, false: 1}[d.IsBaseline()], p.Model, compat)
		if err != nil {
			return nil, badInputf("--designs %s: %v", spec.Label(), err)
		}
		o := p.Options
		o.Policy = spec.Policy
		if err := policyFitsCluster(cl, o); err != nil {
			return nil, err
		}
	}

	if p.Workload, err = rateWorkloadFromFlags(c, compat); err != nil {
		return nil, err
	}
	return p, nil
}

// designSpec resolves a design name, with an optional batching-policy
// suffix ("Baseline-H100+sarathi"), against the catalog; a name without a
// suffix gets defPolicy ("" for the default).
func designSpec(pl *plan, name, defPolicy string) (search.DesignSpec, error) {
	design, policy, err := evaluator.SplitDesignPolicy(name)
	if err != nil {
		return search.DesignSpec{}, err
	}
	d, err := pl.Catalog.Design(design)
	if err != nil {
		return search.DesignSpec{}, err
	}
	if !strings.Contains(name, "+") {
		policy = defPolicy
	}
	if policy == evaluator.PolicyMixed {
		policy = ""
	}
	return search.DesignSpec{Design: d.Name, Policy: policy}, nil
}

// sarathiFlags reads --token-budget and --tbt-slo, which need the sarathi
// policy on some design.
func sarathiFlags(c *cli.Context, sarathi bool, opt *evaluator.Options) error {
	if !c.IsSet("token-budget") && !c.IsSet("tbt-slo") {
		return nil
	}
	if !sarathi {
		return badInputf("--token-budget and --tbt-slo apply to the sarathi policy: give --policy sarathi or a design like Baseline-H100+sarathi")
	}
	// policyFromFlags validates the values against --policy sarathi.
	var o evaluator.Options
	if err := c.Set("policy", evaluator.PolicySarathi); err != nil {
		return err
	}
	if err := policyFromFlags(c, &o); err != nil {
		return err
	}
	opt.TokenBudget, opt.TBTSLOS = o.TokenBudget, o.TBTSLOS
	return nil
}

func optimize(c *cli.Context) error {
	if err := noArgs(c); err != nil {
		return err
	}
	format := c.String("format")
	if format != "table" && format != "json" {
		return badInputf("--format must be table or json, got %q", format)
	}
	p, err := problemFromFlags(c)
	if err != nil {
		return err
	}
	prog := newProgress(c.App.ErrWriter)
	p.Progress = prog.update
	start := time.Now()
	res, err := search.Run(c.Context, p)
	prog.done()
	if err != nil {
		return err
	}
	elapsed := time.Since(start)
	if path := c.String("out"); path != "" {
		if err := writeFileAtomic(path, func(f *os.File) error { return writeOptimaCSV(f, res, p) }); err != nil {
			return err
		}
	}
	if path := c.String("points"); path != "" {
		if err := writeFileAtomic(path, func(f *os.File) error { return writePointsCSV(f, res, p) }); err != nil {
			return err
		}
	}
	if format == "json" {
		if err := writeOptimaJSON(c.App.Writer, res, p); err != nil {
			return err
		}
	} else {
		printOptima(c.App.Writer, res, p, elapsed)
	}
	if dir := c.String("plot"); dir != "" {
		paths, err := writeOptimizePlots(dir, res, p)
		if format != "json" {
			for _, path := range paths {
				fmt.Fprintf(c.App.Writer, "wrote     %s\n", path)
			}
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// progress shows a search's progress on stderr: a self-rewriting line on
// a terminal once the search has run a second, a plain line every 10 s
// otherwise.
type progress struct {
	w        io.Writer
	terminal bool
	start    time.Time
	mu       sync.Mutex
	last     time.Time
	shown    bool
}

func newProgress(w io.Writer) *progress {
	pr := &progress{w: w, start: time.Now()}
	if f, ok := w.(*os.File); ok {
		if st, err := f.Stat(); err == nil && st.Mode()&os.ModeCharDevice != 0 {
			pr.terminal = true
		}
	}
	return pr
}

func (pr *progress) update(p search.Progress) {
	pr.mu.Lock()
	defer pr.mu.Unlock()
	now := time.Now()
	since := now.Sub(pr.start)
	interval := 100 * time.Millisecond
	if !pr.terminal {
		interval = 10 * time.Second
	}
	if since < time.Second || now.Sub(pr.last) < interval {
		return
	}
	pr.last = now
	line := fmt.Sprintf("optimize: %s, %d simulations, %d points pruned", since.Round(time.Second), p.Simulations, p.Pruned)
	if p.Best != "" {
		line += fmt.Sprintf("; best so far in %s: %s", p.Design, p.Best)
	}
	if pr.terminal {
		fmt.Fprintf(pr.w, "\r\033[K%s", line)
		pr.shown = true
	} else if since >= 10*time.Second {
		fmt.Fprintln(pr.w, line)
	}
}

func (pr *progress) done() {
	pr.mu.Lock()
	defer pr.mu.Unlock()
	if pr.shown {
		fmt.Fprint(pr.w, "\r\033[K")
	}
}
