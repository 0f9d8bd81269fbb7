package cli

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/BurntSushi/toml"
	"github.com/urfave/cli/v2"

	"splitplan/costpower"
	"splitplan/evaluator/perf/analytic"
	"splitplan/evaluator/perf/kernel"
	"splitplan/hw"
)

// kernelFit is the TOML file perf fit --kernels writes and perf query
// --kernels-fit reads: one GPU's kernel layer.
type kernelFit struct {
	// GPU is the spec sheet the fit applies to; Source the measurement
	// file (one), Sources the files (several, fitted together); Rows the
	// rows fitted.
	GPU     string        `toml:"gpu"`
	Source  string        `toml:"source,omitempty"`
	Sources []string      `toml:"sources,omitempty"`
	Rows    int           `toml:"rows"`
	Kernel  kernel.Params `toml:"kernel"`
}

// files returns the measurement files the fit was made from.
func (kf kernelFit) files() []string {
	if kf.Source != "" {
		return append([]string{kf.Source}, kf.Sources...)
	}
	return kf.Sources
}

// readKernelRows reads a kernels.csv-format file named by flag; every
// failure is bad input naming the file (and line).
func readKernelRows(flag, path string) ([]kernel.Row, error) {
	rows, err := kernel.ReadFile(path)
	if err != nil {
		return nil, badInputf("--%s: %v", flag, err)
	}
	return rows, nil
}

// readKernelFit reads a perf fit --kernels TOML file.
func readKernelFit(path string) (kernelFit, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return kernelFit{}, badInputf("--kernels-fit: %v", err)
	}
	var kf kernelFit
	md, err := toml.NewDecoder(bytes.NewReader(b)).Decode(&kf)
	if err != nil {
		return kernelFit{}, badInputf("--kernels-fit %s: %v", path, err)
	}
	if und := md.Undecoded(); len(und) > 0 {
		return kernelFit{}, badInputf("--kernels-fit %s: unknown key %q (expected gpu, source or sources, rows and a [kernel] table)", path, und[0].String())
	}
	if _, err := hw.Lookup(kf.GPU); err != nil {
		return kernelFit{}, badInputf("--kernels-fit %s: gpu: %v", path, err)
	}
	if err := kf.Kernel.Validate(); err != nil {
		return kernelFit{}, badInputf("--kernels-fit %s: %v", path, err)
	}
	return kf, nil
}

// kernelGPU is the GPU the kernel measurements of path were taken on:
// the one the meta.json beside it names (as tools/gpu-profile and the
// shared tables write it), which --hardware, when given, must agree
// with; without a meta.json, --hardware, which is then required — a file
// is never read as another GPU's by default.
func kernelGPU(c *cli.Context, path string) (hw.GPU, error) {
	var given hw.GPU
	if isSet(c, "hardware") {
		g, err := hw.Lookup(c.String("hardware"))
		if err != nil {
			return hw.GPU{}, badInputf("--hardware: %v", err)
		}
		given = g
	}
	metaPath := filepath.Join(filepath.Dir(path), "meta.json")
	data, err := os.ReadFile(metaPath)
	if errors.Is(err, fs.ErrNotExist) {
		if given.Name == "" {
			return hw.GPU{}, badInputf("--kernels %s: no meta.json beside it says which GPU measured it: give --hardware GPU (e.g. h100)", path)
		}
		return given, nil
	}
	if err != nil {
		return hw.GPU{}, badInputf("%s: %v", metaPath, err)
	}
	var meta struct {
		GPU string `json:"gpu"`
	}
	if err := json.Unmarshal(data, &meta); err != nil || meta.GPU == "" {
		return hw.GPU{}, badInputf("%s: expected a JSON object naming the GPU measured (\"gpu\"), as tools/gpu-profile writes it", metaPath)
	}
	measured, err := hw.Lookup(meta.GPU)
	switch {
	case err != nil && given.Name == "":
		return hw.GPU{}, badInputf("%s: gpu %q is no built-in GPU: give --hardware GPU to read %s as one", metaPath, meta.GPU, path)
	case err != nil:
		return given, nil // the user's choice for a GPU the catalog does not know by that name
	case given.Name != "" && given.Name != measured.Name:
		return hw.GPU{}, badInputf("--hardware %s, but %s says %s was measured on %s (%s)", c.String("hardware"), metaPath, path, meta.GPU, measured.Name)
	}
	return measured, nil
}

// perfValidateKernels is perf validate --kernels FILE: the kernel layer
// (perf query --engine none) against every iteration row of FILE.
func perfValidateKernels(c *cli.Context) error {
	path := c.String("kernels")
	rows, err := readKernelRows("kernels", path)
	if err != nil {
		return err
	}
	g, err := kernelGPU(c, path)
	if err != nil {
		return err
	}
	for _, r := range rows {
		if r.TP > g.GPUsPerNode {
			return badInputf("--kernels %s:%d: tp %d: more GPUs than one %s node has (%d): the row's share is not one this GPU can run", path, r.Line, r.TP, g.Name, g.GPUsPerNode)
		}
	}
	p, src := kernel.Default.WithProfiledExperts(), "the embedded kernel layer (fitted on the H100)"
	in := func(r kernel.Row) bool { return kernel.InDefaultFit(g, r) }
	var setNote string
	switch {
	case isSet(c, "kernels-fit"):
		kf, err := readKernelFit(c.String("kernels-fit"))
		if err != nil {
			return err
		}
		p, src = kf.Kernel, fmt.Sprintf("the kernel fit of %s (%s)", kf.GPU, c.String("kernels-fit"))
		if slices.ContainsFunc(kf.files(), func(f string) bool { return sameFile(f, path) }) {
			in = kernel.Fitted
			setNote = "in fit: every row of a model the fit reads (it was fitted on this file); held out: MLA models' rows\n"
		} else {
			in = func(kernel.Row) bool { return false }
			setNote = fmt.Sprintf("held out: every row (the fit was made from %s, not this file)\n", strings.Join(kf.files(), ", "))
		}
	case g.Name == kernel.DefaultFitGPU:
		setNote = fmt.Sprintf("fit set: every GEMM row, and of %s the single-prompt prefill and decode rows at TP 1 and 8 except at 8,192 tokens;\n"+
			"the routed experts' constants: every row of %s (the profiler's runs, data/gpu-runs/h100) but MLA models';\n"+
			"held out: TP 4, multi-prompt prefills, prefill of and decode at 8,192 tokens, mixed iterations, every other model\n",
			strings.Join(kernel.DefaultFitModels, " and "), strings.Join(kernel.ProfiledExpertRuns, ", "))
	default:
		setNote = fmt.Sprintf("held out: every row (the embedded layer was fitted on the %s alone, carried to %s by its spec sheet)\n", kernel.DefaultFitGPU, g.Name)
	}
	v := kernel.Validate(p, g, rows, in)
	if len(v.Rows) == 0 {
		return badInputf("--kernels %s: no prefill, decode or mixed row of a built-in model", path)
	}
	w := c.App.Writer
	fmt.Fprintf(w, "Kernel layer (--engine none: per-GPU share, no all-reduce, no engine) on %s, %s\n", g.Name, src)
	fmt.Fprint(w, setNote)
	if v.Skipped > 0 {
		fmt.Fprintf(w, "%d iteration rows not predicted (a model that is not a built-in architecture)\n", v.Skipped)
	}
	fmt.Fprintf(w, "\n%-8s %-9s %5s %9s %9s\n", "kind", "rows", "n", "median %", "P90 %")
	for _, k := range []kernel.Kind{kernel.Prefill, kernel.Decode, kernel.Mixed, kernel.MoE, kernel.MLA, kernel.Pooled} {
		for _, set := range []struct {
			name string
			s    kernel.Summary
		}{{"held out", v.ByKind[k]}, {"in fit", v.FitByKind[k]}} {
			if set.s.N == 0 {
				continue
			}
			fmt.Fprintf(w, "%-8s %-9s %5d %9.1f %9.1f\n", k, set.name, set.s.N, set.s.Median, set.s.P90)
		}
	}
	fmt.Fprintf(w, "\n%-5s %-13s %3s %-8s %-22s %10s %10s %7s  %s\n", "line", "model", "tp", "kind", "work", "measured", "predicted", "err %", "set")
	for _, e := range v.Rows {
		r := e.Row
		var work string
		switch r.Kind {
		case kernel.Prefill:
			work = fmt.Sprintf("%d×%d tokens", r.Prompts, r.TokensPerPrompt)
		case kernel.Decode:
			work = fmt.Sprintf("%d @ %d ctx", r.Batch, r.ContextPerRequest)
		default:
			work = fmt.Sprintf("%d + %d @ %d ctx", r.TokensPerPrompt, r.Batch, r.ContextPerRequest)
		}
		set := "held out"
		if e.InFit {
			set = "in fit"
		}
		fmt.Fprintf(w, "%-5d %-13s %3d %-8s %-22s %10.3f %10.3f %7.1f  %s\n", r.Line, r.Model, r.TP, r.Kind, work, r.TimeS*1e3, e.PredS*1e3, e.ErrPct, set)
	}
	return nil
}

// perfFitKernels is perf fit --kernels FILE: fits the kernel layer of one
// GPU on its own measurements and writes it as TOML.
func perfFitKernels(c *cli.Context) error {
	paths := c.StringSlice("kernels")
	out := c.String("out")
	if out == "" {
		return badInputf("--out: expected the TOML file to write")
	}
	if err := checkOutputs(c, "out"); err != nil {
		return err
	}
	var rows []kernel.Row
	var g hw.GPU
	for i, path := range paths {
		if slices.ContainsFunc(paths[:i], func(q string) bool { return sameFile(q, path) }) {
			return badInputf("--kernels %s: given twice", path)
		}
		rs, err := readKernelRows("kernels", path)
		if err != nil {
			return err
		}
		// A model the kernel layer cannot build is bad input naming its
		// file and line (the fit, over several files, could name the line
		// only).
		for _, r := range rs {
			if r.IsIteration() {
				if _, err := r.Arch(); err != nil {
					return badInputf("--kernels %s: line %d: %v", path, r.Line, err)
				}
			}
		}
		gi, err := kernelGPU(c, path)
		if err != nil {
			return err
		}
		if i > 0 && gi.Name != g.Name {
			return badInputf("--kernels %s was measured on %s, %s on %s: a kernel fit is of one GPU", paths[0], g.Name, path, gi.Name)
		}
		g = gi
		rows = append(rows, rs...)
	}
	path := strings.Join(paths, ", ")
	p, err := kernel.Fit(rows, g, kernel.Default, kernel.Fitted)
	if err != nil {
		return badInputf("--kernels %s: %v", path, err)
	}
	// the rows fitted (GEMMs and iterations but MLA models'), and the
	// iteration rows by kind of model
	var n, moe, mla, denseIters int
	for _, r := range rows {
		switch {
		case r.Kind == kernel.GEMM:
			n++
		case r.IsMLA():
			mla++
		case r.IsMoE():
			moe++
			n++
		case r.IsIteration():
			denseIters++
			n++
		}
	}
	kf := kernelFit{GPU: g.Name, Rows: n, Kernel: p}
	if len(paths) == 1 {
		kf.Source = paths[0]
	} else {
		kf.Sources = paths
	}
	err = writeOutput(c.Context, out, c.App.Writer, func(f io.Writer) error {
		fmt.Fprintf(f, "# Kernel layer of %s fitted by splitplan perf fit --kernels from %s (%d rows).\n"+
			"# Use with --kernels-fit %s on optimize, simulate, sweep or evaluate\n"+
			"# (measured provenance), perf query or perf validate --kernels FILE --kernels-fit %s.\n\n", g.Name, path, n, out, out)
		return toml.NewEncoder(f).Encode(kf)
	})
	if err != nil {
		return err
	}
	v := kernel.Validate(p, g, rows, kernel.Fitted)
	s := v.FitByKind[kernel.Pooled]
	rw := reportWriter(c, "out")
	fmt.Fprintf(rw, "wrote the kernel layer of %s to %s (fitted on %d rows of %s; in-sample median %.1f%%, P90 %.1f%% over %d iterations)\n",
		g.Name, out, n, path, s.Median, s.P90, s.N)
	if mla > 0 {
		fmt.Fprintf(rw, "%d iteration rows of MLA models not fitted (the kernel layer prices MLA's decode in its prefill form, the profiler measures the absorbed decode): perf validate --kernels checks them\n", mla)
	}
	switch {
	case moe == 0:
		fmt.Fprintf(rw, "expert_compute: not measured (no MoE iteration rows): perf query --engine none takes the profiler's H100 grouped-GEMM constants for routed experts, a serving engine its own MoE kernel or the dense gemm_compute %.3g\n", p.GEMMCompute)
	default:
		m := v.FitByKind[kernel.MoE]
		fmt.Fprintf(rw, "expert_compute %.3g (dense gemm_compute %.3g), expert_layer_s %.1f µs (an MoE layer's routing beyond its GEMMs) and expert_tile_rows %.0f (rows computed at least per expert touched): fitted on %d MoE iteration rows with every other constant frozen at the dense fit; in-sample median %.1f%%, P90 %.1f%%\n",
			p.ExpertCompute, p.GEMMCompute, p.ExpertLayerS*1e6, p.ExpertTileRows, moe, m.Median, m.P90)
		if denseIters == 0 {
			fmt.Fprintf(rw, "no dense iteration rows: the dense constants were fitted on the MoE rows with the experts at gemm_compute (profile a dense model too to separate them)\n")
		}
	}
	return nil
}

// perfQueryKernel answers perf query with --engine none, --breakdown or
// --kernels-fit: the analytic model under the kernel physics, split into
// its layers. It returns done false when hardware names no GPU spec.
func perfQueryKernel(c *cli.Context, model, hardware string, tp int) (done bool, err error) {
	g, a, ok, err := analyticQueryTarget(c, model, hardware)
	if !ok || err != nil {
		return ok, err
	}
	engineName := strings.ToLower(strings.TrimSpace(c.String("engine")))
	eff := analytic.Efficiency{Kernels: true}
	prov := "kernel layer only (--engine none): per-GPU share, no all-reduce, no engine"
	if engineName != "none" {
		cal, engine, err := queryEngine(c, engineName, " (or none: the kernel layer alone)")
		if err != nil {
			return true, err
		}
		var source string
		eff, source = cal.Lookup(g.Name, engine)
		prov = fmt.Sprintf("%s engine, %s", engine, source)
		if !eff.Kernels {
			return true, badInputf("--breakdown/--kernels-fit: the %s calibration of %s is not the kernel physics", engine, g.Name)
		}
	}
	if err := checkQueryTP(a, g.GPUsPerNode, g.Name, tp); err != nil {
		return true, err
	}
	var kp *kernel.Params
	if isSet(c, "kernels-fit") {
		kf, err := readKernelFit(c.String("kernels-fit"))
		if err != nil {
			return true, err
		}
		if kf.GPU != g.Name {
			return true, badInputf("--kernels-fit %s is the kernel layer of %s, not of --hardware %s", c.String("kernels-fit"), kf.GPU, g.Name)
		}
		kp = &kf.Kernel
		prov += "; kernel layer measured (" + c.String("kernels-fit") + ")"
	} else {
		prov += "; kernel layer fitted on the H100, carried by the spec sheet"
	}
	prec, err := queryPrecision(c, a)
	if err != nil {
		return true, err
	}
	cfg := analytic.Config{Arch: a, GPU: g, TP: tp, Weights: prec, KV: prec.KVCache(), Eff: eff, Kernel: kp}
	switch {
	case engineName != "none":
		cfg.MoE = kernel.EnginePath(engineName, a, prec, g, kernel.Switches{})
		prov += cfg.MoE.Source()
	case a.IsMoE():
		// No engine: the routed experts as the profiler measures them.
		k := kernel.Default
		if kp != nil {
			k = *kp
		}
		if k.ExpertCompute == 0 {
			prov += "; routed experts as tools/gpu-profile's grouped GEMMs (measured on the H100)"
		}
		k = k.WithProfiledExperts()
		cfg.Kernel = &k
	}
	// The one memory model first: weights that do not fit are refused with
	// the tensor parallelisms that hold them. (checkQueryTP has checked
	// that the node splits into tp.)
	m := costpower.ModelOf(a, prec)
	node, nodeErr := costpower.NodeOf(g.Name, g).WithTP(tp)
	if nodeErr == nil {
		node = withQueryUtilization(c, node)
		if err := checkQueryKV(c, m, node); err != nil {
			return true, err
		}
	}
	pm, err := analytic.New(cfg)
	if err != nil {
		return true, badInputf("--model/--hardware/--tp: %v", err)
	}
	var b analytic.Batch
	var what string
	if isSet(c, "prompt-tokens") {
		n := c.Int("prompt-tokens")
		b = analytic.Batch{PromptTokens: n, Prompts: 1, PromptAttnPairs: analytic.AttnPairs(n, 0)}
		what = fmt.Sprintf("prompt iteration of %d tokens", n)
	} else {
		n := c.Int("decode-batch")
		ctx := max(c.Int64("context-tokens"), int64(n))
		b = analytic.Batch{Decodes: n, DecodeContextTokens: ctx}
		what = fmt.Sprintf("decode iteration of %d requests (%d context tokens, %.1f per request)", n, ctx, float64(ctx)/float64(n))
	}
	bd := pm.Breakdown(b)
	secs := bd.TotalS
	if engineName == "none" {
		secs = bd.Kernel.Total()
	}
	w := c.App.Writer
	fmt.Fprintf(w, "%s/%s/tp%d at %s (%s)\n", a.Name, g.Name, tp, prec, prov)
	fmt.Fprintf(w, "%s: %.3f ms (%.6f s)\n", what, secs*1e3, secs)
	if c.Bool("breakdown") {
		k := bd.Kernel
		fmt.Fprintf(w, "  kernel layer      %9.3f ms\n", k.Total()*1e3)
		fmt.Fprintf(w, "    GEMMs           %9.3f ms\n", k.GEMMS*1e3)
		attn, kvr := "prompt tokens, flash", "decode attention"
		if a.LinearValueHeads > 0 && a.LinearAttentionLayers > 0 {
			attn += fmt.Sprintf("; %d linear-attention layers' delta rule", a.LinearAttentionLayers)
			kvr += "; their state updates"
		}
		fmt.Fprintf(w, "    attention       %9.3f ms (%s)\n", k.AttentionS*1e3, attn)
		fmt.Fprintf(w, "    KV read         %9.3f ms (%s)\n", k.KVReadS*1e3, kvr)
		small := "norms, SiLU, residuals, launches"
		if k.RoutingS > 0 {
			small += ", MoE routing"
		}
		fmt.Fprintf(w, "    per-layer       %9.3f ms (%s)\n", k.LayerS*1e3, small)
		fmt.Fprintf(w, "    LM head         %9.3f ms\n", k.HeadS*1e3)
		if engineName != "none" {
			fmt.Fprintf(w, "  communication     %9.3f ms (TP all-reduces)\n", bd.CommS*1e3)
			fmt.Fprintf(w, "  engine            %9.3f ms (per iteration, layer, prompt iteration, sequence)\n", bd.EngineS*1e3)
		}
	}
	if nodeErr == nil {
		fmt.Fprintln(w, queryMemoryLine(m, node))
	}
	return true, nil
}

// measurementFile reads the measurement file flag --flag names with read,
// and the GPU --hardware names it measured on (required): bad input names
// the flag, a file that cannot be opened os.Open's error.
func measurementFile[R any](c *cli.Context, flag string, read func(string) ([]R, error)) (hw.GPU, []R, error) {
	path := c.String(flag)
	if !isSet(c, "hardware") {
		return hw.GPU{}, nil, badInputf("--%s %s: give --hardware GPU, the GPU it was measured on", flag, path)
	}
	g, err := hw.Lookup(c.String("hardware"))
	if err != nil {
		return hw.GPU{}, nil, badInputf("--hardware: %v", err)
	}
	rows, err := read(path)
	if pe := (*fs.PathError)(nil); errors.As(err, &pe) && pe.Op == "open" {
		return hw.GPU{}, nil, badInputf("--%s: %v", flag, err)
	}
	if err != nil {
		return hw.GPU{}, nil, badInputf("--%s %v", flag, err)
	}
	return g, rows, nil
}

// perfValidateGDNKernels is perf validate --gdn-kernels FILE --hardware
// GPU: the linear-attention layers' kernel times (kernel.GDNTime: the
// constants of the GPU's generation, fitted on the H100 or the B200 and
// carried by the spec sheet within it, bounded by the GPUs it dominates)
// against FILE's prompt and decode rows.
func perfValidateGDNKernels(c *cli.Context) error {
	path := c.String("gdn-kernels")
	g, rows, err := measurementFile(c, "gdn-kernels", kernel.ReadGDNFile)
	if err != nil {
		return err
	}
	v := kernel.ValidateGDN(g, rows)
	set := "carried by the spec sheet from the H100 (Hopper's constants)"
	switch {
	case g.Name == kernel.DefaultFitGPU:
		set = "in the fit of Hopper's constants"
	case g.Name == "b200_sxm":
		set = "in the fit of Blackwell's constants"
	case hw.Generation(g.Name) == "blackwell":
		set = "carried by the spec sheet from the B200 (Blackwell's constants)"
	}
	w := c.App.Writer
	fmt.Fprintf(w, "Gated DeltaNet kernels (linear-attention layers) on %s, %s: %d layer shapes of %s (each its two kernels' times summed)\n\n", g.Name, set, len(rows), path)
	fmt.Fprintf(w, "%-8s %6s %9s %9s\n", "phase", "rows", "median %", "P90 %")
	for _, p := range []struct {
		name string
		s    kernel.Summary
	}{{"prompts", v.Prefill}, {"decodes", v.Decode}} {
		fmt.Fprintf(w, "%-8s %6d %9.1f %9.1f\n", p.name, p.s.N, p.s.Median, p.s.P90)
	}
	return nil
}

// perfValidateMoEKernels is perf validate --moe-kernels FILE --hardware
// GPU: the engines' measured MoE kernels (kernel.ExpertKernels) against
// every row of FILE of a known kernel, per kernel and pooled, saying
// which kernels were fitted on that GPU (the H100's Hopper kernels, the
// B200's Blackwell ones) and which are carried to it.
func perfValidateMoEKernels(c *cli.Context) error {
	path := c.String("moe-kernels")
	g, rows, err := measurementFile(c, "moe-kernels", kernel.ReadMoEFile)
	if err != nil {
		return err
	}
	v := kernel.ValidateExpertKernels(kernel.Default, g, kernel.KernelsOn(kernel.ExpertKernels, g), rows)
	pooled := kernel.MoEKernel(kernel.Pooled)
	if v[pooled].N == 0 {
		return badInputf("--moe-kernels %s: no row of a measured MoE kernel", path)
	}
	w := c.App.Writer
	fmt.Fprintf(w, "MoE kernels of the serving engines (routed experts: compute fraction and fixed time) on %s: %d of the %d rows of %s\n", g.Name, v[pooled].N, len(rows), path)
	fmt.Fprintf(w, "fitted on the H100 (the kernels before Blackwell) and the B200 (Blackwell's own); elsewhere carried by the spec sheet\n\n")
	fmt.Fprintf(w, "%-26s %-8s %6s %9s %9s\n", "kernel", "set", "rows", "median %", "P90 %")
	var names []kernel.MoEKernel
	for k := range v {
		if k != pooled {
			names = append(names, k)
		}
	}
	slices.Sort(names)
	for _, k := range append(names, pooled) {
		name, set := string(k), ""
		if k != pooled {
			on := k.On(g) // the kernel whose constants these rows take
			name, set = string(on), "carried"
			switch {
			case on.FittedOn() != g.Name:
			case on == kernel.VLLMMarlinBlackwell:
				set = "int4 fit" // its fit takes the int4 rows, what Blackwell runs through Marlin
			default:
				set = "in fit"
			}
		}
		fmt.Fprintf(w, "%-26s %-8s %6d %9.1f %9.1f\n", name, set, v[k].N, v[k].Median, v[k].P90)
	}
	return nil
}
