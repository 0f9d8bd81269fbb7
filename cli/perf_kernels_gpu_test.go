package cli

import (
	"fmt"
	"github.com/BurntSushi/toml"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"splitplan/evaluator/perf/kernel"
	"splitplan/hw"
)

// kernelsHead is the header of a kernels.csv as tools/gpu-profile writes it.
const kernelsHead = "model,tp,layers,kind,prompts,tokens_per_prompt,batch,context_per_request,m,n,k,time_ms\n"

// TestKernelFileGPU: perf validate --kernels and perf fit --kernels read a
// measurement as the GPU its meta.json names, refuse a --hardware that
// contradicts it, and ask for --hardware when no meta.json says.
func TestKernelFileGPU(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "kernels.csv")
	rows := kernelsHead +
		"llama3.1-8b,1,32,prefill,1,2048,,,,,,54.6\n" +
		"llama3.1-8b,1,32,decode,,,1,2048,,,,5.26\n" +
		"llama3.1-8b,1,32,decode,,,64,2048,,,,12.2\n" +
		"gemm,,,gemm,,,,,4096,6144,4096,0.21\n"
	if err := os.WriteFile(file, []byte(rows), 0o644); err != nil {
		t.Fatal(err)
	}
	meta := func(gpu string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(dir, "meta.json"), []byte(`{"gpu": "`+gpu+`"}`), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	out := filepath.Join(dir, "k.toml")

	// No meta.json: --hardware is required, and nothing is written.
	code, stdout, errs := runCLI(t, "perf", "fit", "--kernels", file, "--out", out)
	wantBadInput(t, code, stdout, errs, "no meta.json beside it says which GPU measured it: give --hardware")
	if _, err := os.Stat(out); err == nil {
		t.Error("a refused fit wrote its --out file")
	}
	code, stdout, errs = runCLI(t, "perf", "fit", "--kernels", file, "--hardware", "h200", "--out", out)
	if code != 0 || !strings.Contains(stdout, "kernel layer of h200_sxm") {
		t.Errorf("with --hardware h200: exit %d, stdout %q, stderr %q", code, stdout, errs)
	}

	// The meta.json names the GPU; a contradicting --hardware is refused.
	meta("NVIDIA H200")
	code, stdout, errs = runCLI(t, "perf", "validate", "--kernels", file)
	if code != 0 || !strings.Contains(stdout, "on h200_sxm,") {
		t.Errorf("meta.json naming an H200: exit %d, stdout %.120q, stderr %q", code, stdout, errs)
	}
	code, stdout, errs = runCLI(t, "perf", "validate", "--kernels", file, "--hardware", "h100")
	wantBadInput(t, code, stdout, errs, "--hardware h100, but", "meta.json says", "NVIDIA H200 (h200_sxm)")

	// A driver's name with its memory technology names the GPU.
	meta("NVIDIA H100 80GB HBM3")
	code, stdout, errs = runCLI(t, "perf", "validate", "--kernels", file)
	if code != 0 || !strings.Contains(stdout, "on h100_sxm,") {
		t.Errorf("meta.json naming an H100: exit %d, stdout %.120q, stderr %q", code, stdout, errs)
	}
	meta("Acme Z9")
	code, stdout, errs = runCLI(t, "perf", "validate", "--kernels", file)
	wantBadInput(t, code, stdout, errs, `gpu "Acme Z9" is no built-in GPU: give --hardware GPU`)
}

// TestKernelFitMoE: perf fit --kernels on a table with MoE iteration rows
// (timed by a kernel layer whose routed experts run at 0.35 of the peak)
// fits expert_compute on them, says so and writes it; perf validate
// --kernels-fit reports the MoE rows as their own group. Without MoE rows
// the fit says expert_compute is not measured and writes none.
func TestKernelFitMoE(t *testing.T) {
	g, err := hw.Lookup("h100_sxm")
	if err != nil {
		t.Fatal(err)
	}
	truth := kernel.Params{GEMMCompute: 0.6, GEMMComputeFP8: 0.6, GEMMMemory: 0.8, Blend: 0.2, GEMMLatencyS: 5e-6,
		AttnCompute: 0.3, KVMemory: 0.75, LayerLatencyS: 30e-6, IterationS: 50e-6, ExpertCompute: 0.35, ExpertLayerS: 40e-6}
	line := func(r kernel.Row) string {
		tm, err := kernel.Predict(truth, g, r)
		if err != nil {
			t.Fatal(err)
		}
		return fmt.Sprintf("%s,%d,%d,%s,%d,%d,%d,%d,%g,%g,%g,%.6g\n", r.Model, r.TP, r.Layers, r.Kind, r.Prompts, r.TokensPerPrompt,
			r.Batch, r.ContextPerRequest, r.M, r.N, r.K, tm*1e3)
	}
	dense := kernelsHead
	for _, m := range []float64{1, 64, 512, 4096} {
		for _, nk := range [][2]float64{{6144, 4096}, {4096, 4096}, {28672, 4096}, {4096, 14336}} {
			dense += line(kernel.Row{Model: "gemm", Kind: kernel.GEMM, M: m, N: nk[0], K: nk[1]})
		}
	}
	for _, n := range []int{256, 2048, 8192} {
		dense += line(kernel.Row{Model: "llama3.1-8b", TP: 1, Layers: 32, Kind: kernel.Prefill, Prompts: 1, TokensPerPrompt: n})
	}
	for _, b := range []int{1, 64, 256} {
		dense += line(kernel.Row{Model: "llama3.1-8b", TP: 1, Layers: 32, Kind: kernel.Decode, Batch: b, ContextPerRequest: 2048})
	}
	moe := dense
	for _, n := range []int{512, 2048, 8192} {
		moe += line(kernel.Row{Model: "qwen3-30b-a3b", TP: 1, Layers: 4, Kind: kernel.Prefill, Prompts: 1, TokensPerPrompt: n})
	}
	for _, b := range []int{1, 64} {
		moe += line(kernel.Row{Model: "qwen3-30b-a3b", TP: 1, Layers: 4, Kind: kernel.Decode, Batch: b, ContextPerRequest: 2048})
	}
	dir := t.TempDir()
	var fits []string
	for i, c := range []struct {
		csv        string
		fit        []string
		toml, moeV bool
	}{
		{dense, []string{"expert_compute: not measured (no MoE iteration rows)", "perf query --engine none takes the profiler's H100 grouped-GEMM constants"}, false, false},
		{moe, []string{"expert_compute 0.3", "fitted on 5 MoE iteration rows with every other constant frozen at the dense fit"}, true, true},
	} {
		file := filepath.Join(dir, "kernels.csv")
		out := filepath.Join(dir, fmt.Sprintf("k%d.toml", i))
		fits = append(fits, out)
		if err := os.WriteFile(file, []byte(c.csv), 0o644); err != nil {
			t.Fatal(err)
		}
		code, stdout, errs := runCLI(t, "perf", "fit", "--kernels", file, "--hardware", "h100", "--out", out)
		if code != 0 {
			t.Fatalf("perf fit: exit %d, stderr %q", code, errs)
		}
		for _, w := range c.fit {
			if !strings.Contains(stdout, w) {
				t.Errorf("perf fit: stdout %q lacks %q", stdout, w)
			}
		}
		if m := regexp.MustCompile(`expert_compute ([0-9.]+) `).FindStringSubmatch(stdout); c.toml &&
			(m == nil || !(math.Abs(atof(t, m[1])-0.35) <= 0.35*0.03)) {
			t.Errorf("perf fit: stdout %q: want expert_compute 0.35 within 3%% (a small table)", stdout)
		}
		if c.toml && !strings.Contains(stdout, "expert_layer_s ") {
			t.Errorf("perf fit: stdout %q lacks the MoE routing time", stdout)
		}
		b, err := os.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		if c.toml {
			// The fixed times of a 4-layer Qwen3-30B-A3B iteration add
			// up (it has no dense layer and every row has 4 layers, so
			// only the sum is seen): per layer its small kernels, four
			// GEMM launches (attention in and out, the two grouped
			// GEMMs) and the routing, and the iteration's own:
			// 4 × (30 + 4 × 5 + 40) + 50 µs.
			var kp struct {
				Kernel kernel.Params `toml:"kernel"`
			}
			if _, err := toml.Decode(string(b), &kp); err != nil {
				t.Fatal(err)
			}
			k := kp.Kernel
			if sum := 4*(k.LayerLatencyS+4*k.GEMMLatencyS+k.ExpertLayerS) + k.IterationS; !(k.ExpertLayerS > 0 && math.Abs(sum-410e-6) <= 410e-6*0.03) {
				t.Errorf("perf fit: %+v: the fixed times of a 4-layer iteration %.3g, want 410 µs within 3%%", k, sum)
			}
		}
		if got := strings.Contains(string(b), "expert_compute = 0.3"); got != c.toml || strings.Contains(string(b), "expert_compute") != c.toml {
			t.Errorf("perf fit wrote expert_compute 0.3…: %v, want %v (and no expert_compute key when not measured):\n%s", got, c.toml, b)
		}
		code, stdout, errs = runCLI(t, "perf", "validate", "--kernels", file, "--hardware", "h100", "--kernels-fit", out)
		if code != 0 {
			t.Fatalf("perf validate: exit %d, stderr %q", code, errs)
		}
		if got := strings.Contains(stdout, "\nmoe      in fit        5 "); got != c.moeV {
			t.Errorf("perf validate: MoE group line %v, want %v:\n%s", got, c.moeV, stdout)
		}
	}
	// The measured routed-expert constants reach perf query --engine none:
	// under the fit with them (expert_compute ≈ 0.35, a 64-row tile) an MoE
	// prompt takes another time than under the fit without, which takes the
	// profiler's H100 constants (kernel.ProfiledExperts) and says so; a
	// dense model's is the same (both fits' dense stage saw the same rows).
	query := func(fit, model string) (float64, string) {
		t.Helper()
		code, stdout, errs := runCLI(t, "perf", "query", "--engine", "none", "--hardware", "h100", "--model", model, "--tp", "1",
			"--prompt-tokens", "8192", "--kernels-fit", fit)
		m := regexp.MustCompile(`: ([0-9.]+) ms`).FindStringSubmatch(stdout)
		if code != 0 || m == nil {
			t.Fatalf("perf query %s %s: exit %d, stdout %q, stderr %q", model, fit, code, stdout, errs)
		}
		return atof(t, m[1]), stdout
	}
	moeDense, outDense := query(fits[0], "qwen3-30b-a3b")
	moeMeasured, outMeasured := query(fits[1], "qwen3-30b-a3b")
	llamaDense, _ := query(fits[0], "llama3.1-8b")
	llamaMeasured, _ := query(fits[1], "llama3.1-8b")
	t.Logf("8k prompt: qwen3-30b-a3b %.1f → %.1f ms, llama3.1-8b %.1f → %.1f ms", moeDense, moeMeasured, llamaDense, llamaMeasured)
	if moeMeasured == moeDense || llamaMeasured != llamaDense {
		t.Errorf("8k prompt: qwen3-30b-a3b %.1f → %.1f ms, llama3.1-8b %.1f → %.1f ms: want the MoE's to differ, the dense the same",
			moeDense, moeMeasured, llamaDense, llamaMeasured)
	}
	const profiled = "routed experts as tools/gpu-profile's grouped GEMMs (measured on the H100)"
	if !strings.Contains(outDense, profiled) || strings.Contains(outMeasured, profiled) {
		t.Errorf("perf query --engine none: the fit without MoE rows should say %q, the fit with them not:\n%s\n%s", profiled, outDense, outMeasured)
	}
}

// atof parses a number printed by the CLI.
func atof(t *testing.T, s string) float64 {
	t.Helper()
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		t.Fatalf("%q: %v", s, err)
	}
	return v
}

// TestKernelValidateHeldOutSets: perf validate --kernels labels a row
// "in fit" only when the constants were fitted on it: the embedded layer
// on the H100's rows of the models it was fitted on (the profiler's MoE
// runs there for its routed experts), a --kernels-fit on the file it was
// made from. Another GPU's file, another model or another
// file is held out in full (data/gpu-runs: the profiler's MoE runs).
func TestKernelValidateHeldOutSets(t *testing.T) {
	if testing.Short() {
		t.Skip("seconds of fits and searches: the full suite runs it")
	}
	dir := t.TempDir()
	fitOut := filepath.Join(dir, "h100.toml")
	run := func(gpu, model string) string {
		return filepath.Join("data", "gpu-runs", gpu, model, "kernels.csv")
	}
	src := run("h100", "qwen3-30b-a3b")
	if code, _, errs := runCLI(t, "perf", "fit", "--kernels", src, "--out", fitOut); code != 0 {
		t.Fatalf("perf fit: exit %d, stderr %q", code, errs)
	}
	for _, c := range []struct {
		file, fit, want string
		moeInFit        bool // the MoE model's rows in fit (else all held out)
	}{
		{run("h200", "qwen3-30b-a3b"), "", "held out: every row (the embedded layer was fitted on the h100_sxm alone", false},
		{src, "", "the routed experts' constants: every row of qwen3-30b-a3b, mixtral-8x7b, gpt-oss-120b, deepseek-r1", true},
		{src, fitOut, "in fit: every row of a model the fit reads (it was fitted on this file)", true},
		{run("h200", "mixtral-8x7b"), fitOut, "held out: every row (the fit was made from", false},
	} {
		args := []string{"perf", "validate", "--kernels", c.file}
		if c.fit != "" {
			args = append(args, "--kernels-fit", c.fit)
		}
		code, stdout, errs := runCLI(t, args...)
		if code != 0 {
			t.Fatalf("%v: exit %d, stderr %q", args, code, errs)
		}
		if !strings.Contains(stdout, c.want) {
			t.Errorf("%v: stdout lacks %q:\n%s", args, c.want, stdout)
		}
		n := 0
		for _, l := range strings.Split(stdout, "\n") {
			if !strings.Contains(l, " qwen3-30b-a3b ") && !strings.Contains(l, " mixtral-8x7b ") {
				continue
			}
			n++
			if in := strings.HasSuffix(l, "in fit"); in != c.moeInFit {
				t.Errorf("%v: row %q: in fit %v, want %v", args, l, in, c.moeInFit)
			}
		}
		if n < 10 {
			t.Errorf("%v: %d MoE rows listed, want ≥ 10:\n%s", args, n, stdout)
		}
	}
}

// TestKernelFitSeveralFiles: perf fit --kernels takes several runs of one
// GPU and fits them together (the TOML lists them as sources, and perf
// validate --kernels-fit counts each of them in the fit and any other
// file held out); runs of two GPUs, or one file twice, are bad input.
func TestKernelFitSeveralFiles(t *testing.T) {
	if testing.Short() {
		t.Skip("seconds of fits and searches: the full suite runs it")
	}
	run := func(gpu, model string) string {
		return filepath.Join("data", "gpu-runs", gpu, model, "kernels.csv")
	}
	out := filepath.Join(t.TempDir(), "all.toml")
	a, b := run("h100", "qwen3-30b-a3b"), run("h100", "mixtral-8x7b")
	code, stdout, errs := runCLI(t, "perf", "fit", "--kernels", a, "--kernels", b, "--out", out)
	if code != 0 {
		t.Fatalf("perf fit: exit %d, stderr %q", code, errs)
	}
	if !strings.Contains(stdout, "of "+a+", "+b+";") {
		t.Errorf("perf fit: stdout %q does not name both files", stdout)
	}
	kb, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	var kf struct {
		Source  string   `toml:"source"`
		Sources []string `toml:"sources"`
	}
	if _, err := toml.Decode(string(kb), &kf); err != nil {
		t.Fatal(err)
	}
	if kf.Source != "" || !slices.Equal(kf.Sources, []string{a, b}) {
		t.Errorf("perf fit wrote source %q, sources %q; want no source and sources [%s %s]", kf.Source, kf.Sources, a, b)
	}
	for file, want := range map[string]string{a: "in fit: every row", b: "in fit: every row", run("h200", "mixtral-8x7b"): "held out: every row"} {
		code, stdout, errs := runCLI(t, "perf", "validate", "--kernels", file, "--kernels-fit", out)
		if code != 0 || !strings.Contains(stdout, want) {
			t.Errorf("perf validate --kernels %s: exit %d, stdout lacks %q:\n%s%s", file, code, want, stdout, errs)
		}
	}
	code, stdout, errs = runCLI(t, "perf", "fit", "--kernels", a, "--kernels", run("h200", "mixtral-8x7b"), "--out", out)
	wantBadInput(t, code, stdout, errs, "was measured on h100_sxm", "on h200_sxm: a kernel fit is of one GPU")
	code, stdout, errs = runCLI(t, "perf", "fit", "--kernels", a, "--kernels", "./"+a, "--out", out)
	wantBadInput(t, code, stdout, errs, "given twice")
}

// TestKernelValidateRefusesTPBeyondNode: a kernels row whose TP is more
// GPUs than the GPU's node has is refused, naming the file and line.
func TestKernelValidateRefusesTPBeyondNode(t *testing.T) {
	f := filepath.Join(t.TempDir(), "k.csv")
	body := "model,tp,layers,kind,prompts,tokens_per_prompt,batch,context_per_request,m,n,k,time_ms\n" +
		"llama3.1-8b,1,32,prefill,1,128,,,,,,7.4\nllama3.1-8b,16,32,prefill,1,64,,,,,,6.8\n"
	if err := os.WriteFile(f, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errs := runCLI(t, "perf", "validate", "--kernels", f, "--hardware", "h100")
	wantBadInput(t, code, out, errs, f+":3: tp 16: more GPUs than one h100_sxm node has (8)")
}
