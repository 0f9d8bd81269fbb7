package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestKernelFileGPU: perf validate --kernels and perf fit --kernels read a
// measurement as the GPU its meta.json names, refuse a --hardware that
// contradicts it, and ask for --hardware when no meta.json says.
func TestKernelFileGPU(t *testing.T) {
	h200 := "data/gpu-kernels/h200/kernels.csv"
	code, out, errs := runCLI(t, "perf", "validate", "--kernels", h200)
	if code != 0 || !strings.Contains(out, "on h200_sxm,") {
		t.Errorf("without --hardware: exit %d, stdout %.120q, stderr %q: want the H200 its meta.json names", code, out, errs)
	}
	code, out, errs = runCLI(t, "perf", "validate", "--kernels", h200, "--hardware", "h100")
	wantBadInput(t, code, out, errs, "--hardware h100, but", "meta.json says", "NVIDIA H200 (h200_sxm)")

	dir := t.TempDir()
	data, err := os.ReadFile(h200)
	if err != nil {
		t.Fatal(err)
	}
	bare := filepath.Join(dir, "kernels.csv")
	if err := os.WriteFile(bare, data, 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errs = runCLI(t, "perf", "fit", "--kernels", bare, "--out", filepath.Join(dir, "k.toml"))
	wantBadInput(t, code, out, errs, "no meta.json beside it says which GPU measured it: give --hardware")
	if _, err := os.Stat(filepath.Join(dir, "k.toml")); err == nil {
		t.Error("a refused fit wrote its --out file")
	}
	code, out, errs = runCLI(t, "perf", "fit", "--kernels", bare, "--hardware", "h200", "--out", filepath.Join(dir, "k.toml"))
	if code != 0 || !strings.Contains(out, "kernel layer of h200_sxm") {
		t.Errorf("with --hardware h200: exit %d, stdout %q, stderr %q", code, out, errs)
	}
	// A driver's name with its memory technology ("NVIDIA H100 80GB HBM3")
	// names the H100.
	if err := os.WriteFile(filepath.Join(dir, "meta.json"), []byte(`{"gpu": "NVIDIA H100 80GB HBM3"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errs = runCLI(t, "perf", "validate", "--kernels", bare)
	if code != 0 || !strings.Contains(out, "on h100_sxm,") {
		t.Errorf("meta.json naming an H100: exit %d, stdout %.120q, stderr %q", code, out, errs)
	}
	if err := os.WriteFile(filepath.Join(dir, "meta.json"), []byte(`{"gpu": "Acme Z9"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errs = runCLI(t, "perf", "validate", "--kernels", bare)
	wantBadInput(t, code, out, errs, `gpu "Acme Z9" is no built-in GPU: give --hardware GPU`)
}
