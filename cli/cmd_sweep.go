package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"runtime"
	"slices"
	"strconv"
	"strings"

	"github.com/urfave/cli/v2"

	"splitplan/costpower"
	"splitplan/evaluator"
	"splitplan/evaluator/perf/errmodel"
	"splitplan/plots"
	"splitplan/report"
	"splitplan/resolve"
	"splitplan/search"
	"splitplan/slo"
	"splitplan/traces"
)

// loadFlags are the flags of commands that run clusters over a range of
// rates: sweep and evaluate.
func loadFlags(defaultRPS string) []cli.Flag {
	flags := clusterFlags()
	flags = append(flags,
		&cli.StringSliceFlag{Name: "cluster", Usage: "a cluster `DESIGN:PROMPT:TOKEN` (Splitwise) or DESIGN:MACHINES (baseline); repeat for several, e.g. --cluster HH:35:5 --cluster Baseline-H100:40"},
		&cli.StringFlag{Name: "rps", Value: defaultRPS, Usage: "rates in req/s: START:STOP:STEP (inclusive) or a comma list, e.g. 20:140:10 or 20,50,80"},
	)
	for _, f := range workloadFlags(1) {
		if f.Names()[0] != "rps" {
			flags = append(flags, f)
		}
	}
	flags = append(flags, sloFlags(defaultSLOConfig())...)
	flags = append(flags, sloReferenceFlag(defaultSLOConfig()))
	flags = append(flags,
		&cli.StringFlag{Name: "abort-after", Value: defaultAbortAfter, Usage: "a run stops, unsustainable, once a request waited this long to start a phase (0 runs every simulation to the end)"},
		&cli.IntFlag{Name: "j", Value: defaultParallel(), Usage: "simulations run at once"},
		&cli.StringFlag{Name: "out", Usage: "write one row per cluster and rate to CSV `FILE`"},
		&cli.StringFlag{Name: "plot", Usage: "draw latency against load to `FILE` (.png or .svg); with --slo-scale, the goodput attainment against the SLO scale"},
		reportFlag(),
		&cli.StringFlag{Name: "slo-scale", Usage: "goodput attainment with every per-request limit (--ttft, --tpot, ...) scaled by each of these factors, START:STOP:STEP or a list, e.g. 0.5:2:0.25 (DistServe's SLO scale; needs --attainment)"},
		&cli.StringFlag{Name: "verify", Value: defaultVerify, Usage: "a row that meets every SLO must also meet them over this much of the same traffic (its run continued), as optimize checks its optima: a cluster can hold for minutes and tip over within the hour (0: no check)"},
		&cli.IntFlag{Name: "scenarios", Usage: "also judge every row in `N` scenarios, drawn as optimize --confidence draws them from --seed (each one draw of the performance model's validated error per GPU and phase and one workload seed): the SCENARIOS column counts those in which the cluster meets every SLO at the row's rate, over --verify too, and kW P10–P90 gives its average draw across them; how sure a given cluster is (0: none)"},
	)
	return flags
}

func sweepCommand() *cli.Command {
	return &cli.Command{
		Name:  "sweep",
		Usage: "latency percentiles and the SLO verdict of one or more clusters over a range of rates",
		UsageText: "splitplan sweep --design HH --prompt 35 --token 5 --rps 20:140:10 [--out sweep.csv] [--plot sweep.png]\n" +
			"splitplan sweep --cluster HH:35:5 --cluster Baseline-H100:40 --rps 20,40,60,80 --workload conversation",
		Flags:  categorized(loadFlags("20:140:10")),
		Action: sweep,
	}
}

func sweep(c *cli.Context) error {
	if err := noArgs(c); err != nil {
		return err
	}
	defer searchGC()()
	if err := checkLoadOutputs(c); err != nil {
		return err
	}
	ld, err := loadRunFromFlags(c, nil)
	if err != nil {
		return err
	}
	return ld.run(c, "Latency vs load")
}

// loadRun is a set of clusters run at a set of rates on one workload.
type loadRun struct {
	Clusters []resolve.Cluster
	Rates    []float64
	Workload *search.Workload
	Options  evaluator.Options
	SLO      slo.Spec
	Ref      slo.Reference
	RefName  string
	Model    string
	Parallel int
	// Notes are printed before the table (e.g. designs skipped).
	Notes []string
	// Physics says every cluster uses the analytic model (oneProvenance).
	Physics bool
	// Progress, when set, is told of each simulation finished (see
	// search.RunLoadProgress).
	Progress func(done, total int)
	// Scales are the SLO scales of --slo-scale: each row gets the goodput
	// attainment with the limits scaled by each.
	Scales []float64
	// VerifyS is --verify: the rows that meet every SLO are checked over
	// the traffic continued to this many seconds (search.VerifyLoad; 0, or
	// not beyond the workload's duration: no check). checkProgress, when
	// set, is told of each check finished.
	VerifyS       float64
	checkProgress func(done, total int)
	// Scenarios is --scenarios: every row is judged in this many of a
	// robust search's scenarios (search.ScenarioLoad; 0: none), which
	// took scenarioSims simulations; scenarioProgress, when set, is told
	// of each (row, scenario) judged.
	Scenarios        int
	scenarioSims     int
	scenarioProgress func(done, total int)
}

// loadRunFromFlags resolves the clusters (extra, then --cluster specs, then
// --design), the rates, the workload and the SLOs of sweep and evaluate.
func loadRunFromFlags(c *cli.Context, extra []resolve.Cluster) (*loadRun, error) {
	pl, err := planFrom(c)
	if err != nil {
		return nil, err
	}
	ld := &loadRun{Clusters: extra, Model: pl.modelName(c)}
	rates, err := parseRates(c.String("rps"))
	if err != nil {
		return nil, err
	}
	ld.Rates = rates
	if j := c.Int("j"); j < 1 {
		return nil, badInputf("-j must be at least 1, got %d", j)
	}
	ld.Parallel = c.Int("j")
	if err := ld.addClusters(c, pl, extra); err != nil {
		return nil, err
	}
	if err := ld.oneProvenance(pl, c.String("slo-reference")); err != nil {
		return nil, err
	}
	if len(ld.Clusters) == 0 && extra == nil {
		return nil, badInputf("no cluster: give --design with --prompt/--token or --machines, or --cluster DESIGN:PROMPT:TOKEN (designs: %s)",
			strings.Join(pl.Catalog.DesignNames(), ", "))
	}
	if err := ld.sloFrom(c, pl); err != nil {
		return nil, err
	}
	if ld.Workload, err = rateWorkload(workloadConfigOf(c), ld.Options.Compat); err != nil {
		return nil, err
	}
	if out := c.String("plot"); out != "" {
		if err := plots.CheckPath(out); err != nil {
			return nil, badInputf("--plot: %v", err)
		}
	}
	if ld.VerifyS, err = parseVerify(c.String("verify")); err != nil {
		return nil, err
	}
	if err := checkVerifyLonger(c, c.String("verify"), ld.VerifyS, ld.Workload.DurationS); err != nil {
		return nil, err
	}
	if ld.VerifyS > ld.Workload.DurationS {
		if err := checkVerifyRequests(c.String("verify"), ld.VerifyS, slices.Max(ld.Rates), "a row"); err != nil {
			return nil, err
		}
	}
	switch ld.Scenarios = c.Int("scenarios"); {
	case ld.Scenarios < 0 || ld.Scenarios > search.MaxScenarios:
		return nil, badInputf("--scenarios %d: expected 1 to %d (or 0 for none)", ld.Scenarios, search.MaxScenarios)
	case ld.Scenarios > 0 && ld.Options.Compat:
		return nil, badInputf("--scenarios scales the performance models, which --compat splitwise-sim reads as the reference's curves: drop one")
	}
	return ld, nil
}

// addClusters adds the clusters of the flags to extra's (evaluate --from):
// --design with its machine counts, then every --cluster, each with its
// batching policy, and sets the simulator's options.
func (ld *loadRun) addClusters(c *cli.Context, pl *plan, extra []resolve.Cluster) error {
	var err error
	if isSet(c, "design") {
		cl, opt, err := clusterFromFlags(c, pl)
		if err != nil {
			return err
		}
		ld.Clusters = append(ld.Clusters, cl)
		ld.Options = opt
	} else {
		for _, f := range []string{"prompt", "token", "machines"} {
			if isSet(c, f) {
				return badInputf("--%s needs --design (or give clusters as --cluster DESIGN:PROMPT:TOKEN)", f)
			}
		}
		if ld.Options, err = simOptionsFromFlags(c); err != nil {
			return err
		}
		if err := pl.checkCompatMemory(c, ld.Options.Compat); err != nil {
			return err
		}
	}
	pc, err := readPolicyFlags(c)
	if err != nil {
		return err
	}
	if !isSet(c, "design") {
		if err := pc.requireSarathi(); err != nil {
			return err
		}
	}
	for i := range extra { // from evaluate --from: their own suffix, else --policy
		cl := &ld.Clusters[i]
		cl.Policy = pc.forDesign(cl.Policy, cl.PolicyInName)
	}
	for _, spec := range c.StringSlice("cluster") {
		cl, err := parseClusterSpec(pl, spec, ld.Model, ld.perf(pl), pc)
		if err != nil {
			return err
		}
		ld.Clusters = append(ld.Clusters, cl)
	}
	seen := map[string]bool{}
	for _, cl := range ld.Clusters {
		if seen[cl.String()] {
			return badInputf("cluster %s is given twice", cl)
		}
		seen[cl.String()] = true
	}
	return nil
}

// sloFrom sets the SLO part: when a run stops, the SLOs and the reference
// machine's latencies they are measured against.
func (ld *loadRun) sloFrom(c *cli.Context, pl *plan) error {
	var err error
	if ld.Options.AbortDelayS, err = parseAbort(c.String("abort-after")); err != nil {
		return err
	}
	sc := defaultSLOConfig()
	if err := sc.readFlags(c, nil); err != nil {
		return err
	}
	if ld.SLO, err = sc.spec(); err != nil {
		return err
	}
	if isSet(c, "slo-scale") {
		if ld.SLO.Goodput == nil {
			return badInputf("--slo-scale scales goodput's per-request limits: give --attainment and --ttft, --tpot, --itl, --stall, --e2e or --queue")
		}
		if ld.Scales, err = parseRange("slo-scale", "scale factor", "0.5:2:0.25", "0.5,1,2", c.String("slo-scale")); err != nil {
			return err
		}
	}
	ld.RefName = c.String("slo-reference")
	if ld.Ref, err = sloReference(pl, ld.RefName, ld.Model, ld.perf(pl)); err != nil {
		return err
	}
	return nil
}

// oneProvenance resolves every cluster of the run, and the SLO reference
// refName, with the analytic model when one of their machine types has no
// profile (resolve.Source.ForSpace): one provenance per comparison.
func (ld *loadRun) oneProvenance(pl *plan, refName string) error {
	md, err := pl.Catalog.Model(ld.Model)
	if err != nil {
		return badInputf("--model: %v", err)
	}
	var space []costpower.Machine
	if m, err := pl.Catalog.ResolveMachine(refName); err == nil {
		space = append(space, m)
	}
	for _, cl := range ld.Clusters {
		space = append(space, cl.PromptType, cl.TokenType)
	}
	src := pl.perfSource().WithCompat(ld.Options.Compat).ForSpace(md, space)
	if !src.Physics {
		return nil
	}
	pl.physics, ld.Physics = true, true
	for i, cl := range ld.Clusters {
		// The same machines (already resolved: no name is looked up again),
		// their models from the analytic source.
		n, err := cl.WithSource(src)
		if err != nil {
			return badInputf("cluster %s: %v", cl, err)
		}
		ld.Clusters[i] = n
	}
	ld.Notes = append(ld.Notes, "one model for the whole comparison: a machine type has no profile, so every machine (and the SLO reference) uses the analytic model")
	return nil
}

// perf is the performance-model source of the run's clusters and SLO
// reference: the plan's, in the run's compat mode (chosen once, in
// Options.Compat).
func (ld *loadRun) perf(pl *plan) resolve.Source {
	return pl.perfSource().WithCompat(ld.Options.Compat)
}

// sloReference is the SLO reference of model on machine type refName,
// resolved by src (its compat mode the reference's).
func sloReference(pl *plan, refName, model string, src resolve.Source) (slo.Reference, error) {
	m, err := pl.Catalog.ResolveMachine(refName)
	if err != nil {
		return slo.Reference{}, badInputf("--slo-reference: %v", err)
	}
	md, err := pl.Catalog.Model(model)
	if err != nil {
		return slo.Reference{}, badInputf("--model: %v", err)
	}
	pm, _, err := src.Resolve(md, m)
	if err != nil {
		return slo.Reference{}, badInputf("--slo-reference %s: %v", m.Name, err)
	}
	return slo.Reference{Perf: pm, Compat: src.Compat}, nil
}

// parseClusterSpec reads DESIGN:PROMPT:TOKEN or DESIGN:MACHINES; the
// design may carry a batching policy, e.g. Baseline-H100+sarathi:40.
func parseClusterSpec(pl *plan, spec, model string, src resolve.Source, pc policyConfig) (resolve.Cluster, error) {
	parts := strings.Split(spec, ":")
	bad := func(format string, a ...any) error {
		return badInputf("--cluster %q: %s", spec, fmt.Sprintf(format, a...))
	}
	d, policy, named, err := resolve.Design(pl.Catalog, strings.TrimSpace(parts[0]))
	if err != nil {
		return resolve.Cluster{}, bad("%v", err)
	}
	want := 3
	if d.IsBaseline() {
		want = 2
	}
	if len(parts) != want {
		if d.IsBaseline() {
			return resolve.Cluster{}, bad("%s is a baseline: expected %s:MACHINES", d.Name, parts[0])
		}
		return resolve.Cluster{}, bad("%s is a Splitwise design: expected %s:PROMPT:TOKEN", d.Name, parts[0])
	}
	counts := make([]int, 2)
	for i, s := range parts[1:] {
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || n < 1 {
			return resolve.Cluster{}, bad("%q is not a machine count of at least 1", s)
		}
		counts[i] = n
	}
	if _, err := pl.Catalog.Model(model); err != nil {
		return resolve.Cluster{}, badInputf("--model: %v", err)
	}
	cl, err := resolve.ServingCluster(pl.Catalog, src, d, counts[0], counts[1], model)
	if err != nil {
		return resolve.Cluster{}, bad("%v", err)
	}
	cl.Policy, cl.PolicyInName = pc.forDesign(policy, named), named
	if err := policyFitsCluster(cl); err != nil {
		return resolve.Cluster{}, err
	}
	return cl, nil
}

// parseRates reads START:STOP:STEP (inclusive) or a comma list of rates.
func parseRates(s string) ([]float64, error) {
	return parseRange("rps", "number of requests per second", "20:140:10", "20,40,60", s)
}

// parseRange reads the values of flag, positive numbers of what: START:STOP:STEP
// (inclusive, like eg) or a comma list (like list).
func parseRange(flag, what, eg, list, s string) ([]float64, error) {
	pos := func(v string) (float64, error) {
		f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
		if err != nil || !(f > 0) || math.IsInf(f, 0) {
			return 0, badInputf("--%s: %q is not a positive %s (expected START:STOP:STEP like %s, or %s)", flag, v, what, eg, list)
		}
		return f, nil
	}
	var out []float64
	if strings.Contains(s, ":") {
		parts := strings.Split(s, ":")
		if len(parts) != 3 {
			return nil, badInputf("--%s: %q: expected START:STOP:STEP like %s", flag, s, eg)
		}
		var v [3]float64
		for i, p := range parts {
			f, err := pos(p)
			if err != nil {
				return nil, err
			}
			v[i] = f
		}
		if v[1] < v[0] {
			return nil, badInputf("--%s: %q: STOP %g is below START %g", flag, s, v[1], v[0])
		}
		n := int(math.Floor((v[1]-v[0])/v[2]+1e-9)) + 1
		if n > 1000 {
			return nil, badInputf("--%s: %q gives %d values; at most 1000", flag, s, n)
		}
		for i := 0; i < n; i++ {
			r := v[0] + float64(i)*v[2]
			out = append(out, math.Round(r*1e9)/1e9)
		}
		return out, nil
	}
	for _, p := range strings.Split(s, ",") {
		f, err := pos(p)
		if err != nil {
			return nil, err
		}
		out = append(out, f)
	}
	return out, nil
}

// simulate runs every cluster at every rate, -j at once, and checks the
// rows that meet every SLO over --verify (search.VerifyLoad); rows come
// back cluster by cluster, rate by rate, whatever the timing.
func (ld *loadRun) simulate(ctx context.Context) ([]search.LoadRow, error) {
	rows, err := search.RunLoadProgress(ctx, ld.Clusters, ld.Rates, ld.Workload, ld.Options, ld.SLO, ld.Ref, ld.Parallel, ld.Progress, ld.Scales...)
	if err == nil {
		err = search.VerifyLoad(ctx, ld.Clusters, ld.Rates, ld.Workload, ld.Options, ld.SLO, ld.Ref, ld.Parallel, ld.VerifyS, rows, ld.checkProgress)
	}
	if err = ld.inputError(err); err != nil {
		return nil, err
	}
	return rows, nil
}

// inputError turns a load run's error into the CLI's answer: a rate
// without requests, a workload that cannot give its requests, or a
// cluster that cannot serve one is bad input (the drawn request's file
// line named); any other error is returned as it is.
func (ld *loadRun) inputError(err error) error {
	var nr *search.NoRequestsError
	var we *search.WorkloadError
	var ue *evaluator.UnservableError
	if err = explainDrawn(err, ld.Workload); errors.As(err, new(usageError)) {
		return err
	}
	switch {
	case errors.As(err, &nr):
		return badInputf("--rps %g over --duration %gs gives no requests: raise either", nr.RPS, nr.DurationS)
	case errors.As(err, &we), errors.As(err, &ue):
		return badInput(err)
	}
	return err
}

// judgeScenarios judges every row in --scenarios scenarios
// (search.ScenarioLoad), drawn as optimize --confidence draws them from
// the workload's seed, with the model error the calibration validated.
func (ld *loadRun) judgeScenarios(ctx context.Context, rows []search.LoadRow) error {
	r := search.Robust{Scenarios: ld.Scenarios, Errors: errmodel.Builtin(), Seed: ld.Workload.Seed}
	n, err := search.ScenarioLoad(ctx, ld.Clusters, ld.Rates, ld.Workload, ld.Options, ld.SLO, ld.Ref, ld.Parallel, ld.VerifyS, r, rows, ld.scenarioProgress)
	ld.scenarioSims = n
	return ld.inputError(err)
}

// run simulates, writes --out and --plot, and prints the table.
func (ld *loadRun) run(c *cli.Context, title string) error {
	// Many clusters, rates or a long --duration simulate for seconds:
	// progress on a terminal.
	prog := newLineProgress(c.App.ErrWriter, c.Command.Name)
	ld.Progress = func(done, total int) { prog.update("simulations", done, total) }
	ld.checkProgress = func(done, total int) { prog.update("checks over "+traces.SecondsText(ld.VerifyS), done, total) }
	ld.scenarioProgress = func(done, total int) { prog.update(fmt.Sprintf("rows in %d scenarios", ld.Scenarios), done, total) }
	rows, err := ld.simulate(c.Context)
	if err == nil && ld.Scenarios > 0 {
		err = ld.judgeScenarios(c.Context, rows)
	}
	prog.done()
	ld.Progress, ld.checkProgress, ld.scenarioProgress = nil, nil, nil // cleared: nothing after may redraw it
	if err != nil {
		return err
	}
	if path := c.String("out"); path != "" {
		if err := writeOutput(c.Context, path, c.App.Writer, func(f io.Writer) error { return report.WriteLoadCSV(f, rows) }); err != nil {
			return err
		}
	}
	w := reportWriter(c, "out")
	fmt.Fprintf(w, "workload  %s sizes, %gs per rate, seed %d; model %s; SLOs against %s\n",
		ld.Workload.Sizes.Name(), ld.Workload.DurationS, ld.Workload.Seed, ld.Model, ld.RefName)
	for _, n := range ld.Notes {
		fmt.Fprintf(w, "note      %s\n", n)
	}
	if line := report.LoadVerifiedText(rows, ld.Workload.DurationS); line != "" {
		fmt.Fprintf(w, "verify    %s\n", line)
	}
	if line := report.LoadScenariosText(rows, ld.Workload, ld.VerifyS, ld.scenarioSims); line != "" {
		fmt.Fprintf(w, "scenarios %s\n", line)
	}
	report.PrintLoadTable(w, ld.Clusters, rows)
	if len(ld.Scales) > 0 {
		report.PrintAttainmentTable(w, ld.SLO, ld.Scales, rows)
	}
	if path := c.String("plot"); path != "" {
		fig := report.LatencyFigure(rows, ld.SLO, title, ld.subtitle())
		if len(ld.Scales) > 0 {
			fig = report.AttainmentFigure(rows, ld.SLO, ld.Scales, ld.subtitle())
		}
		if err := plots.Latency(path, fig); err != nil {
			return plotError("--plot", err, w)
		}
		fmt.Fprintf(w, "wrote     %s\n", path)
	}
	return loadReport(c, ld, rows, title)
}

func (ld *loadRun) subtitle() string {
	return fmt.Sprintf("%s, %s request sizes, %gs per rate, seed %d; slowdowns against %s; dashed: SLO limit",
		ld.Model, ld.Workload.Sizes.Name(), ld.Workload.DurationS, ld.Workload.Seed, ld.RefName)
}

// plotError turns a plots error into the CLI's answer: nothing feasible to
// draw is a valid answer (printed, exit 0), nothing at all is bad input.
func plotError(flag string, err error, w io.Writer) error {
	if isNoFeasible(err) {
		fmt.Fprintf(w, "no figure: %v\n", err)
		return nil
	}
	if isNoData(err) {
		return badInputf("%s: %v", flag, err)
	}
	if strings.Contains(err.Error(), "unknown figure format") {
		return badInputf("%s: %v", flag, err)
	}
	return err
}

// checkLoadOutputs checks sweep's and evaluate's --out and --plot before
// any simulation.
func checkLoadOutputs(c *cli.Context) error {
	if err := checkOutputs(c, "out"); err != nil {
		return err
	}
	if err := checkReport(c); err != nil {
		return err
	}
	return checkFigureOutput(c, "plot")
}

// checkFigureOutput checks a figure flag before any work: a .png or .svg
// name that can be written (not standard output).
func checkFigureOutput(c *cli.Context, flag string) error {
	path := c.String(flag)
	if path == "" {
		return nil
	}
	if err := plots.CheckPath(path); err != nil {
		return badInputf("--%s: %v", flag, err)
	}
	if _, err := resolveOutput(path); err != nil {
		return badInputf("--%s %s: %v", flag, path, err)
	}
	return nil
}

// defaultParallel is the default of -j: every CPU.
func defaultParallel() int { return runtime.NumCPU() }

func isNoFeasible(err error) bool { return errors.Is(err, plots.ErrNoFeasible) }

func isNoData(err error) bool { return errors.Is(err, plots.ErrNoData) }
