package cli

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"splitplan/traces"
)

// runTrace runs `splitplan trace args...` and returns the exit status,
// stdout and stderr.
func runTrace(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	return runCLI(t, append([]string{"trace"}, args...)...)
}

const traceRealConv = "../shared/data/azure-llm-2023/AzureLLMInferenceTrace_conv.csv"

func traceNeedRealData(t *testing.T) {
	t.Helper()
	if _, err := os.Stat(filepath.Dir(traceRealConv)); err != nil {
		t.Skipf("real traces not available: %v", err)
	}
}

func TestTraceStatsTable(t *testing.T) {
	sameInstant := filepath.Join(t.TempDir(), "same.csv")
	if err := os.WriteFile(sameInstant, []byte("request_id,request_type,application_id,arrival_timestamp,batch_size,prompt_size,token_size\n0,2,0,1.0,1,100,5\n1,2,0,1.0,1,200,5\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		args []string
		want []string
	}{
		{"coding", []string{"--workload", "coding"}, []string{"requests   8819", "AzureLLMInferenceTrace_code.csv", "1469", "p50", "prompt", "output", "req/s"}},
		{"conversation", []string{"--workload", "Conversation", "--format", "table"}, []string{"19366", "1020", "129"}},
		{"fixture", []string{"--trace", "traces/testdata/splitwise_small.csv"}, []string{"requests   4", "27.4 s", "trace traces/testdata/splitwise_small.csv"}},
		{"one instant", []string{"--trace", sameInstant}, []string{"requests   2", "mean rate  — (every request arrives at one instant)"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, out, errs := runTrace(t, append([]string{"stats"}, tt.args...)...)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, errs)
			}
			for _, w := range tt.want {
				if !strings.Contains(out, w) {
					t.Errorf("output lacks %q:\n%s", w, out)
				}
			}
		})
	}
}

func TestTraceStatsCSVAndJSON(t *testing.T) {
	traceNeedRealData(t)
	wantHeader := "requests,duration_s,rate_rps,prompt_mean,prompt_p50,prompt_p90,prompt_p99,prompt_max,output_mean,output_p50,output_p90,output_p99,output_max"
	for _, src := range [][]string{{"--workload", "conversation"}, {"--trace", traceRealConv}} {
		t.Run(src[0], func(t *testing.T) {
			code, out, errs := runTrace(t, append([]string{"stats", "--format", "csv"}, src...)...)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, errs)
			}
			rows, err := csv.NewReader(strings.NewReader(out)).ReadAll()
			if err != nil || len(rows) != 2 || strings.Join(rows[0], ",") != wantHeader {
				t.Fatalf("csv output (err %v):\n%s", err, out)
			}
			got := map[string]string{}
			for i, k := range rows[0] {
				got[k] = rows[1][i]
			}
			if got["requests"] != "19366" || got["prompt_p50"] != "1020" || got["output_p50"] != "129" {
				t.Errorf("csv values %v", got)
			}
			csvRow := got

			code, out, errs = runTrace(t, append([]string{"stats", "--format", "json"}, src...)...)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, errs)
			}
			var obj map[string]any
			if err := json.Unmarshal([]byte(out), &obj); err != nil {
				t.Fatalf("json: %v\n%s", err, out)
			}
			for _, k := range strings.Split(wantHeader, ",") {
				v, ok := obj[k].(float64)
				if !ok {
					t.Fatalf("json lacks number %q:\n%s", k, out)
				}
				if js, _ := json.Marshal(v); string(js) != csvRow[k] {
					t.Errorf("json %s = %s, csv %s", k, js, csvRow[k])
				}
			}
		})
	}
}

func TestTraceGenerateReadBack(t *testing.T) {
	dir := t.TempDir()
	tests := []struct {
		name string
		args []string
	}{
		{"splitwise", []string{"--workload", "coding", "--rps", "70", "--duration", "2m", "--seed", "3"}},
		{"azure", []string{"--workload", "conversation", "--rps", "5", "--duration", "30", "--format", "azure", "--independent"}},
		{"from trace", []string{"--trace", "traces/testdata/azure_small.csv", "--rps", "2.5", "--duration", "1m30s"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(dir, tt.name+".csv")
			code, out, errs := runTrace(t, append(append([]string{"generate"}, tt.args...), "--out", path)...)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, errs)
			}
			reqs, err := traces.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(out, "wrote ") || !strings.Contains(out, path) || !strings.Contains(out, " "+strconv.Itoa(len(reqs))+" requests") {
				t.Errorf("summary %q does not say %d requests to %s", out, len(reqs), path)
			}
			first, _ := os.ReadFile(path)
			// The same flags write the same file.
			if code, _, errs := runTrace(t, append(append([]string{"generate"}, tt.args...), "--out", path)...); code != 0 {
				t.Fatalf("second run: exit %d: %s", code, errs)
			}
			second, _ := os.ReadFile(path)
			if !bytes.Equal(first, second) {
				t.Error("the same flags wrote different files")
			}
			if tt.name == "from trace" {
				for _, r := range reqs {
					if !slices.Contains([]int{4808, 3180, 110, 7433}, r.PromptTokens) {
						t.Fatalf("request %+v not resampled from the trace", r)
					}
				}
			}
		})
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != len(tests) {
		t.Errorf("%d files in the output directory, want %d (temporary files left?)", len(entries), len(tests))
	}
}

func TestTraceBadFlags(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "out.csv")
	bad := filepath.Join(dir, "bad.csv")
	if err := os.WriteFile(bad, []byte(traces.AzureHeader+"\n2023-11-16 18:17:03,10,5\n2023-11-16 18:17:04,ten,5\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	gen := func(args ...string) []string { return append([]string{"generate", "--out", out}, args...) }
	tests := []struct {
		name string
		args []string
		want []string
	}{
		{"stats neither", []string{"stats"}, []string{"--workload", "--trace"}},
		{"stats both", []string{"stats", "--workload", "coding", "--trace", traceRealConv}, []string{"--workload", "--trace"}},
		{"stats unknown workload", []string{"stats", "--workload", "chat"}, []string{"--workload", `"chat"`, "coding, conversation"}},
		{"stats bad format", []string{"stats", "--workload", "coding", "--format", "xml"}, []string{"--format", `"xml"`, "table, csv or json"}},
		{"stats missing file", []string{"stats", "--trace", filepath.Join(dir, "nope.csv")}, []string{"nope.csv"}},
		{"stats malformed file", []string{"stats", "--trace", bad}, []string{bad + ":3:", "column ContextTokens", `"ten" is not a whole number`}},
		{"stats argument", []string{"stats", "extra", "--workload", "coding"}, []string{"unexpected argument"}},
		{"stats unknown flag", []string{"stats", "--colour"}, []string{"colour"}},
		{"generate no rps", gen("--workload", "coding"), []string{"--rps", "required"}},
		{"generate zero rps", gen("--workload", "coding", "--rps", "0"), []string{"--rps", "positive"}},
		{"generate negative rps", gen("--workload", "coding", "--rps", "-3"), []string{"--rps", "positive"}},
		{"generate NaN rps", gen("--workload", "coding", "--rps", "NaN"), []string{"--rps"}},
		{"generate text rps", gen("--workload", "coding", "--rps", "fast"), []string{"rps"}},
		{"generate bad duration", gen("--workload", "coding", "--rps", "1", "--duration", "soon"), []string{"--duration", `"soon"`, "120s"}},
		{"generate zero duration", gen("--workload", "coding", "--rps", "1", "--duration", "0s"), []string{"--duration", "positive"}},
		{"generate negative duration", gen("--workload", "coding", "--rps", "1", "--duration", "-5"), []string{"--duration", "positive"}},
		{"generate too many", gen("--workload", "coding", "--rps", "1e6", "--duration", "1e6"), []string{"--rps", "--duration", "at most"}},
		{"generate negative seed", gen("--workload", "coding", "--rps", "1", "--seed", "-1"), []string{"seed"}},
		{"generate no out", []string{"generate", "--workload", "coding", "--rps", "1"}, []string{"--out", "required"}},
		{"generate bad out dir", []string{"generate", "--workload", "coding", "--rps", "1", "--out", filepath.Join(dir, "no", "such", "dir.csv")}, []string{"dir.csv"}},
		{"generate bad format", gen("--workload", "coding", "--rps", "1", "--format", "json"), []string{"--format", `"json"`, "splitwise or azure"}},
		{"generate neither", gen("--rps", "1"), []string{"--workload", "--trace"}},
		{"generate both", gen("--rps", "1", "--workload", "coding", "--trace", bad), []string{"--workload", "--trace"}},
		{"generate unknown workload", gen("--rps", "1", "--workload", "chat"), []string{"--workload", "coding, conversation"}},
		{"generate malformed trace", gen("--rps", "1", "--trace", bad), []string{bad + ":3:", "column ContextTokens"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, stdout, errs := runTrace(t, tt.args...)
			wantBadInput(t, code, stdout, errs, tt.want...)
		})
	}
	if _, err := os.Stat(out); err == nil {
		t.Error("a failed generate wrote its output file")
	}
}

// TestSweepOneTokenOutputs: when every request has one output token no
// request has a TBT: sweep shows none (— in the table, empty in the CSV),
// not a TBT of 0 s, and the TBT limits pass (nothing is over them).
func TestSweepOneTokenOutputs(t *testing.T) {
	dir := t.TempDir()
	trace, out := filepath.Join(dir, "one.csv"), filepath.Join(dir, "sweep.csv")
	body := "request_id,request_type,application_id,arrival_timestamp,batch_size,prompt_size,token_size\n0,2,0,0.0,1,100,1\n1,2,0,0.5,1,200,1\n2,2,0,1.5,1,300,1\n"
	if err := os.WriteFile(trace, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	code, stdout, errs := runCLI(t, "sweep", "--design", "HH", "--prompt", "3", "--token", "2", "--trace", trace, "--rps", "1", "--duration", "5s", "--out", out)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	if !strings.Contains(stdout, "—") || !strings.Contains(stdout, "pass") {
		t.Errorf("table:\n%s", stdout)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	head, row := strings.Split(lines[0], ","), strings.Split(lines[1], ",")
	for i, h := range head {
		if strings.HasPrefix(h, "tbt_") && row[i] != "" {
			t.Errorf("%s = %q, want empty", h, row[i])
		}
		if strings.HasPrefix(h, "ttft_") && row[i] == "" {
			t.Errorf("%s empty", h)
		}
	}
}

// TestScheduleFlagsChecked: the autoscaler's flags without --autoscale,
// and a polling period under a second, are refused before any work.
func TestScheduleFlagsChecked(t *testing.T) {
	base := []string{"optimize", "--designs", "HH", "--goal", "cost", "--rate-profile", "diurnal:peak=10,trough=2,period=4m", "--schedule", "1m", "--scale-delay", "10s"}
	for _, tc := range []struct {
		extra []string
		want  string
	}{
		{[]string{"--autoscale-target", "0.5"}, "--autoscale-target sets the reactive autoscaler: it goes with --autoscale"},
		{[]string{"--autoscale-cooldown", "1m"}, "--autoscale-cooldown sets the reactive autoscaler"},
		{[]string{"--autoscale", "--autoscale-period", "1ns"}, "--autoscale-period \"1ns\": expected a duration of at least 1s"},
	} {
		code, out, errs := runCLI(t, append(append([]string{}, base...), tc.extra...)...)
		wantBadInput(t, code, out, errs, tc.want)
	}
}

// TestSmallSpaceCheckedWhenNothingFound: the frontier walk's dominance
// inference lets the largest cluster's failure stand for every smaller
// one; on 10 s of a 5 req/s trace with at most 4 machines a pool, 4P/4T
// fails its P99 TTFT slowdown while 3P/1T meets every SLO. A space that
// small is then simulated point by point: the pruned search answers as
// --exhaustive does, not "no design meets the SLOs".
func TestSmallSpaceCheckedWhenNothingFound(t *testing.T) {
	trace := filepath.Join(t.TempDir(), "t.csv")
	if code, _, errs := runCLI(t, "trace", "generate", "--workload", "coding", "--rps", "5", "--duration", "10s", "--out", trace); code != 0 {
		t.Fatal(errs)
	}
	var best [2]string
	for i, extra := range [][]string{nil, {"--exhaustive"}} {
		code, out, errs := runCLI(t, append([]string{"optimize", "--goal", "cost", "--rps", "5", "--duration", "10s", "--designs", "HH", "--trace", trace, "--max-machines", "4", "--verify", "0"}, extra...)...)
		if code != 0 {
			t.Fatalf("%v: exit %d: %s", extra, code, errs)
		}
		for _, l := range strings.Split(out, "\n") {
			if strings.HasPrefix(l, "best") {
				best[i] = l
			}
		}
	}
	if best[0] != best[1] || !strings.Contains(best[0], "3 prompt + 1 token") {
		t.Errorf("pruned %q, exhaustive %q", best[0], best[1])
	}
}

// TestOptimaWithoutAPoint: a design with no point within the budget has
// empty counts and figures in the optima CSV (not a cluster of 0
// machines at $0/h with a binding SLO it never ran) and none in the JSON;
// the CSV reads back.
func TestOptimaWithoutAPoint(t *testing.T) {
	out := filepath.Join(t.TempDir(), "o.csv")
	args := []string{"optimize", "--duration", "10s", "--goal", "throughput", "--power-budget", "1", "--designs", "HH"}
	if code, _, errs := runCLI(t, append(args, "--out", out)...); code != 0 {
		t.Fatal(errs)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if row := strings.Split(strings.TrimSpace(string(b)), "\n")[1]; !strings.HasPrefix(row, "Splitwise-HH,throughput,,,,,,,,false,,") {
		t.Errorf("row %q", row)
	}
	code, stdout, errs := runCLI(t, append(args, "--format", "json")...)
	if code != 0 || strings.Contains(stdout, "prompt_machines") || strings.Contains(stdout, "cost_usd_per_h") {
		t.Errorf("exit %d: %s %s", code, stdout, errs)
	}
	if code, stdout, errs := runCLI(t, "evaluate", "--from", out, "--rps", "5"); code != 0 || !strings.Contains(stdout, "nothing to evaluate") {
		t.Errorf("evaluate: exit %d: %s %s", code, stdout, errs)
	}
}

// TestRobustNoneNamesTheBound: when no design's plan meets the SLOs in
// enough scenarios, the robust line names the bound on the machines.
func TestRobustNoneNamesTheBound(t *testing.T) {
	code, out, errs := runCLI(t, "optimize", "--goal", "cost", "--rps", "70", "--designs", "HH", "--max-machines", "3", "--confidence", "0.9", "--scenarios", "2", "--duration", "10s")
	if code != 0 || !strings.Contains(out, "no design meets every SLO in 2 of the 2 scenarios with at most 3 machines a pool (--max-machines") {
		t.Errorf("exit %d: %s %s", code, out, errs)
	}
}
