package cli

import (
	"cmp"
	"fmt"
	"io"
	"os"
	"slices"
	"splitplan/resolve"
	"strings"

	"github.com/urfave/cli/v2"

	"splitplan/arch"
	"splitplan/costpower"
	"splitplan/evaluator/perf/measured"
	"splitplan/hw"
	"splitplan/report"
)

// readMeasured reads the benchmark file of flag; every failure is bad input.
func readMeasured(c *cli.Context, flag string) ([]measured.Row, string, error) {
	path := c.String(flag)
	if path == "" {
		return nil, "", badInputf("--%s: expected the measured serving benchmarks CSV", flag)
	}
	rows, err := measured.ReadFile(path)
	if err != nil {
		return nil, "", badInputf("--%s: %v", flag, err)
	}
	if len(rows) == 0 {
		return nil, "", badInputf("--%s %s: no benchmark rows", flag, path)
	}
	return rows, path, nil
}

// calibrationFrom reads --calibration, or returns the embedded calibration.
func calibrationFrom(c *cli.Context) (measured.Calibration, string, error) {
	path := c.String("calibration")
	if path == "" {
		return measured.Default(), "the embedded calibration", nil
	}
	f, err := os.Open(path)
	if err != nil {
		return measured.Calibration{}, "", badInputf("--calibration: %v", err)
	}
	defer f.Close()
	cal, err := measured.ReadTOML(f, path)
	if err != nil {
		return measured.Calibration{}, "", badInputf("--calibration: %v", err)
	}
	return cal, path, nil
}

// perfValidateMeasured is `perf validate --measured FILE`: predict every
// row, never fitting on FILE (or, with --cross-validate, fitting on the
// other GPUs or models only), print MAPE per cell, write --out.
func perfValidateMeasured(c *cli.Context) error {
	if isSet(c, "profile") || isSet(c, "seed") || isSet(c, "mixed-penalty") {
		return badInputf("--profile, --seed and --mixed-penalty validate the profile fit; --measured validates the analytic model: give one kind")
	}
	out := c.String("out")
	if out != "" {
		if err := checkOutputs(c, "out"); err != nil {
			return err
		}
	}
	rows, path, err := readMeasured(c, "measured")
	if err != nil {
		return err
	}
	var cells []measured.CellMAPE
	var preds []measured.RowPrediction
	var title string
	var held *measured.CrossValidation
	switch by := c.String("cross-validate"); by {
	case "":
		cal, source, err := calibrationFrom(c)
		if err != nil {
			return err
		}
		cells, preds = measured.Validate(rows, cal)
		title = fmt.Sprintf("MAPE of the analytic model with %s on %s, per (GPU, model, engine, mode) cell", source, path)
		if source == "the embedded calibration" {
			title += "\n(in-sample when FILE is the shipped benchmarks the embedded calibration was fitted on; --cross-validate gives held-out figures)"
		}
	case "gpu", "model":
		if isSet(c, "calibration") {
			return badInputf("--cross-validate refits on FILE itself: drop --calibration")
		}
		prog := newLineProgress(c.App.ErrWriter, "perf validate")
		cv, err := measured.CrossValidate(c.Context, rows, by, measured.Options{Progress: prog.update})
		prog.done()
		if err != nil {
			if c.Context.Err() != nil {
				return err
			}
			return badInputf("--measured %s: %v", path, err)
		}
		cells, preds, held = cv.Cells, cv.Preds, &cv
		title = fmt.Sprintf("Held-out MAPE on %s: each %s left out of the fit in turn (engine terms and host factors fitted on the other folds, physics from the spec sheet)", path, by)
	default:
		return badInputf("--cross-validate %q: expected gpu or model", by)
	}
	unpredicted, flagged := 0, 0
	for _, p := range preds {
		if p.Reason != "" {
			unpredicted++
		} else if measured.LaunchFlags(p.Row) != "" {
			flagged++
		}
	}
	if out != "" {
		if err := writeOutput(c.Context, out, c.App.Writer, func(f io.Writer) error { return report.WriteMeasuredPredictionsCSV(f, preds) }); err != nil {
			return err
		}
	}
	if err := report.PrintCellMAPE(reportWriter(c, "out"), title, cells, unpredicted); err != nil {
		return err
	}
	if flagged > 0 {
		fmt.Fprintf(reportWriter(c, "out"), "%d predicted rows ran with engine flags from their InferenceX launch scripts or srt-slurm recipes, applied as run (recipes, docs/model.md; the launch_flags column of --out)\n", flagged)
	}
	if n := countLeftOut(preds, unphysical); n > 0 {
		fmt.Fprintf(reportWriter(c, "out"), "%d of the rows not predicted measured a TPOT below the spec-sheet roofline of the batches their clients keep running: they ran fewer requests at once than their clients, under a limit the rows do not record, and are left out of the errors (and of any fit)\n", n)
	}
	if n := countLeftOut(preds, prefillBound); n > 0 {
		fmt.Fprintf(reportWriter(c, "out"), "%d of the rows not predicted sent prompts faster than their GPUs prefill them (more than %.2f× the kernel layer's prefill of one prompt with nothing else to do): part of their prompts came from a prefix cache the rows do not record, and they are left out of the errors (and of any fit)\n", n, measured.PrefillAllowance)
	}
	if n := countLeftOut(preds, speculative); n > 0 {
		fmt.Fprintf(reportWriter(c, "out"), "%d of the rows not predicted ran with speculative decoding (MTP), which the rows do not record and InferenceX's launch matrix does (scripts/inferencex_mtp.py, inferencex_disagg.py): the model drafts no tokens, and they are left out of the errors (and of any fit)\n", n)
	}
	if dup := countLeftOut(preds, duplicate); dup > 0 {
		fmt.Fprintf(reportWriter(c, "out"), "%d of the rows not predicted repeat an earlier row's measurement to 12 significant digits, or to 0.01 ms where one of them is written rounded (one run recorded twice: in two of the data's snapshots or a file that rounds them, under two model names of one architecture, or with and without its engine version) and are counted once\n", dup)
	}
	if held != nil {
		printHeldOutSummary(reportWriter(c, "out"), *held)
	}
	if out != "" {
		fmt.Fprintf(reportWriter(c, "out"), "wrote %s\n", out)
	}
	return nil
}

// perfCalibrate is `splitplan perf calibrate`.
func perfCalibrate(c *cli.Context) error {
	if err := noArgs(c); err != nil {
		return err
	}
	out := c.String("out")
	if out == "" {
		return badInputf("--out: expected the calibration TOML file to write")
	}
	if err := checkOutputs(c, "out"); err != nil {
		return err
	}
	rows, path, err := readMeasured(c, "measured")
	if err != nil {
		return err
	}
	prog := newLineProgress(c.App.ErrWriter, "perf calibrate")
	cal, rep, err := measured.Calibrate(c.Context, rows, measured.Options{Progress: prog.update})
	prog.done()
	if err != nil {
		if c.Context.Err() != nil {
			return err
		}
		return badInputf("--measured %s: %v", path, err)
	}
	if isSet(c, "profile") {
		prows, err := perfReadProfile(c.String("profile"))
		if err != nil {
			return err
		}
		added, err := measured.CalibrateProfile(&cal, prows)
		if err != nil {
			return badInputf("--profile %s: %v", c.String("profile"), err)
		}
		rep.Entries = append(rep.Entries, added...)
	}
	if c.Bool("held-out") {
		prog := newLineProgress(c.App.ErrWriter, "perf calibrate --held-out")
		cv, err := measured.CrossValidate(c.Context, rows, "gpu", measured.Options{Progress: prog.update})
		prog.done()
		if err != nil {
			if c.Context.Err() != nil {
				return err
			}
			return badInputf("--measured %s: %v", path, err)
		}
		cal.SetHeldOut(cv.Cells)
	}
	err = writeOutput(c.Context, out, c.App.Writer, func(f io.Writer) error {
		fmt.Fprintf(f, "# Efficiencies of splitplan's analytic performance model per GPU and serving engine,\n"+
			"# fitted by splitplan perf calibrate on %s (%d rows). mape_* are in-sample", path, len(rows))
		if c.Bool("held-out") {
			fmt.Fprintf(f, ";\n# heldout_mape_* of the shared (gpu = \"*\") entries: median per-cell MAPE with each GPU\n# left out of the fit in turn")
		}
		fmt.Fprintf(f, ".\n\n")
		return cal.WriteTOML(f)
	})
	if err != nil {
		return err
	}
	w := reportWriter(c, "out")
	left := fmt.Sprintf("%d rows could not be predicted", len(rep.Unpredicted))
	if n := countLeftOut(rep.Unpredicted, unphysical); n > 0 {
		left += fmt.Sprintf(", %d of them because their measured TPOT is below the spec-sheet roofline of the batches their clients keep running", n)
	}
	if n := countLeftOut(rep.Unpredicted, prefillBound); n > 0 {
		left += fmt.Sprintf(", %d because their clients sent prompts faster than the GPU prefills them", n)
	}
	if n := countLeftOut(rep.Unpredicted, speculative); n > 0 {
		left += fmt.Sprintf(", %d because they ran with speculative decoding (MTP)", n)
	}
	if dup := countLeftOut(rep.Unpredicted, duplicate); dup > 0 {
		left += fmt.Sprintf(", %d because they repeat an earlier row's measurement (counted once)", dup)
	}
	fmt.Fprintf(w, "wrote %d calibration entries and %d host-speed factors to %s from %d rows of %s (%s)\n",
		len(cal.Entries), len(cal.Hosts), out, len(rows), path, left)
	for _, e := range cal.Entries {
		fmt.Fprintf(w, "  %s/%s: %.3f ms per iteration, %.1f µs per layer, %.3f ms per prompt iteration, %.1f µs per sequence; %.1f ms per request, %.2f iterations waited, %.1f µs per client, %.2f µs per prompt token; in-sample MAPE TTFT %.1f%%, TPOT %.1f%% (%d rows)",
			e.GPU, e.Engine, e.OverheadS*1e3, e.LayerOverheadS*1e6, e.PromptOverheadS*1e3, e.SequenceOverheadS*1e6,
			e.RequestOverheadS*1e3, e.WaitIterations, e.ClientOverheadS*1e6, e.PromptTokenS*1e6, e.MAPETTFT, e.MAPETPOT, e.Rows)
		if e.HeldOutTTFT > 0 {
			fmt.Fprintf(w, "; held out (each GPU left out, median per cell) TTFT %.1f%%, TPOT %.1f%%", e.HeldOutTTFT, e.HeldOutTPOT)
		}
		fmt.Fprintln(w)
	}
	for _, h := range cal.Hosts {
		fmt.Fprintf(w, "  host speed %s: × %.3f (%d rows)\n", h.Generation, h.Factor, h.Rows)
	}
	return nil
}

// printHeldOutSummary prints the held-out figures of a cross-validation
// beside the two-parameter roofline's on the same folds, and each
// engine's bias.
func printHeldOutSummary(w io.Writer, cv measured.CrossValidation) {
	line := func(name string, cells []measured.CellMAPE) {
		mt, mp := measured.MedianCellMAPE(cells)
		all, _ := measured.PooledCell(cells)
		fmt.Fprintf(w, "%-38s median per cell TTFT %5.1f%%, TPOT %5.1f%% (E2E %5.1f%%); pooled over rows TTFT %5.1f%%, TPOT %5.1f%% (E2E %5.1f%%)\n", name, mt, mp, measured.MedianCellE2E(cells), all.TTFT, all.TPOT, all.E2E)
	}
	fmt.Fprintln(w, "held out (targets: median per cell ≤ 20% TTFT, ≤ 12% TPOT; pooled ≤ 30% / 18%):")
	line("  model:", cv.Cells)
	line("  two-parameter roofline, same folds:", cv.BaselineCells)
	printPooledShares(w, cv.Cells)
	fmt.Fprintln(w, "rows predicted too slow (target: no engine one way on more than 75% of its rows):")
	for _, b := range measured.Bias(cv.Preds) {
		fmt.Fprintf(w, "  %-7s TTFT %3.0f%%, TPOT %3.0f%% of %d rows\n", b.Engine.String()+":", 100*b.SlowTTFT, 100*b.SlowTPOT, b.Rows)
	}
}

// pooledSharesShown is how many cells printPooledShares names per figure.
const pooledSharesShown = 3

// printPooledShares names the cells that make the most of the model's
// pooled TTFT and TPOT errors: a cell's points are its rows × its MAPE
// over all the rows pooled, so every cell's points sum to the pooled
// figure, and a cell of many rows far off moves it most.
func printPooledShares(w io.Writer, cells []measured.CellMAPE) {
	shares, n := measured.PooledShares(cells)
	if n == 0 {
		return
	}
	fmt.Fprintf(w, "largest shares of the model's pooled error (points of it: a cell's rows × its MAPE / the %d rows):\n", n)
	for _, fig := range []struct {
		name string
		of   func(measured.PooledShare) float64
	}{{"TTFT", func(s measured.PooledShare) float64 { return s.TTFT }}, {"TPOT", func(s measured.PooledShare) float64 { return s.TPOT }}} {
		by := slices.Clone(shares)
		slices.SortStableFunc(by, func(a, b measured.PooledShare) int { return cmp.Compare(fig.of(b), fig.of(a)) })
		var parts []string
		for _, s := range by[:min(pooledSharesShown, len(by))] {
			parts = append(parts, fmt.Sprintf("%s %.1f (%d rows)", s.Cell, fig.of(s), s.Rows))
		}
		fmt.Fprintf(w, "  %s: %s\n", fig.name, strings.Join(parts, "; "))
	}
}

// analyticQueryTarget is perf query's --hardware as a GPU spec and its
// model's architecture (--model or --model-config); ok is false, with no
// error, when hardware names no GPU spec (the caller then reports what is
// missing).
func analyticQueryTarget(c *cli.Context, model, hardware string) (g hw.GPU, a arch.Arch, ok bool, err error) {
	if g, err = hw.Lookup(hardware); err != nil {
		return hw.GPU{}, arch.Arch{}, false, nil
	}
	a, err = archFromFlags(c, model)
	return g, a, true, err
}

// queryEngine is the calibration (embedded or --calibration) and the
// engine name (perf query's --engine) asks for; hint follows the error of
// an unknown engine.
func queryEngine(c *cli.Context, name, hint string) (measured.Calibration, measured.Engine, error) {
	cal, _, err := calibrationFrom(c)
	if err != nil {
		return measured.Calibration{}, 0, err
	}
	engine, err := measured.ParseEngine(name)
	if err != nil {
		return measured.Calibration{}, 0, badInputf("--engine: %v%s", err, hint)
	}
	return cal, engine, nil
}

// queryPrecision is the precision perf query serves a at: --precision, or
// the one its checkpoint ships in (costpower.ServedPrecision).
func queryPrecision(c *cli.Context, a arch.Arch) (arch.Precision, error) {
	if !isSet(c, "precision") {
		return costpower.ServedPrecision(a), nil
	}
	p, err := arch.ParsePrecision(c.String("precision"))
	if err != nil {
		return arch.BF16, badInputf("--precision: %v", err)
	}
	return p, nil
}

// perfQueryAnalytic answers perf query for a pair no profile covers with
// the analytic model: model is a built-in architecture (or --model-config),
// hardware a GPU spec. done is false when hardware names no GPU spec (the
// caller then reports the missing profile).
func perfQueryAnalytic(c *cli.Context, model, hardware string, tp int) (done bool, err error) {
	g, a, ok, err := analyticQueryTarget(c, model, hardware)
	if !ok || err != nil {
		return ok, err
	}
	cal, engine, err := queryEngine(c, c.String("engine"), "")
	if err != nil {
		return true, err
	}
	prec, err := queryPrecision(c, a)
	if err != nil {
		return true, err
	}
	m := costpower.ModelOf(a, prec)
	mc := costpower.NodeOf(g.Name, g)
	if err := checkQueryTP(a, mc.GPUs, g.Name, tp); err != nil {
		return true, err
	}
	mc.TensorParallel = tp
	mc = withQueryUtilization(c, mc)
	if err := checkQueryKV(c, m, mc); err != nil {
		return true, err
	}
	// (The architecture the query read, a built-in or --model-config's,
	// which is no built-in.)
	src := resolve.Source{Calibration: cal, Engine: engine, Archs: []arch.Arch{a}}
	pm, pv, err := src.Resolve(m, mc)
	if err != nil {
		return true, badInputf("--model/--hardware/--tp: %v", err)
	}
	w := c.App.Writer
	fmt.Fprintf(w, "%s/%s/tp%d at %s (%s)\n", a.Name, g.Name, tp, m.Precision, pv)
	if isSet(c, "prompt-tokens") {
		n := c.Int("prompt-tokens")
		secs, _ := pm.PromptTime(n)
		fmt.Fprintf(w, "prompt iteration of %d tokens: %.3f ms (%.6f s)\n", n, secs*1e3, secs)
		fmt.Fprintln(w, queryMemoryLine(m, mc))
		return true, nil
	}
	b := c.Int("decode-batch")
	ctx := c.Int64("context-tokens")
	note := "no context"
	if ctx > 0 {
		note = fmt.Sprintf("%d context tokens, %.1f per request", ctx, float64(ctx)/float64(b))
	}
	secs, _ := pm.DecodeTime(b, ctx)
	fmt.Fprintf(w, "decode iteration of %d requests (%s): %.3f ms (%.7f s)\n", b, note, secs*1e3, secs)
	fmt.Fprintln(w, queryMemoryLine(m, mc))
	return true, nil
}

// countLeftOut returns how many of preds were left out for the reason
// marked by is: measured.RowPrediction.Unphysical (their measurement
// beats physics: unphysical, the TPOT floor; prefillBound, the prefill
// rate) or Duplicate (they repeat an earlier row's measurement).
func countLeftOut(preds []measured.RowPrediction, is func(measured.RowPrediction) bool) int {
	n := 0
	for _, p := range preds {
		if is(p) {
			n++
		}
	}
	return n
}

func unphysical(p measured.RowPrediction) bool { return p.Unphysical && !p.PrefillBound }

func prefillBound(p measured.RowPrediction) bool { return p.PrefillBound }

func duplicate(p measured.RowPrediction) bool { return p.Duplicate }

func speculative(p measured.RowPrediction) bool { return p.Speculative }
