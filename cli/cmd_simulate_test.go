package cli

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"splitplan/internal/fuzzing"
)

// runCLI runs splitplan with args and returns its exit status, stdout and stderr.
func runCLI(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := run(append([]string{"splitplan"}, args...), &out, &errb)
	return code, out.String(), errb.String()
}

// wantBadInput fails unless a command exited 2 (bad usage or input) with
// every one of wants in its stderr.
func wantBadInput(t *testing.T, code int, stdout, errs string, wants ...string) {
	t.Helper()
	if code != 2 {
		t.Errorf("exit %d, want 2; stdout %q stderr %q", code, stdout, errs)
		return
	}
	for _, w := range wants {
		if !strings.Contains(errs, w) {
			t.Errorf("stderr %q lacks %q", errs, w)
		}
	}
}

func TestSimulateCommand(t *testing.T) {
	dir := t.TempDir()
	reqs, machines := filepath.Join(dir, "requests.csv"), filepath.Join(dir, "machines.csv")
	code, out, errs := runCLI(t, "simulate", "--design", "hh", "--prompt", "6", "--token", "3", "--rps", "10",
		"--duration", "20s", "--workload", "conversation", "--out", reqs, "--machines-out", machines)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	for _, want := range []string{"Splitwise-HH 6P/3T", "TTFT", "TBT (reference: /output)", "E2E", "KV transfers", "simulated"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	data, err := os.ReadFile(reqs)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(data)), "\n")
	if !strings.HasPrefix(lines[0], "request_id,arrival_s,prompt_tokens,output_tokens,queue_s,ttft_s,tbt_s,tbt_reference_s,max_gap_s,e2e_s,prompt_machine,token_machine,transferred,") ||
		!strings.Contains(lines[0], ",borrowed,preemptions") || len(lines) < 150 {
		t.Errorf("requests.csv: %d lines, header %s", len(lines), lines[0])
	}
	m, _ := os.ReadFile(machines)
	if n := strings.Count(string(m), "\n"); n != 10 {
		t.Errorf("machines.csv has %d lines, want a header and 9 machines", n)
	}
	// The same flags write the same bytes.
	reqs2 := filepath.Join(dir, "again.csv")
	runCLI(t, "simulate", "--design", "Splitwise-HH", "--prompt", "6", "--token", "3", "--rps", "10",
		"--duration", "20s", "--workload", "conversation", "--out", reqs2)
	data2, _ := os.ReadFile(reqs2)
	if !bytes.Equal(data, data2) {
		t.Error("requests.csv differs between two identical runs")
	}
}

func TestSimulateTraceReplayAndUnservable(t *testing.T) {
	dir := t.TempDir()
	tr := filepath.Join(dir, "t.csv")
	os.WriteFile(tr, []byte("TIMESTAMP,ContextTokens,GeneratedTokens\n"+
		"2023-11-16 18:17:03.0000000,100,10\n"+
		"2023-11-16 18:17:04.0000000,95000,10\n"), 0o644)
	code, _, errs := runCLI(t, "simulate", "--design", "A100", "--machines", "2", "--trace", tr)
	if code != 2 || !strings.Contains(errs, tr+":3:") || !strings.Contains(errs, "unservable") {
		t.Errorf("exit %d, stderr %q: want 2 naming %s:3 and unservable", code, errs, tr)
	}
	os.WriteFile(tr, []byte("TIMESTAMP,ContextTokens,GeneratedTokens\n"+
		"2023-11-16 18:17:03.0000000,100,10\n"+
		"2023-11-16 18:17:04.0000000,950,10\n"), 0o644)
	code, out, errs := runCLI(t, "simulate", "--design", "A100", "--machines", "2", "--trace", tr)
	if code != 0 || !strings.Contains(out, "replayed (2 requests)") {
		t.Errorf("exit %d: %s %s", code, out, errs)
	}
}

func TestSimulateBadFlags(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"simulate", "--prompt", "3", "--token", "2"}, "--design is required"},
		{[]string{"simulate", "--design", "XX", "--prompt", "3", "--token", "2"}, `unknown design "XX"`},
		{[]string{"simulate", "--design", "HH", "--prompt", "0", "--token", "2"}, "--prompt must be from 1 to 10000"},
		{[]string{"simulate", "--design", "HH", "--prompt", "3", "--token", "-2"}, "--token must be from 1 to 10000"},
		{[]string{"simulate", "--design", "HH", "--prompt", "9223372036854775807", "--token", "1"}, "--prompt must be from 1 to 10000"},
		{[]string{"simulate", "--design", "HH", "--prompt", "3", "--token", "2", "--burstiness", "0"}, "burstiness 0: expected a coefficient of variation"},
		// (a gamma shape of 1/cv² overflowing to +Inf hung the sampler)
		{[]string{"simulate", "--design", "HH", "--prompt", "3", "--token", "2", "--burstiness", "1e-300"}, "burstiness 1e-300: expected a coefficient of variation of the gaps from 0.01"},
		// A figure beyond any GPU or site is refused, not priced (they
		// printed 300-digit dollars).
		{[]string{"optimize", "--goal", "cost", "--rps", "5", "--price", "h100=1e300"}, "--price h100: the price of h100, $1e+300 per GPU-hour, is beyond any GPU's (at most $1000"},
		{[]string{"optimize", "--goal", "tco", "--rps", "5", "--pue", "1e300"}, "--pue must be a number from 1 to 5"},
		{[]string{"optimize", "--goal", "tco", "--rps", "5", "--amortize-years", "1e-300"}, "--amortize-years must be a number of years from 1/12 (a month) to 50"},
		{[]string{"optimize", "--goal", "tco", "--rps", "5", "--electricity-price", "11"}, "--electricity-price must be zero or a positive number of $/kWh up to 10"},
		{[]string{"optimize", "--goal", "tco", "--rps", "5", "--opex-per-gpu-h", "1e300"}, "--opex-per-gpu-h must be zero or a positive number of $ per GPU-hour up to 1000"},
		{[]string{"simulate", "--design", "HH", "--machines", "3"}, "give --prompt P --token T"},
		{[]string{"simulate", "--design", "Baseline-A100", "--prompt", "3"}, "give --machines N"},
		{[]string{"simulate", "--design", "Baseline-A100", "--machines", "-1"}, "--machines must be from 1 to 10000"},
		{[]string{"simulate", "--design", "HH", "--prompt", "3", "--token", "2", "--rps", "-5"}, "--rps must be a positive"},
		{[]string{"simulate", "--design", "HH", "--prompt", "3", "--token", "2", "--duration", "soon"}, "--duration"},
		{[]string{"simulate", "--design", "HH", "--prompt", "3", "--token", "2", "--workload", "chat"}, "--workload"},
		{[]string{"simulate", "--design", "HH", "--prompt", "3", "--token", "2", "--model", "gpt5"}, `unknown model "gpt5"`},
		{[]string{"sweep", "--cluster", "HH:4:1", "--model", "gpt5", "--rps", "5"}, `--model: unknown model "gpt5"`},
		{[]string{"sweep", "--cluster", "HH:4:1", "--rps", "5", "--slo-set", "ttft_p95"}, "give the target a slowdown factor with --slo-ttft"},
		{[]string{"simulate", "--design", "HH", "--prompt", "3", "--token", "2", "--compat", "vllm"}, "--compat"},
		{[]string{"simulate", "--design", "HH", "--prompt", "3", "--token", "2", "--transfer", "carrier"}, "--transfer"},
		{[]string{"simulate", "--design", "HH", "--prompt", "3", "--token", "2", "--trace", "/nonexistent.csv"}, "/nonexistent.csv"},
		{[]string{"simulate", "--design", "HH", "--prompt", "x"}, "invalid value"},
		{[]string{"simulate", "--bogus"}, "flag provided but not defined"},
		{[]string{"simulate", "extra", "--design", "HH"}, "unexpected argument"},
		{[]string{"nosuchcommand"}, "nosuchcommand"},
	} {
		code, out, errs := runCLI(t, tc.args...)
		wantBadInput(t, code, out, errs, tc.want)
	}
}

func TestCatalogAndPlan(t *testing.T) {
	code, out, errs := runCLI(t, "catalog")
	if code != 0 {
		t.Fatal(errs)
	}
	for _, want := range []string{"DGX-A100", "DGX-H100cap", "7.995", "bloom-176b", "61911", "Splitwise-HHcap", "llama2-70b/h100-80gb-pcap/tp8"} {
		if !strings.Contains(out, want) {
			t.Errorf("catalog lacks %q", want)
		}
	}
	code, out, errs = runCLI(t, "catalog", "--plan", "examples/custom-gpu.toml")
	if code != 0 {
		t.Fatal(errs)
	}
	if !strings.Contains(out, "DGX-H200") || !strings.Contains(out, "Splitwise-H200A") || !strings.Contains(out, "14 ") {
		t.Errorf("plan not applied:\n%s", out)
	}
	code, out, errs = runCLI(t, "simulate", "--plan", "examples/custom-gpu.toml", "--design", "h200-a",
		"--prompt", "4", "--token", "2", "--rps", "5", "--duration", "10s")
	if code != 0 || !strings.Contains(out, "Splitwise-H200A 4P/2T") {
		t.Errorf("simulate with a plan design: exit %d %s %s", code, out, errs)
	}
}

func TestPlanErrors(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		plan string
		want string
	}{
		{"[[machine]]\nname = \"DGX-A100\"\ncost_usd_per_hour = 3\n", "unknown key machine.cost_usd_per_hour"},
		{"[search]\nmax = 3\n", "unknown key search"},
		{"[[machine]]\ngpus = 8\n", "machine 1: name is missing"},
		{"[[machine]]\nname = \"X\"\ngpus = 8\n", `machine "X": gpu_memory_gib must be a positive number`},
		{"[[design]]\nname = \"D\"\nkind = \"splitwise\"\nprompt = \"DGX-A100\"\ntoken = \"TPU\"\n", `token: unknown machine type "TPU"`},
		{"[[machine]]\nname = \"DGX-A100\"\ngpus = \"eight\"\n", "gpus"},
		{"this is not toml", "plan.toml"},
		{"[[perf]]\nmodel = \"m\"\nhardware = \"h\"\ntp = 8\n", "[[perf]] 1"},
		{"[[machine]]\nname = \"DGX-A100\"\ncost_usd_per_h = 1.0\n[[machine]]\nname = \"dgx-a100\"\ncost_usd_per_h = 2.0\n", `machine 2: "dgx-a100" is also machine 1's name`},
		{"[[machine]]\nname = \"DGX-A100\"\ntensor_parallel = 0\n", `machine 1 ("DGX-A100"): tensor_parallel = 0: leave the key out`},
		{"[[machine]]\nname = \"DGX-A100\"\ngpu_memory_utilization = 0.0\n", `gpu_memory_utilization = 0: leave the key out`},
		{"gpu_memory_utilization = 0\n", "gpu_memory_utilization = 0: leave the key out for the default"},
		{"[[machine]]\nname = \"DGX-H200\"\ngpu_tflops = 5000\n", "gpu_tflops = 5000, but the analytic model prices this machine by the h200_sxm spec sheet (989)"},
		{"[[machine]]\nname = \"DGX-B200\"\nhbm_bandwidth_gbs = 1\n", "hbm_bandwidth_gbs = 1, but the analytic model prices this machine by the b200_sxm spec sheet"},
	} {
		path := filepath.Join(dir, "plan.toml")
		os.WriteFile(path, []byte(tc.plan), 0o644)
		code, _, errs := runCLI(t, "catalog", "--plan", path)
		if code != 2 || !strings.Contains(errs, tc.want) || !strings.Contains(errs, path) {
			t.Errorf("plan %q: exit %d, stderr %q; want exit 2 naming the file and %q", tc.plan, code, errs, tc.want)
		}
	}
	code, _, errs := runCLI(t, "catalog", "--plan", filepath.Join(dir, "missing.toml"))
	if code != 2 || !strings.Contains(errs, "missing.toml") {
		t.Errorf("missing plan: exit %d %s", code, errs)
	}
}

// FuzzPlan: a plan document either applies cleanly to a valid catalog or
// is rejected with an error; it never panics.
func FuzzPlan(f *testing.F) {
	fuzzing.Seed(f,
		"", "[[machine]]\nname = \"DGX-A100\"\ncost_usd_per_h = 14.0\n",
		"[[design]]\nname = \"X\"\nkind = \"baseline\"\nmachine = \"DGX-H100\"\n",
		"[[model]]\nname = \"m\"\nlayers = 2\nhidden = 64\nheads = 8\nkv_heads = 2\nweight_bytes = 1000\n",
		"[[machine]]\nname = \"N\"\ngpus = -3\n", "[[perf]]\nmodel = 1\n", "x = [1, 2",
	)
	if data, err := os.ReadFile("examples/custom-gpu.toml"); err == nil {
		f.Add(string(data))
	}
	f.Fuzz(func(t *testing.T, doc string) {
		p, err := loadPlan("")
		if err != nil {
			t.Fatal(err)
		}
		if err := p.apply([]byte(doc), "fuzz.toml"); err != nil {
			return
		}
		if err := p.Catalog.Validate(); err != nil {
			t.Fatalf("applied plan left an invalid catalog: %v", err)
		}
	})
}

// TestLongFlagNames: urfave/cli's flag-package messages name a long flag
// with two dashes, as the help does; a one-letter flag keeps its one dash.
func TestLongFlagNames(t *testing.T) {
	for in, want := range map[string]string{
		`invalid value "-1" for flag -seed: parse error`: `invalid value "-1" for flag --seed: parse error`,
		`flag provided but not defined: -bogus`:          `flag provided but not defined: --bogus`,
		`invalid value "x" for flag -j: parse error`:     `invalid value "x" for flag -j: parse error`,
		`flag provided but not defined: -rate-profile`:   `flag provided but not defined: --rate-profile`,
	} {
		if got := longFlagNames(in); got != want {
			t.Errorf("longFlagNames(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestUnparsableNumberSaysWhatItTakes: a numeric flag's value that does
// not parse is refused saying what the flag takes.
func TestUnparsableNumberSaysWhatItTakes(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"simulate", "--design", "HH", "--prompt", "2", "--token", "2", "--seed", "-1"}, `invalid value "-1" for flag --seed: parse error: expected a whole number, 0 or more (see splitplan simulate --help)`},
		{[]string{"simulate", "--prompt", "x"}, "for flag --prompt: parse error: expected a whole number"},
		{[]string{"optimize", "--rps", "abc"}, "for flag --rps: parse error: expected a number"},
		{[]string{"optimize", "-j", "x"}, "for flag -j: parse error: expected a whole number"},
	} {
		code, _, errs := runCLI(t, tc.args...)
		if code != 2 || !strings.Contains(errs, tc.want) {
			t.Errorf("%v: exit %d, stderr %q; want 2 and %q", tc.args, code, errs, tc.want)
		}
	}
}
