package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
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
