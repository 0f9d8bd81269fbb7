package cli

import (
	"bufio"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestFittedProfileAsNewMachine: a user's own profile, fitted with `perf
// fit`, plus a [[machine]] and a [[design]] in the same plan, is a machine
// type the simulator and the optimizer use.
func TestFittedProfileAsNewMachine(t *testing.T) {
	src := filepath.Join("..", "shared", "data", "splitwise-profiles", "perf_model.csv")
	f, err := os.Open(src)
	if err != nil {
		t.Skip("shared profile not present:", err)
	}
	defer f.Close()
	dir := t.TempDir()
	// A "new GPU": the H100 BLOOM rows renamed.
	var b strings.Builder
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "model,") {
			b.WriteString(line + "\n")
		} else if strings.HasPrefix(line, "bloom-176b,h100-80gb,") {
			b.WriteString(strings.Replace(line, "h100-80gb", "h200-141gb", 1) + "\n")
		}
	}
	profile, plan := filepath.Join(dir, "h200.csv"), filepath.Join(dir, "h200.toml")
	os.WriteFile(profile, []byte(b.String()), 0o644)
	if code, _, errs := runCLI(t, "perf", "fit", "--profile", profile, "--out", plan); code != 0 {
		t.Fatal(errs)
	}
	fitted, _ := os.ReadFile(plan)
	extra := `
[[machine]]
name = "DGX-H200"
gpu = "H200-141GB"
gpus = 8
gpu_memory_gib = 131.0
link_gbps = 400
layerwise_transfer_s = 0.005
cost_usd_per_h = 50.0
power_kw = 11.375
perf_hardware = "h200-141gb"

[[design]]
name = "Splitwise-H200"
kind = "splitwise"
prompt = "DGX-H200"
token = "DGX-H200"
`
	os.WriteFile(plan, append(fitted, extra...), 0o644)
	code, out, errs := runCLI(t, "simulate", "--plan", plan, "--design", "Splitwise-H200", "--prompt", "4", "--token", "2",
		"--rps", "5", "--duration", "20s")
	if code != 0 || !strings.Contains(out, "Splitwise-H200 4P/2T") {
		t.Fatalf("simulate: exit %d %s %s", code, out, errs)
	}
	code, out, errs = runCLI(t, "optimize", "--plan", plan, "--goal", "cost", "--rps", "5", "--designs", "Splitwise-H200,HH",
		"--duration", "20s", "--max-machines", "6")
	if code != 0 || !strings.Contains(out, "Splitwise-H200 ") {
		t.Fatalf("optimize: exit %d %s %s", code, out, errs)
	}
}
