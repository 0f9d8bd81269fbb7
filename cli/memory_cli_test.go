package cli

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// kvTokens reads the KV tokens per machine of model on machine from a
// catalog's output (-1 for "no fit").
func kvTokens(t *testing.T, out, model, machine string) int64 {
	t.Helper()
	for _, line := range strings.Split(out, "\n") {
		if !strings.HasPrefix(line, model+" ") {
			continue
		}
		m := regexp.MustCompile(regexp.QuoteMeta(machine) + ` (\d+|no fit)(,|$)`).FindStringSubmatch(line)
		if m == nil {
			t.Fatalf("no %s figure for %s in %q", machine, model, line)
		}
		if m[1] == "no fit" {
			return -1
		}
		n, _ := strconv.ParseInt(m[1], 10, 64)
		return n
	}
	t.Fatalf("catalog lists no model %s", model)
	return 0
}

// --gpu-memory-utilization and the plan keys gpu_memory_utilization (top
// level, and per [[machine]]) size the KV cache: more memory to the engine
// holds more tokens; a [[machine]] key beats the plan's, the flag beats
// both; a fraction outside (0, 1] is refused naming the flag or key.
func TestGPUMemoryUtilization(t *testing.T) {
	catalog := func(args ...string) string {
		t.Helper()
		code, out, errs := runCLI(t, append([]string{"catalog"}, args...)...)
		if code != 0 {
			t.Fatalf("catalog %v: %d %s", args, code, errs)
		}
		return out
	}
	def := kvTokens(t, catalog(), "llama3.1-70b", "DGX-H100")
	low := kvTokens(t, catalog("--gpu-memory-utilization", "0.7"), "llama3.1-70b", "DGX-H100")
	high := kvTokens(t, catalog("--gpu-memory-utilization", "0.95"), "llama3.1-70b", "DGX-H100")
	if !(low < def && def < high) {
		t.Errorf("KV tokens at 0.7, 0.9, 0.95: %d, %d, %d", low, def, high)
	}
	dir := t.TempDir()
	plan := filepath.Join(dir, "u.toml")
	if err := os.WriteFile(plan, []byte("gpu_memory_utilization = 0.7\n[[machine]]\nname = \"DGX-A100\"\ngpu_memory_utilization = 0.95\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out := catalog("--plan", plan)
	if got := kvTokens(t, out, "llama3.1-70b", "DGX-H100"); got != low {
		t.Errorf("plan-wide 0.7: %d tokens on DGX-H100, want %d", got, low)
	}
	if got := kvTokens(t, out, "llama3.1-70b", "DGX-A100"); got != high { // same GPU memory as the H100
		t.Errorf("[[machine]] 0.95: %d tokens on DGX-A100, want %d", got, high)
	}
	if got := kvTokens(t, catalog("--plan", plan, "--gpu-memory-utilization", "0.9"), "llama3.1-70b", "DGX-A100"); got != def {
		t.Errorf("the flag over the plan: %d, want %d", got, def)
	}
	// Low enough, the 70B model's weights no longer fit 8 × H100.
	if got := kvTokens(t, catalog("--gpu-memory-utilization", "0.2"), "llama3.1-70b", "DGX-H100"); got != -1 {
		t.Errorf("at 0.2: %d tokens, want no fit", got)
	}
	for _, v := range []string{"0", "1.5", "-0.1"} {
		code, out, errs := runCLI(t, "catalog", "--gpu-memory-utilization", v)
		wantBadInput(t, code, out, errs, "--gpu-memory-utilization")
	}
	bad := filepath.Join(dir, "bad.toml")
	if err := os.WriteFile(bad, []byte("[[machine]]\nname = \"DGX-A100\"\ngpu_memory_utilization = 2\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errs := runCLI(t, "catalog", "--plan", bad)
	wantBadInput(t, code, out, errs, "gpu_memory_utilization")
	// simulate refuses a replica whose weights do not fit, with the sizes.
	code, out, errs = runCLI(t, "simulate", "--design", "H200", "--machines", "1", "--model", "deepseek-r1", "--gpu-memory-utilization", "0.5", "--duration", "5s")
	wantBadInput(t, code, out, errs, "GiB per GPU", "50%")
}

// --gpu-memory-utilization is an engine's share of each GPU, which
// --compat splitwise-sim's memory rule (all of the machine's memory less
// the weights) does not have: the two together are refused rather than
// the flag ignored, in every command that takes both, and so is a
// plan's gpu_memory_utilization key. perf query applies
// the flag to its memory check: Llama-3.1-70B bf16 fits one H200 at 0.95
// (131.4 GiB of weights) and not at 0.9.
func TestGPUMemoryUtilizationNotWithCompat(t *testing.T) {
	for _, args := range [][]string{
		{"simulate", "--design", "HH", "--prompt", "23", "--token", "8", "--rps", "5", "--duration", "5s"},
		{"optimize", "--goal", "cost", "--rps", "5", "--duration", "5s"},
		{"perf", "query", "--hardware", "a100", "--model", "bloom-176b", "--prompt-tokens", "100"},
		{"sweep", "--cluster", "HH:23:8", "--rps", "5", "--duration", "5s"},
		{"evaluate", "--cluster", "HH:23:8", "--rps", "5", "--duration", "5s"},
	} {
		code, out, errs := runCLI(t, append(args, "--compat", "splitwise-sim", "--gpu-memory-utilization", "0.5")...)
		wantBadInput(t, code, out, errs, "--gpu-memory-utilization", "--compat splitwise-sim")
	}
	plan := filepath.Join(t.TempDir(), "u.toml")
	if err := os.WriteFile(plan, []byte("gpu_memory_utilization = 0.8\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errs := runCLI(t, "simulate", "--design", "HH", "--prompt", "23", "--token", "8", "--rps", "5", "--duration", "5s", "--compat", "splitwisesim", "--plan", plan)
	wantBadInput(t, code, out, errs, plan, "gpu_memory_utilization", "--compat splitwise-sim")
	q := []string{"perf", "query", "--hardware", "h200", "--model", "llama3.1-70b", "--tp", "1", "--prompt-tokens", "100"}
	// ... and its answer says the memory it assumed.
	if code, out, errs := runCLI(t, append(q, "--gpu-memory-utilization", "0.95")...); code != 0 || !strings.Contains(out, "iteration of") ||
		!strings.Contains(out, "memory: bf16 weights, bf16 KV cache, 95% of GPU memory to the engine: H200·tp1 131.4 GiB weights/GPU") {
		t.Errorf("at 0.95: exit %d, stdout %q, stderr %q", code, out, errs)
	}
	code, out, errs = runCLI(t, append(q, "--gpu-memory-utilization", "0.9")...)
	wantBadInput(t, code, out, errs, "does not fit on H200·tp1")
	code, out, errs = runCLI(t, append(q, "--gpu-memory-utilization", "1.5")...)
	wantBadInput(t, code, out, errs, "--gpu-memory-utilization 1.5")
}

// A profiled pair the catalog cannot size (a --fitted pair of a model it
// does not know) has no memory model: --gpu-memory-utilization is refused
// for it rather than ignored; without the flag it is answered, with no
// memory line.
func TestPerfQueryUtilizationUnsizedPair(t *testing.T) {
	data, err := os.ReadFile("testdata/cli/perf_fit.files/fitted.toml")
	if err != nil {
		t.Fatal(err)
	}
	fitted := filepath.Join(t.TempDir(), "mine.toml")
	if err := os.WriteFile(fitted, []byte(strings.Replace(string(data), `model = "bloom-176b"`, `model = "my-model"`, 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	q := []string{"perf", "query", "--fitted", fitted, "--model", "my-model", "--hardware", "a100", "--prompt-tokens", "1000"}
	if code, out, errs := runCLI(t, q...); code != 0 || !strings.Contains(out, "iteration of") || strings.Contains(out, "memory:") {
		t.Fatalf("exit %d, stdout %q, stderr %q", code, out, errs)
	}
	code, out, errs := runCLI(t, append(q, "--gpu-memory-utilization", "0.8")...)
	wantBadInput(t, code, out, errs, "--gpu-memory-utilization", "my-model/a100-80gb/tp8", "the catalog has no model my-model")
}

// A profiled pair's answer ends with the memory the catalog assumes of
// it, as the analytic model's does: the one memory model's split by
// default, the reference simulator's rule with --compat (a pair the
// catalog cannot size has none: TestPerfQueryUtilizationUnsizedPair).
func TestPerfQueryProfiledMemoryLine(t *testing.T) {
	q := []string{"perf", "query", "--model", "bloom-176b", "--hardware", "h100", "--prompt-tokens", "1000"}
	for _, tc := range []struct {
		extra []string
		want  string
	}{
		{nil, "memory: bf16 weights, bf16 KV cache, 90% of GPU memory to the engine: H100·tp8 41.0 GiB weights/GPU, 61911 KV tokens per replica\n"},
		{[]string{"--compat", "splitwise-sim"}, "memory: bf16 weights; KV cache = all GPU memory − weights (the reference simulator's rule)\n"},
	} {
		code, out, errs := runCLI(t, append(q, tc.extra...)...)
		if code != 0 || !strings.HasSuffix(out, tc.want) {
			t.Errorf("%v: exit %d, stdout %q (want it to end %q), stderr %q", tc.extra, code, out, tc.want, errs)
		}
	}
}

// A profiled model whose weights a plan makes too large for its machines
// is refused with the memory model's sizes before any simulation, by
// every command that builds a cluster (exit 2), as an analytic one is:
// optimize ran into it mid-search and exited 1.
func TestProfiledModelBeyondMemory(t *testing.T) {
	plan := filepath.Join(t.TempDir(), "w.toml")
	if err := os.WriteFile(plan, []byte("[[model]]\nname = \"llama2-70b\"\nweight_bytes = 700000000000\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	sizes := "llama2-70b does not fit on H100·tp8: its weights need 81.5 GiB per GPU, the engine may use 70.4 GiB per GPU"
	base := []string{"--plan", plan, "--model", "llama2-70b", "--rps", "2", "--duration", "5s"}
	for _, tc := range []struct {
		args  []string
		wants []string
	}{
		{[]string{"optimize", "--goal", "cost"}, []string{"--model llama2-70b: no design can serve it", "Splitwise-HH left out: machine type DGX-H100: " + sizes}},
		{[]string{"optimize", "--goal", "cost", "--designs", "HH"}, []string{"--designs Splitwise-HH: machine type DGX-H100: " + sizes}},
		{[]string{"simulate", "--design", "HH", "--prompt", "2", "--token", "2"}, []string{sizes}},
		{[]string{"sweep", "--cluster", "HH:2:2"}, []string{sizes}},
		{[]string{"evaluate", "--cluster", "HH:2:2"}, []string{sizes}},
	} {
		code, out, errs := runCLI(t, append(tc.args, base...)...)
		wantBadInput(t, code, out, errs, tc.wants...)
	}
}
