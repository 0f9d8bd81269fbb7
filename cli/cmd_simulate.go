package cli

import (
	"io"
	"math"
	"splitplan/resolve"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"splitplan/costpower"
	"splitplan/evaluator"
	"splitplan/report"
	"splitplan/traces"
)

// clusterFlags choose a design and its machine counts.
func clusterFlags() []cli.Flag {
	return append([]cli.Flag{
		&cli.StringFlag{Name: "design", Usage: "design: Baseline-A100, Baseline-H100, Splitwise-AA/HH/HA/HHcap (or AA, HH, HA, HHcap, A100, H100), one from --plan, or any optimize prints (e.g. Baseline-H100-tp2, Splitwise-H200-tp1-H100-tp2, Splitwise-HH@100-70)"},
		unsetInt{&cli.IntFlag{Name: "prompt", Usage: "prompt machines of a Splitwise design"}},
		unsetInt{&cli.IntFlag{Name: "token", Usage: "token machines of a Splitwise design"}},
		unsetInt{&cli.IntFlag{Name: "machines", Usage: "machines of a baseline design"}},
		&cli.StringFlag{Name: "model", Value: defaultModel, Usage: "model served: bloom-176b, llama2-70b (profiled), any built-in architecture (catalog lists them) or one from --plan"},
		modelConfigFlag,
		&cli.StringFlag{Name: "compat", Usage: "splitwise-sim reproduces the reference simulator (its fit, KV sizing, transfers and trace generator)"},
		&cli.StringFlag{Name: "transfer", Value: evaluator.TransferAuto.String(), Usage: "KV-cache transfer: auto (layer-wise from 512 prompt tokens), serialized or layerwise"},
		planFlag,
		memoryUtilizationFlag,
		kernelsFitFlag,
	}, policyFlags()...)
}

// simOptionsFromFlags reads --compat and --transfer: the simulator's
// options (every command that simulates has both flags).
func simOptionsFromFlags(c *cli.Context) (evaluator.Options, error) {
	var opt evaluator.Options
	compat, err := evaluator.ParseCompat(c.String("compat"))
	if err != nil {
		return opt, badInputf("--compat: %v", err)
	}
	opt.Compat = compat
	if opt.Transfer, err = evaluator.ParseTransferMode(c.String("transfer")); err != nil {
		return opt, badInputf("--transfer must be auto, serialized or layerwise, got %q", c.String("transfer"))
	}
	return opt, nil
}

// clusterFromFlags resolves the cluster flags against the plan: the
// design (with its policy suffix, or --policy), its machine counts and
// the model.
func clusterFromFlags(c *cli.Context, p *plan) (resolve.Cluster, evaluator.Options, error) {
	opt, err := simOptionsFromFlags(c)
	if err != nil {
		return resolve.Cluster{}, opt, err
	}
	if err := p.checkCompatMemory(c, opt.Compat); err != nil {
		return resolve.Cluster{}, opt, err
	}
	if !isSet(c, "design") {
		return resolve.Cluster{}, opt, badInputf("--design is required (one of %s)", strings.Join(p.Catalog.DesignNames(), ", "))
	}
	d, suffix, named, err := resolve.Design(p.Catalog, c.String("design"))
	if err != nil {
		return resolve.Cluster{}, opt, badInputf("--design: %v", err)
	}
	var prompt, token int
	if d.IsBaseline() {
		if isSet(c, "prompt") || isSet(c, "token") {
			return resolve.Cluster{}, opt, badInputf("%s is a baseline: give --machines N, not --prompt/--token", d.Name)
		}
		if !isSet(c, "machines") || c.Int("machines") < 1 || c.Int("machines") > costpower.MaxPoolMachines {
			return resolve.Cluster{}, opt, badInputf("--machines must be from 1 to %d for %s, got %d", costpower.MaxPoolMachines, d.Name, c.Int("machines"))
		}
		prompt = c.Int("machines")
	} else {
		if isSet(c, "machines") {
			return resolve.Cluster{}, opt, badInputf("%s is a Splitwise design: give --prompt P --token T, not --machines", d.Name)
		}
		for _, f := range []string{"prompt", "token"} {
			if !isSet(c, f) || c.Int(f) < 1 || c.Int(f) > costpower.MaxPoolMachines {
				return resolve.Cluster{}, opt, badInputf("--%s must be from 1 to %d for %s, got %d", f, costpower.MaxPoolMachines, d.Name, c.Int(f))
			}
		}
		prompt, token = c.Int("prompt"), c.Int("token")
	}
	cl, err := resolve.ServingCluster(p.Catalog, p.perfSource().WithCompat(opt.Compat), d, prompt, token, p.modelName(c))
	if err != nil {
		return resolve.Cluster{}, opt, badInputf("--model/--design: %v", err)
	}
	pc, err := readPolicyFlags(c)
	if err != nil {
		return resolve.Cluster{}, opt, err
	}
	if named {
		if pc.Named && pc.Policy.Kind != suffix.Kind {
			return resolve.Cluster{}, opt, badInputf("--design %s names the %s policy, --policy %s another: give one", c.String("design"), suffix, c.String("policy"))
		}
		pc.Policy.Kind = suffix.Kind
	}
	if err := pc.requireSarathi(); err != nil {
		return resolve.Cluster{}, opt, err
	}
	cl.Policy = pc.Policy
	if err := policyFitsCluster(cl); err != nil {
		return resolve.Cluster{}, opt, err
	}
	return cl, opt, nil
}

func simulateCommand() *cli.Command {
	flags := append(clusterFlags(), workloadFlags(70)...)
	flags = append(flags,
		&cli.StringFlag{Name: "out", Usage: "write one row per request to CSV `FILE`"},
		&cli.StringFlag{Name: "machines-out", Usage: "write one row per machine to CSV `FILE`"},
		reportFlag(),
	)
	return &cli.Command{
		Name:      "simulate",
		Usage:     "simulate one cluster serving one workload and print its latencies",
		UsageText: "splitplan simulate --design HH --prompt 35 --token 5 [--workload coding --rps 70 --duration 120s --seed 0 | --trace FILE] [--out requests.csv]",
		Flags:     categorized(flags),
		Action:    simulate,
	}
}

func simulate(c *cli.Context) error {
	if err := noArgs(c); err != nil {
		return err
	}
	if err := checkOutputs(c, "out", "machines-out"); err != nil {
		return err
	}
	if err := checkReport(c); err != nil {
		return err
	}
	p, err := planFrom(c)
	if err != nil {
		return err
	}
	cl, opt, err := clusterFromFlags(c, p)
	if err != nil {
		return err
	}
	wl, err := loadWorkload(c, opt.Compat)
	if err != nil {
		return err
	}
	opt.Energy = true // the summary and the machines CSV print it
	// Without a per-request file, each request's latencies are all the
	// summary reads: 48 bytes a request instead of 128; and beyond
	// streamedRequests, none at all (the summary's distributions are
	// streamed, within 0.78%): memory does not grow with the requests.
	opt.LatenciesOnly = c.String("out") == ""
	opt.Streamed = opt.LatenciesOnly && len(wl.Requests) > streamedRequests && c.String("report") == ""
	// A million-request trace simulates for tens of seconds: progress on
	// a terminal, in simulated seconds of the arrivals' span.
	prog, update := simulationProgress(c.App.ErrWriter, "simulate", wl.Requests)
	defer prog.done()
	opt.Progress = update
	start := time.Now()
	res, err := evaluator.EvaluateContext(c.Context, cl.Sim(), wl.Requests, opt)
	if err != nil {
		return wl.explain(err)
	}
	elapsed := time.Since(start)
	if path := c.String("out"); path != "" {
		err := writeOutput(c.Context, path, c.App.Writer, func(f io.Writer) error {
			lw := &lineCounter{w: f, step: 1 << 16, report: func(n int) { prog.update("writing requests", n, len(res.Requests)) }}
			return evaluator.WriteRequestsCSV(lw, res)
		})
		if err != nil {
			return err
		}
	}
	prog.done()
	if path := c.String("machines-out"); path != "" {
		if err := writeOutput(c.Context, path, c.App.Writer, func(f io.Writer) error { return evaluator.WriteMachinesCSV(f, res) }); err != nil {
			return err
		}
	}
	report.PrintSimulation(reportWriter(c, "out", "machines-out"), cl, wl.Source, wl.Varying, opt, wl.Requests, res, elapsed)
	return simulateReport(c, cl, wl, opt, res)
}

// simulationProgress returns the progress line of command name simulating
// reqs and the evaluator.Options.Progress that updates it, in simulated
// seconds of the arrivals' span: shown on a terminal only.
// streamedRequests is the most requests simulate summarizes exactly
// without a per-request file: beyond, it streams them (Options.Streamed).
const streamedRequests = 250_000

func simulationProgress(w io.Writer, name string, reqs []traces.Request) (*lineProgress, func(simulatedS float64)) {
	prog := newLineProgress(w, name)
	span := 0
	if len(reqs) > 0 {
		span = int(math.Ceil(reqs[len(reqs)-1].Arrival))
	}
	return prog, func(t float64) {
		if t <= float64(span) {
			prog.update("simulated seconds", int(t), span)
		} else { // arrivals over, queues still draining
			prog.update("simulated seconds, draining after the last arrival", int(t), span)
		}
	}
}
