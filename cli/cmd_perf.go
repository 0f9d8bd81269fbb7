package cli

import (
	"fmt"
	"io"
	"math"
	"os"
	"splitplan/evaluator/perf/measured"
	"strings"

	"github.com/urfave/cli/v2"

	"splitplan/evaluator/perf"
	"splitplan/evaluator/perf/analytic"
	"splitplan/evaluator/perf/power"
	"splitplan/hw"
	"splitplan/report"
)

// sharedProfilePath is the shipped profile, relative to a working
// directory at the repository root (the data lives beside the repository).
const sharedProfilePath = "../shared/data/splitwise-profiles/perf_model.csv"

// perfHardwareAliases maps the short hardware names a user may type to the
// profiles' hardware names.
var perfHardwareAliases = map[string]string{
	"a100":      "a100-80gb",
	"h100":      "h100-80gb",
	"h100cap":   "h100-80gb-pcap",
	"h100-cap":  "h100-80gb-pcap",
	"h100-pcap": "h100-80gb-pcap",
}

// perfCommand is `splitplan perf`: fit, validate and query the performance
// model.
func perfCommand() *cli.Command {
	profile := &cli.StringFlag{Name: "profile", Usage: "profiling CSV `FILE` (model,hardware,prompt_size,batch_size,token_size,...,prompt_time,token_time,...,tensor_parallel; times in ms)"}
	return &cli.Command{
		Name:  "perf",
		Usage: "the performance model: fit a profile, validate the fit, query iteration times",
		Subcommands: []*cli.Command{
			perfQueryCommand(profile),
			{
				Name:      "validate",
				Usage:     "the fit's mean absolute percentage error on held-out rows (80:20 split per pair)",
				UsageText: "splitplan perf validate [--profile FILE] [--seed S] [--format table|csv]",
				Description: "Fits the default model on 80% of each pair's rows and predicts the other 20%.\n" +
					"The compat columns are the SplitwiseSim fit used as the simulator uses it.\n" +
					"Default profile: " + sharedProfilePath + " (relative to the working directory).",
				Flags: []cli.Flag{profile,
					&cli.Uint64Flag{Name: "seed", Value: 1, Usage: "random seed of the train:test split"},
					&cli.StringFlag{Name: "format", Value: "table", Usage: "output format: table or csv"},
					&cli.Float64Flag{Name: "mixed-penalty", Value: perf.DefaultMixedPenalty, Usage: "mixed-iteration penalty factor (> 0)"},
					&cli.StringFlag{Name: "measured", Usage: "measured serving benchmarks `FILE` (serving_benchmarks.csv format): predict every row with the analytic model and the embedded (or --calibration) efficiencies, never fitting on FILE"},
					&cli.StringFlag{Name: "calibration", Usage: "calibration TOML `FILE` written by perf calibrate (with --measured; default: the embedded one)"},
					&cli.StringFlag{Name: "cross-validate", Usage: "with --measured: `gpu` or `model` — refit with each GPU (or model) of FILE left out in turn and report the held-out error (median per cell and pooled), beside a two-parameter roofline fitted on the same folds, and each engine's share of rows predicted too slow"},
					&cli.StringFlag{Name: "out", Usage: "with --measured: write one row per benchmark to CSV `FILE` (id,predicted_ttft_ms,predicted_tpot_ms,provenance,reason,launch_flags)"},
					&cli.StringFlag{Name: "kernels", Usage: "kernel measurements `FILE` (kernels.csv or mixed.csv format of ../shared/data/gpu-kernels): median and P90 error of the kernel layer (--engine none) over its prefill, decode and mixed rows, held out and in the fit"},
					&cli.StringFlag{Name: "hardware", Usage: "with --kernels, --moe-kernels or --gdn-kernels: the GPU `NAME` FILE was measured on (--kernels: default the one the meta.json beside FILE names, required without one; the others: required)"},
					&cli.StringFlag{Name: "kernels-fit", Usage: "with --kernels: validate this perf fit --kernels TOML `FILE` instead of the embedded kernel layer"},
					&cli.StringFlag{Name: "gdn-kernels", Usage: "Gated DeltaNet kernel measurements `FILE` (data/gdn-kernels format, gzip when it ends in .gz; --hardware names the GPU): median and P90 error of the linear-attention layers' kernel times (kernel.GDNTime: each generation's constants, bounded by the GPUs of lesser specs) on its prompt and decode rows"},
					&cli.StringFlag{Name: "moe-kernels", Usage: "MoE kernel measurements `FILE` (data/moe-kernels format, gzip when it ends in .gz; --hardware names the GPU): median and P90 error of the engines' measured MoE kernels on its rows, per kernel"},
				},
				Action: perfValidate,
			},
			{
				Name:      "calibrate",
				Usage:     "fit the serving engines' host-side terms on measured serving benchmarks, the physics held fixed",
				UsageText: "splitplan perf calibrate --measured FILE [--profile FILE] [--held-out] --out calibration.toml",
				Description: "Fits, per serving engine and shared by every GPU, the engine terms (seconds per iteration, per\n" +
					"layer, per prompt iteration, per sequence) and the serving latency (per request, iterations waited,\n" +
					"per client), and one host-speed factor per GPU generation (hopper = 1, held near 1), by Nelder-Mead\n" +
					"on half the absolute relative plus half the absolute log error of the predicted TTFT and TPOT of\n" +
					"the runs of FILE (each simulated as the closed-loop benchmark it was). The compute, memory and\n" +
					"link efficiencies are never fitted here: one GPU-independent value carried to each GPU by its\n" +
					"spec sheet. The embedded calibration is this command's output on the shipped benchmarks with\n" +
					"--held-out (go generate).",
				Flags: []cli.Flag{
					&cli.StringFlag{Name: "measured", Usage: "measured serving benchmarks `FILE` (required)"},
					&cli.StringFlag{Name: "profile", Usage: "also fit the GPUs of this SplitwiseSim profiling CSV `FILE` that FILE has no runs of (their iteration times, stored under the vllm engine)"},
					&cli.StringFlag{Name: "out", Usage: "calibration TOML `FILE` to write (required)"},
					&cli.BoolFlag{Name: "held-out", Usage: "also measure each engine's error on a GPU left out of the fit (a refit per GPU of FILE: seconds) and store it, so a GPU without runs quotes it in its spec-only provenance"},
				},
				Action: perfCalibrate,
			},
			{
				Name:      "fit",
				Usage:     "fit a profile and write its [[perf]] pairs as TOML (for --fitted or a --plan file)",
				UsageText: "splitplan perf fit --profile FILE.csv --out FILE.toml [--mixed-penalty 1.1]\nsplitplan perf fit --kernels FILE.csv [--kernels FILE.csv ...] [--hardware GPU] --out FILE.toml",
				Flags: []cli.Flag{profile,
					&cli.StringFlag{Name: "out", Usage: "TOML `FILE` to write (required)"},
					&cli.Float64Flag{Name: "mixed-penalty", Value: perf.DefaultMixedPenalty, Usage: "mixed-iteration penalty factor (> 0)"},
					&cli.StringSliceFlag{Name: "kernels", Usage: "fit the kernel layer of one GPU on its kernel measurements `FILE` (kernels.csv format, as tools/gpu-profile writes; repeatable: several runs on one GPU, fitted together) instead of a profile; --out gets a TOML for --kernels-fit (optimize, simulate, sweep, evaluate, perf query)"},
					&cli.StringFlag{Name: "hardware", Usage: "with --kernels: the GPU `NAME` FILE was measured on (default: the one the meta.json beside each FILE names, which must agree; required without one)"},
				},
				Action: perfFit,
			},
		},
	}
}

// perfQueryCommand is perf query; profile is the --profile flag the perf
// commands share.
func perfQueryCommand(profile cli.Flag) *cli.Command {
	return &cli.Command{
		Name:      "query",
		Usage:     "the time of one prompt or decode iteration",
		UsageText: "splitplan perf query --hardware H [--model M] [--tp N] (--prompt-tokens N | --decode-batch B [--context-tokens C]) [--compat splitwise-sim] [--profile FILE.csv | --fitted FILE.toml]",
		Description: "Without --profile or --fitted the built-in models (fitted from the shipped profiles) answer;\n" +
			"for a model or GPU no profile covers, the analytic model (any built-in or --model-config\n" +
			"model on any GPU of the catalog's spec sheets: a100, h100, h200, b200, b300, gb200, gb300,\n" +
			"l40s, mi300x) with the calibration of that GPU, or of its nearest calibrated relative.\n" +
			"--context-tokens is the total context (prompt + tokens generated so far) of all the\n" +
			"requests in the batch; without it every request is at the profile's base context.\n" +
			"Hardware: a100-80gb, h100-80gb, h100-80gb-pcap or the short forms a100, h100, h100cap.",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "model", Value: defaultModel, Usage: "model `NAME`"},
			&cli.StringFlag{Name: "hardware", Usage: "hardware `NAME` (required)"},
			&cli.IntFlag{Name: "tp", Value: 8, Usage: "tensor parallelism: `N` GPUs of one node per replica (N divides the model's attention heads and the node's GPUs)"},
			&cli.IntFlag{Name: "prompt-tokens", Usage: "query a prompt iteration of `N` prompt tokens in all"},
			&cli.IntFlag{Name: "decode-batch", Usage: "query a decode iteration of `B` decoding requests"},
			&cli.Int64Flag{Name: "context-tokens", Usage: "total context `TOKENS` of the decoding requests (with --decode-batch)"},
			&cli.StringFlag{Name: "compat", Usage: "`MODE` splitwise-sim: the reference simulator's fit"},
			profile,
			&cli.StringFlag{Name: "fitted", Usage: "TOML `FILE` of [[perf]] pairs written by perf fit"},
			&cli.StringFlag{Name: "calibration", Usage: "calibration TOML `FILE` for the analytic model (default: the embedded one)"},
			&cli.StringFlag{Name: "engine", Value: "vllm", Usage: "serving `ENGINE` whose calibration the analytic model uses: vllm, sglang or trtllm; none: the kernel layer alone (per-GPU share, no all-reduce, no engine)"},
			&cli.BoolFlag{Name: "breakdown", Usage: "print the analytic model's terms: kernel layer (GEMMs, attention, KV read, per-layer, LM head), communication, engine"},
			&cli.StringFlag{Name: "kernels-fit", Usage: "kernel-layer TOML `FILE` written by perf fit --kernels: the GPU's own measured kernel layer"},
			&cli.StringFlag{Name: "precision", Usage: "analytic model: the `PRECISION` the model is served at, bf16, fp8, fp4 or int4 (its weights; the KV cache fp8 with fp8 or fp4 weights, else bf16, as a plan's precision key); default the precision its checkpoint ships in"},
			modelConfigFlag,
			memoryUtilizationFlag,
		},
		Action: perfQuery,
	}
}

// perfHardware resolves a --hardware value to a profile hardware name.
func perfHardware(s string) string {
	s = strings.ToLower(strings.TrimSpace(s))
	if h, ok := perfHardwareAliases[s]; ok {
		return h
	}
	return s
}

// perfPenalty checks --mixed-penalty.
func perfPenalty(c *cli.Context) (float64, error) {
	pen := c.Float64("mixed-penalty")
	if !(pen > 0) || math.IsInf(pen, 0) {
		return 0, badInputf("--mixed-penalty %v: expected a positive finite factor, e.g. 1.1", pen)
	}
	return pen, nil
}

// perfReadProfile reads a profile named by a flag; every failure is bad input.
func perfReadProfile(path string) ([]perf.ProfileRow, error) {
	rows, err := perf.ReadProfileFile(path)
	if err != nil {
		return nil, badInputf("--profile: %v", err)
	}
	return rows, nil
}

// perfTable returns the pairs a query consults: those of --profile or
// --fitted when given, else the built-in ones.
func perfTable(c *cli.Context) (*perf.Table, string, error) {
	switch {
	case isSet(c, "profile") && isSet(c, "fitted"):
		return nil, "", badInputf("--profile and --fitted are exclusive: give at most one of them")
	case isSet(c, "profile"):
		path := c.String("profile")
		rows, err := perfReadProfile(path)
		if err != nil {
			return nil, "", err
		}
		pairs, err := perf.Fit(rows, perf.DefaultMixedPenalty)
		if err != nil {
			return nil, "", badInputf("--profile %s: %v", path, err)
		}
		return &perf.Table{Pairs: pairs}, "fitted from " + path, nil
	case isSet(c, "fitted"):
		path := c.String("fitted")
		f, err := os.Open(path)
		if err != nil {
			return nil, "", badInputf("--fitted: %v", err)
		}
		defer f.Close()
		pairs, err := perf.DecodePairs(f, path)
		if err != nil {
			return nil, "", badInputf("--fitted: %v", err)
		}
		if len(pairs) == 0 {
			return nil, "", badInputf("--fitted %s: no [[perf]] pair in it (perf fit --out writes them)", path)
		}
		return &perf.Table{Pairs: pairs}, "from " + path, nil
	}
	return perf.Builtin(), "built-in", nil
}

// perfQuery is `splitplan perf query`.
func perfQuery(c *cli.Context) error {
	if err := noArgs(c); err != nil {
		return err
	}
	q, err := perfQueryFrom(c)
	if err != nil {
		return err
	}
	if c.Bool("breakdown") || isSet(c, "kernels-fit") || strings.EqualFold(strings.TrimSpace(c.String("engine")), "none") {
		if q.compat || isSet(c, "profile") || isSet(c, "fitted") {
			return badInputf("--breakdown, --engine none and --kernels-fit query the analytic model: not with --compat, --profile or --fitted")
		}
		if done, err := perfQueryKernel(c, q.model, q.hw, q.tp); done || err != nil {
			return err
		}
		return badInputf("--hardware %s: --breakdown, --engine none and --kernels-fit need a GPU spec (a100, h100, h200, b200, b300, gb200, gb300, l40s, mi300x)", c.String("hardware"))
	}
	table, source, err := perfTable(c)
	if err != nil {
		return err
	}
	pair, err := table.Lookup(q.model, q.hw, q.tp)
	if err == nil && isSet(c, "precision") {
		return badInputf("--precision prices the analytic model: the profiled pair %s answers at the precision it was measured at (without --precision, or with --breakdown or --engine none for the analytic model)", pair.Name())
	}
	if err == nil && isSet(c, "engine") {
		return badInputf("--engine picks the analytic model's serving calibration: the profiled pair %s answers as it was measured (without --engine, or with --breakdown or --engine none for the analytic model)", pair.Name())
	}
	if err != nil {
		if !q.compat && !isSet(c, "profile") && !isSet(c, "fitted") {
			if done, aerr := perfQueryAnalytic(c, q.model, q.hw, q.tp); done || aerr != nil {
				return aerr
			}
		}
		for _, f := range []string{"fitted", "profile"} {
			if isSet(c, f) {
				return badInputf("--model/--hardware/--tp: %v (the pairs of --%s %s)", err, f, c.String(f))
			}
		}
		return badInputf("--model/--hardware/--tp: %v", err)
	}
	r := profiledReplicaOf(c, q)
	if !q.compat {
		// (--compat answers the reference's curves, under its own memory
		// rule: all of the machine's memory less the weights.)
		if err := checkProfiledQueryKV(c, q, r); err != nil {
			return err
		}
	}
	printProfiledQuery(c, q, pair, source)
	if line := profiledMemoryLine(q, r); line != "" {
		fmt.Fprintln(c.App.Writer, line)
	}
	return nil
}

// perfQueryArgs is what perf query asks, validated.
type perfQueryArgs struct {
	hw, model string
	tp        int
	compat    bool
	// isPrompt: --prompt-tokens, else --decode-batch.
	isPrompt bool
}

// perfQueryFrom reads and checks perf query's flags.
func perfQueryFrom(c *cli.Context) (perfQueryArgs, error) {
	q := perfQueryArgs{hw: perfHardware(c.String("hardware")), model: strings.TrimSpace(c.String("model")), tp: c.Int("tp")}
	if q.hw == "" {
		return q, badInputf("--hardware: expected a hardware name (a100-80gb, h100-80gb, h100-80gb-pcap, or a100, h100, h100cap)")
	}
	if q.model == "" {
		return q, badInputf("--model: expected a model name, e.g. bloom-176b")
	}
	if q.tp < 1 {
		return q, badInputf("--tp %d: expected a positive tensor parallelism, e.g. 8", q.tp)
	}
	switch mode := strings.ToLower(strings.TrimSpace(c.String("compat"))); mode {
	case "":
	case "splitwise-sim":
		q.compat = true
	default:
		return q, badInputf("--compat %q: expected splitwise-sim", c.String("compat"))
	}
	if _, set, err := memoryUtilization(c); err != nil {
		return q, err
	} else if set && q.compat {
		return q, errCompatUtilization
	}
	if e := strings.ToLower(strings.TrimSpace(c.String("engine"))); e != "none" {
		if _, err := measured.ParseEngine(e); err != nil {
			return q, badInputf("--engine: %v (or none: the kernel layer alone)", err)
		}
	}
	isPrompt, isDecode := isSet(c, "prompt-tokens"), isSet(c, "decode-batch")
	q.isPrompt = isPrompt
	switch {
	case isPrompt == isDecode:
		return q, badInputf("give exactly one of --prompt-tokens and --decode-batch")
	case isPrompt && isSet(c, "context-tokens"):
		return q, badInputf("--context-tokens goes with --decode-batch, not --prompt-tokens")
	case isPrompt && c.Int("prompt-tokens") < 1:
		return q, badInputf("--prompt-tokens %d: expected a positive number of tokens", c.Int("prompt-tokens"))
	case isDecode && c.Int("decode-batch") < 1:
		return q, badInputf("--decode-batch %d: expected a positive number of decoding requests", c.Int("decode-batch"))
	case isSet(c, "context-tokens") && c.Int64("context-tokens") < 1:
		return q, badInputf("--context-tokens %d: expected a positive total of context tokens", c.Int64("context-tokens"))
	case isSet(c, "context-tokens") && c.Int64("context-tokens") < int64(c.Int("decode-batch")):
		return q, badInputf("--context-tokens %d is less than --decode-batch %d: every decoding request holds at least one token of context",
			c.Int64("context-tokens"), c.Int("decode-batch"))
	}
	return q, nil
}

// printProfiledQuery prints the iteration time a profiled pair gives, and
// whether it was extrapolated beyond the profile.
func printProfiledQuery(c *cli.Context, q perfQueryArgs, pair *perf.Pair, source string) {
	m, fit := pair.Model(), "default fit"
	if q.compat {
		m, fit = pair.CompatModel(), "splitwise-sim compat fit"
	}
	w := c.App.Writer
	fmt.Fprintf(w, "%s (%s, %s)\n", pair.Name(), fit, source)
	var secs float64
	var ex bool
	var rangeNote string
	if q.isPrompt {
		n := c.Int("prompt-tokens")
		secs, ex = m.PromptTime(n)
		fmt.Fprintf(w, "prompt iteration of %d tokens: %.3f ms (%.6f s)\n", n, secs*1e3, secs)
		cv := pair.PromptCurve()
		if q.compat {
			cv = pair.CompatPromptCurve()
		}
		rangeNote = fmt.Sprintf("prompt tokens profiled from %g to %g", cv.X[0], cv.X[len(cv.X)-1])
	} else {
		b := c.Int("decode-batch")
		ctx := c.Int64("context-tokens")
		secs, ex = m.DecodeTime(b, ctx)
		ctxNote := fmt.Sprintf("base context, %g tokens per request", pair.BaseContextTokens)
		if ctx > 0 {
			ctxNote = fmt.Sprintf("%d context tokens, %.1f per request", ctx, float64(ctx)/float64(b))
		}
		if q.compat {
			ctxNote = "context ignored in compat mode"
		}
		fmt.Fprintf(w, "decode iteration of %d requests (%s): %.3f ms (%.7f s)\n", b, ctxNote, secs*1e3, secs)
		if q.compat {
			cv := pair.CompatTokenCurve()
			rangeNote = fmt.Sprintf("the token curve's knots run from %g to %g batch tokens and are evaluated at the number of requests", cv.X[0], cv.X[len(cv.X)-1])
		} else {
			d, cx := pair.DecodeCurve(), pair.ContextCurve()
			rangeNote = fmt.Sprintf("batch sizes profiled from %g to %g, contexts from %g to %g tokens per request",
				d.X[0], d.X[len(d.X)-1], cx.X[0], cx.X[len(cx.X)-1])
		}
	}
	if ex {
		fmt.Fprintf(w, "note: extrapolated beyond the profiled range (%s)\n", rangeNote)
	}
}

// perfValidate is `splitplan perf validate`.
func perfValidate(c *cli.Context) error {
	if err := noArgs(c); err != nil {
		return err
	}
	format := strings.ToLower(c.String("format"))
	if format != "table" && format != "csv" {
		return badInputf("--format %q: expected table or csv", c.String("format"))
	}
	if isSet(c, "moe-kernels") {
		if isSet(c, "kernels") || isSet(c, "kernels-fit") || isSet(c, "measured") || isSet(c, "gdn-kernels") {
			return badInputf("--moe-kernels FILE goes alone (with --hardware): not with --kernels, --kernels-fit, --gdn-kernels or --measured")
		}
		return perfValidateMoEKernels(c)
	}
	if isSet(c, "gdn-kernels") {
		if isSet(c, "kernels") || isSet(c, "kernels-fit") || isSet(c, "measured") {
			return badInputf("--gdn-kernels FILE goes alone (with --hardware): not with --kernels, --kernels-fit or --measured")
		}
		return perfValidateGDNKernels(c)
	}
	if isSet(c, "kernels") {
		return perfValidateKernels(c)
	}
	for _, f := range []string{"hardware", "kernels-fit"} {
		if isSet(c, f) {
			return badInputf("--%s goes with --kernels FILE, --moe-kernels FILE or --gdn-kernels FILE", f)
		}
	}
	if isSet(c, "measured") {
		return perfValidateMeasured(c)
	}
	for _, f := range []string{"calibration", "cross-validate", "out"} {
		if isSet(c, f) {
			return badInputf("--%s goes with --measured FILE", f)
		}
	}
	pen, err := perfPenalty(c)
	if err != nil {
		return err
	}
	path := c.String("profile")
	if !isSet(c, "profile") {
		if _, err := os.Stat(sharedProfilePath); err != nil {
			return badInputf("no profile given and the shipped one (%s) is not here: pass --profile FILE", sharedProfilePath)
		}
		path = sharedProfilePath
	} else if path == "" {
		return badInputf("--profile: expected a file name")
	}
	rows, err := perfReadProfile(path)
	if err != nil {
		return err
	}
	v, err := perf.Validate(rows, c.Uint64("seed"), pen)
	if err != nil {
		return badInputf("--profile %s: %v", path, err)
	}
	if format == "csv" {
		return report.WriteValidationCSV(c.App.Writer, v)
	}
	if err := report.WriteValidationTable(c.App.Writer, v, path, c.Uint64("seed")); err != nil {
		return err
	}
	// The analytic model's transfer to a GPU it was not fitted on, when the
	// profile has both the A100 and the H100.
	a100, errA := hw.Lookup("a100_sxm")
	h100, errH := hw.Lookup("h100_sxm")
	if errA != nil || errH != nil {
		return nil
	}
	tr, err := analytic.Transfer(rows, "a100-80gb", "h100-80gb", a100, h100)
	if err != nil {
		return nil // the profile lacks one of them: nothing to show
	}
	if err := report.WriteTransfer(c.App.Writer, tr); err != nil {
		return err
	}
	return perfWritePower(c.App.Writer, rows, c.Uint64("seed"))
}

// perfWritePower writes the power model's held-out errors: the drawn power
// on the profile's A100 runs with power figures, and the power-cap curve
// fitted on Llama2-70B's capped runs predicting BLOOM-176B's. A profile
// lacking those rows shows nothing.
func perfWritePower(w io.Writer, rows []perf.ProfileRow, seed uint64) error {
	samples, dropped, err := power.ProfileSamples(rows, power.ProfileHardware, mustGPU(power.ProfileGPU), power.ProfileEfficiency(power.ProfileGPU))
	if err != nil {
		return nil
	}
	v, err := power.Validate(samples, seed)
	if err != nil {
		return nil
	}
	if _, err := fmt.Fprintf(w, "\npower model (per GPU, fractions of board power) fitted on %d %s runs with power figures (%d inconsistent left out),\n"+
		"predicting the %d runs held out (80:20, seed %d): MAPE %.2f%% average power, %.2f%% peak power (in-sample %.2f%% average)\n",
		v.TrainRows, power.ProfileHardware, dropped, v.TestRows, seed, v.AverageMAPEPct, v.PeakMAPEPct, v.TrainAverageMAPEPct); err != nil {
		return err
	}
	if a, p, ab, pb, n, err := power.CarriedToProfile(rows, power.Builtin); err == nil {
		if _, err := fmt.Fprintf(w, "built-in power model (fitted on the H100 kernel iterations; %s), carried to these %d runs by board power:\n"+
			"MAPE %.2f%% average power (bias %+.1f%%), %.2f%% peak power (bias %+.1f%%)\n", power.BuiltinHeldOutError, n, a, ab, p, pb); err != nil {
			return err
		}
	}
	cv, err := power.ValidateBuiltinCap(rows)
	if err != nil {
		return nil
	}
	_, err = fmt.Fprintf(w, "power-cap curve fitted on %s's capped %s points (%d, in-sample MAPE %.2f%% prompt, %.2f%% decode; clock %.3f at cap %g),\n"+
		"predicting %s's it never saw (held-out, %d points): MAPE %.2f%% prompt, %.2f%% decode\n",
		cv.FitModel, power.UncappedHardware, cv.FitPoints, cv.FitPromptPct, cv.FitTokenPct, cv.ClockAtCap, power.ProfileCap,
		cv.TestModel, cv.TestPoints, cv.TestPromptPct, cv.TestTokenPct)
	return err
}

// mustGPU is a built-in GPU spec (the zero GPU when the name is unknown,
// which the callers' fits then reject).
func mustGPU(name string) hw.GPU {
	g, _ := hw.Lookup(name)
	return g
}

// perfFit is `splitplan perf fit`.
func perfFit(c *cli.Context) error {
	if err := noArgs(c); err != nil {
		return err
	}
	if isSet(c, "kernels") {
		if isSet(c, "profile") {
			return badInputf("--kernels and --profile: give one")
		}
		return perfFitKernels(c)
	}
	if isSet(c, "hardware") {
		return badInputf("--hardware goes with --kernels FILE")
	}
	path, out := c.String("profile"), c.String("out")
	if path == "" {
		return badInputf("--profile: expected the profiling CSV to fit (or --kernels FILE)")
	}
	if out == "" {
		return badInputf("--out: expected the TOML file to write")
	}
	if err := checkOutputs(c, "out"); err != nil {
		return err
	}
	pen, err := perfPenalty(c)
	if err != nil {
		return err
	}
	rows, err := perfReadProfile(path)
	if err != nil {
		return err
	}
	pairs, err := perf.Fit(rows, pen)
	if err != nil {
		return badInputf("--profile %s: %v", path, err)
	}
	for i := range pairs {
		// One size gives a flat curve: every larger prompt or batch would
		// take the same time, faster than any GPU.
		p := &pairs[i]
		for _, cv := range []struct {
			what string
			x    []float64
		}{{"prompt sizes (prompt_size × batch_size)", p.PromptCurve().X}, {"decode batch sizes at the base context", p.DecodeCurve().X}} {
			if len(cv.x) < 2 {
				return badInputf("--profile %s: %s: its rows measure one of the %s (%g): a fit needs two or more to say how time grows; profile more sizes",
					path, p.Name(), cv.what, cv.x[0])
			}
		}
	}
	err = writeOutput(c.Context, out, c.App.Writer, func(f io.Writer) error {
		fmt.Fprintf(f, "# Performance-model pairs fitted by splitplan perf fit from %s\n"+
			"# (%d rows, mixed penalty %g). Times in seconds. Use with\n"+
			"# splitplan perf query --fitted %s, or paste the [[perf]] tables into a --plan file.\n\n",
			path, len(rows), pen, out)
		return perf.EncodePairs(f, pairs)
	})
	if err != nil {
		return err
	}
	w := reportWriter(c, "out")
	fmt.Fprintf(w, "wrote %d pairs to %s (from %d rows of %s):\n", len(pairs), out, len(rows), path)
	for i := range pairs {
		p := &pairs[i]
		fmt.Fprintf(w, "  %s: prompt %d knots, decode %d, context %d (base %g), compat %d\n", p.Name(),
			len(p.PromptTokens), len(p.DecodeBatch), len(p.ContextTokens), p.BaseContextTokens, len(p.CompatBatchTokens))
	}
	return nil
}
