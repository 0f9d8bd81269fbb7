package cli

import (
	"bytes"
	"encoding/csv"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// machineTOML is a plan with one new machine type, its keys set by extra.
func machineTOML(extra string) string {
	return `[[machine]]
name = "DGX-X"
gpu = "X"
gpus = 8
gpu_memory_gib = 80
link_gbps = 400
gpu_power_cap = 1
tensor_parallel = 8
` + extra
}

func TestPlanRejectsMisleadingMachines(t *testing.T) {
	dir := t.TempDir()
	cases := []struct {
		name  string
		extra string
		code  int
		wants []string
	}{
		{"zero_cost", "cost_usd_per_h = 0\npower_kw = 6.5\nperf_hardware = \"a100-80gb\"\n", 2, []string{`machine "DGX-X"`, "cost_usd_per_h must be a positive"}},
		{"zero_power", "cost_usd_per_h = 10\npower_kw = 0\nperf_hardware = \"a100-80gb\"\n", 2, []string{`machine "DGX-X"`, "power_kw must be a positive"}},
		{"no_perf_model", "cost_usd_per_h = 10\npower_kw = 6.5\nperf_hardware = \"tpu-v9\"\n", 2, []string{`machine "DGX-X"`, `perf_hardware "tpu-v9" has no profile`, "no gpu_spec", "a100-80gb"}},
		{"spec_covers_it", "cost_usd_per_h = 10\npower_kw = 6.5\nperf_hardware = \"tpu-v9\"\ngpu_spec = \"h200_sxm\"\n", 0, []string{"DGX-X"}},
		{"profile_covers_it", "cost_usd_per_h = 10\npower_kw = 6.5\nperf_hardware = \"A100-80GB\"\n", 0, []string{"DGX-X"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(dir, tc.name+".toml")
			if err := os.WriteFile(path, []byte(machineTOML(tc.extra)), 0o644); err != nil {
				t.Fatal(err)
			}
			code, out, errs := runCLI(t, "catalog", "--plan", path)
			if code != tc.code {
				t.Fatalf("exit %d, want %d; stderr %s", code, tc.code, errs)
			}
			got := errs
			if code == 0 {
				got = out
			}
			for _, w := range append(tc.wants, map[bool]string{true: path, false: ""}[code != 0]) {
				if !strings.Contains(got, w) {
					t.Errorf("output lacks %q:\n%s", w, got)
				}
			}
			if strings.Contains(out, "NaN") {
				t.Errorf("NaN printed:\n%s", out)
			}
		})
	}
}

func TestSplitwiseTraceEpochMicroseconds(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "trace.csv")
	var b strings.Builder
	b.WriteString("request_id,request_type,application_id,arrival_timestamp,batch_size,prompt_size,token_size\n")
	for i := 0; i < 5; i++ {
		fmt.Fprintf(&b, "%d,2,0,%d,1,100,10\n", i, 1700000000000000+i*250000)
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errs := runCLI(t, "simulate", "--design", "hh", "--prompt", "2", "--token", "1", "--trace", path)
	wantBadInput(t, code, out, errs, path+":2", "arrival_timestamp", "too large to resolve a millisecond")
	// Epoch seconds are fine: the trace starts at its first arrival.
	b.Reset()
	b.WriteString("request_id,request_type,application_id,arrival_timestamp,batch_size,prompt_size,token_size\n")
	for i := 0; i < 50; i++ {
		fmt.Fprintf(&b, "%d,2,0,%.3f,1,100,10\n", i, 1700000000+float64(i)*0.25)
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errs = runCLI(t, "trace", "stats", "--trace", path, "--format", "csv")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	if !strings.Contains(out, "12.25") {
		t.Errorf("trace stats of epoch seconds should span 12.25 s:\n%s", out)
	}
	code, out, errs = runCLI(t, "simulate", "--design", "hh", "--prompt", "2", "--token", "1", "--trace", path)
	if code != 0 {
		t.Fatalf("simulate exit %d: %s", code, errs)
	}
	// Taken as absolute, the machines would idle 1.7e9 s first: "0.0% busy".
	if !strings.Contains(out, "% busy") || strings.Contains(out, " 0.0% busy") || strings.Contains(out, "e+09") {
		t.Errorf("simulate of an epoch-seconds trace:\n%s", out)
	}
}

func TestOptimizeAbsurdRate(t *testing.T) {
	start := time.Now()
	code, out, errs := runCLI(t, "optimize", "--goal", "cost", "--rps", "1e9", "--designs", "HH")
	wantBadInput(t, code, out, errs, "--rps 1e+09", "--duration 2m", "lower --rps or --duration")
	if strings.Contains(errs, "synthesize") || time.Since(start) > 20*time.Second {
		t.Errorf("not caught up front in the user's terms (%v): %s", time.Since(start), errs)
	}
}

func TestOptimizeTraceUnservableNamesLine(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "trace.csv")
	in := "request_id,request_type,application_id,arrival_timestamp,batch_size,prompt_size,token_size\n" +
		"0,2,0,0.0,1,1000,50\n" +
		"1,2,0,0.1,1,1200,40\n" +
		"2,2,0,0.2,1,900000,50\n" + // line 4: no DGX-H100 holds its KV-cache
		"3,2,0,0.3,1,800,30\n"
	if err := os.WriteFile(path, []byte(in), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errs := runCLI(t, "optimize", "--goal", "cost", "--rps", "5", "--duration", "10s", "--designs", "HH",
		"--max-machines", "8", "--trace", path)
	wantBadInput(t, code, out, errs, path+":4:", "unservable", "900000 tokens")
}

// TestOptimizeBoundedBy: an answer the machine bound holds back says so
// in the table and in the optima CSV's bounded_by column.
func TestOptimizeBoundedBy(t *testing.T) {
	out := filepath.Join(t.TempDir(), "optima.csv")
	code, stdout, errs := runCLI(t, "optimize", "--goal", "cost", "--rps", "30", "--designs", "H100", "--max-machines", "3",
		"--duration", "20s", "--out", out)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	if !strings.Contains(stdout, "warning   Baseline-H100: its closest point has a pool at the bound of 3 machines (--max-machines)") {
		t.Errorf("no warning in the table:\n%s", stdout)
	}
	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(bytes.NewReader(data)).ReadAll()
	if err != nil || len(rows) != 2 {
		t.Fatalf("optima CSV: %v\n%s", err, data)
	}
	col := slices.Index(rows[0], "bounded_by")
	if col < 0 || rows[1][col] != "max-machines" {
		t.Errorf("optima CSV: bounded_by is not max-machines:\n%s", data)
	}
}

// TestTraceMissingFile: a --trace that is not a file is an input error
// naming the flag; one named like a built-in workload says to give it as
// --workload.
func TestTraceMissingFile(t *testing.T) {
	for _, tc := range []struct {
		args  []string
		wants []string
	}{
		{[]string{"simulate", "--design", "HH", "--prompt", "2", "--token", "2", "--trace", "nosuch.csv"}, []string{"--trace nosuch.csv: no such file", "--workload: coding, conversation"}},
		{[]string{"simulate", "--design", "HH", "--prompt", "2", "--token", "2", "--trace", "Coding"}, []string{"--trace Coding: no such file", "give it as --workload Coding"}},
		{[]string{"trace", "stats", "--trace", "conversation"}, []string{"give it as --workload conversation"}},
	} {
		code, _, errs := runCLI(t, tc.args...)
		if code != 2 {
			t.Errorf("%v: exit %d, want 2; stderr %s", tc.args, code, errs)
		}
		for _, w := range tc.wants {
			if !strings.Contains(errs, w) {
				t.Errorf("%v: stderr lacks %q:\n%s", tc.args, w, errs)
			}
		}
	}
}
