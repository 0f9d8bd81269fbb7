package power

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"splitplan/evaluator/perf/measured"
	"splitplan/hw"
)

const kernelDir = "../../../../shared/data/gpu-kernels/h100"

// readKernelSamples reads the shipped H100 kernel tables, skipping when
// ../shared is absent.
func readKernelSamples(t *testing.T) ([]KernelSample, float64) {
	t.Helper()
	if _, err := os.Stat(kernelDir); err != nil {
		t.Skip("../shared/data/gpu-kernels is absent")
	}
	s, idle, err := ReadH100Kernels(kernelDir)
	if err != nil {
		t.Fatal(err)
	}
	return s, idle
}

// TestKernelPhases: the measured board power by phase is what the power
// model is fitted on: an idle H100 draws 119–126 W (0.17–0.18 of 700 W),
// long prefills run at the 700 W limit with the clock throttled, and the
// built-in model puts them there too (within 3%); decodes draw between
// idle and the limit.
func TestKernelPhases(t *testing.T) {
	t.Parallel()
	s, idle := readKernelSamples(t)
	if !(idle > 0.17 && idle < 0.18) {
		t.Errorf("idle draw %.3f of board power, want 0.17–0.18 (119–126 W)", idle)
	}
	prefills := 0
	for _, x := range s {
		if x.Row.Kind == "prefill" && x.Row.Prompts*x.Row.PromptTokens >= 2048 {
			prefills++
			if x.Fraction < 0.97 || x.Row.AvgSMMHz > 1700 {
				t.Errorf("line %d: a %d-token prefill at %.0f W, %.0f MHz: expected at the 700 W limit, throttled", x.Row.Line, x.Row.PromptTokens, x.Row.AvgPowerW, x.Row.AvgSMMHz)
			}
			if p := Builtin.PredictKernel(x); p < 0.97 {
				t.Errorf("line %d: the model draws %.3f of board power in a power-limited prefill (measured %.3f)", x.Row.Line, p, x.Fraction)
			}
		}
		if x.Row.Kind == "decode" && !(x.Fraction > idle && x.Fraction <= 1) {
			t.Errorf("line %d: decode draws %.3f, outside (idle %.3f, 1]", x.Row.Line, x.Fraction, idle)
		}
	}
	if prefills < 20 {
		t.Errorf("%d long prefills: the tables should have more", prefills)
	}
}

// TestReadKernelsErrors: malformed tables are refused with the line.
func TestReadKernelsErrors(t *testing.T) {
	t.Parallel()
	head := "model,tp,layers,kind,prompts,tokens_per_prompt,batch,context_per_request,m,n,k,time_ms,iters,cuda_graph,avg_power_w,avg_sm_mhz,note\n"
	for _, tc := range []struct{ in, want string }{
		{"model,tp\n", ":1: missing column"},
		{head + "llama3.1-8b,1,32,decode,,,16,x,,,,8.2,72,True,254.1,1980,\n", ":2: column context_per_request"},
		{head + "llama3.1-8b,1,32,prefill,1,128,,,,,,7.4,80,True,-3,1980,\n", ":2: column avg_power_w"},
		{head + "llama3.1-8b,1,32,prefill,1,128,,,,,,7.4,80,True,,1980,\n", ":2: a prefill row needs a positive avg_power_w"},
		{head + "gemm,,,gemm,,,,,16,1,1,0.04,2000,True,676.4,1800,x\nllama3.1-8b,0,32,prefill,1,128,,,,,,7.4,80,True,490,1980,\n", ":3: prefill row: expected tp ≥ 1"},
	} {
		_, err := ReadKernels(strings.NewReader(tc.in))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: error %v, want %q", tc.in, err, tc.want)
		}
	}
	rows, err := ReadKernels(strings.NewReader(head + "idle,,,idle,,,,,,,,2500,,,118.9,1980,rest\n"))
	if err != nil || len(rows) != 1 || rows[0].Kind != "idle" || rows[0].AvgPowerW != 118.9 {
		t.Errorf("idle row: %+v, %v", rows, err)
	}
}

// TestReadKernelDirNeedsIterations: a directory whose tables hold an idle
// reading but no iteration with board power (only GEMM and copy rows) is
// refused naming the directory, not read as no samples.
func TestReadKernelDirNeedsIterations(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	head := "model,tp,layers,kind,prompts,tokens_per_prompt,batch,context_per_request,m,n,k,time_ms,iters,cuda_graph,avg_power_w,avg_sm_mhz,note\n"
	kernels := head + "gemm,,,gemm,,,,,16,1,1,0.04,2000,True,676.4,1800,x\nidle,,,idle,,,,,,,,2500,,,118.9,1980,rest\n"
	if err := os.WriteFile(filepath.Join(dir, "kernels.csv"), []byte(kernels), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "mixed.csv"), []byte(head+"gemm,,,gemm,,,,,64,1,1,0.05,2000,True,680.2,1800,x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	g, err := hw.Lookup(KernelGPU)
	if err != nil {
		t.Fatal(err)
	}
	s, _, err := ReadKernelDir(dir, g, measured.Physics)
	if err == nil || !strings.Contains(err.Error(), dir) || !strings.Contains(err.Error(), "no prefill, decode or mixed row") {
		t.Fatalf("samples %d, error %v: want the directory and no iteration rows named", len(s), err)
	}
}
