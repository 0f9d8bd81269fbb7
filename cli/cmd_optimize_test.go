package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
	"testing"
)

// TestOptimizeDeterministic: the same flags give byte-identical CSVs at
// -j 1 and -j 8.
func TestOptimizeDeterministic(t *testing.T) {
	dir := t.TempDir()
	var data [2][2][]byte
	for i, j := range []string{"1", "8"} {
		out, pts := filepath.Join(dir, "optima"+j+".csv"), filepath.Join(dir, "points"+j+".csv")
		code, _, errs := runCLI(t, "optimize", "--goal", "cost", "--rps", "12", "--duration", "30s", "--max-machines", "12",
			"-j", j, "--out", out, "--points", pts)
		if code != 0 {
			t.Fatal(errs)
		}
		data[i][0], _ = os.ReadFile(out)
		data[i][1], _ = os.ReadFile(pts)
	}
	if !bytes.Equal(data[0][0], data[1][0]) || !bytes.Equal(data[0][1], data[1][1]) {
		t.Error("optima.csv or points.csv differ between -j 1 and -j 8")
	}
	lines := strings.Split(strings.TrimSpace(string(data[0][0])), "\n")
	if !strings.HasPrefix(lines[0], "design,goal,prompt_machines,token_machines,machines,cost_usd_per_h,power_kw,rps,capacity_rps,feasible,binding_slo,binding_slack,ttft_p50_slowdown,") || len(lines) != 7 {
		t.Errorf("optima.csv: %d lines, header %s", len(lines), lines[0])
	}
	if p := strings.Split(string(data[0][1]), "\n"); len(p) < 20 || !strings.HasPrefix(p[0], "design,prompt_machines,token_machines,machines,rps,cost_usd_per_h,power_kw,requests,feasible,drained,binding_slo,binding_slack") {
		t.Errorf("points.csv: %d lines, header %s", len(p), p[0])
	}
}

func TestOptimizeJSONAndNoneFound(t *testing.T) {
	code, out, errs := runCLI(t, "optimize", "--goal", "cost", "--rps", "30", "--designs", "AA,A100", "--max-machines", "3",
		"--duration", "20s", "--format", "json")
	if code != 0 {
		t.Fatal(errs)
	}
	var res struct {
		Goal    string
		Best    string
		Designs []struct {
			Design     string
			Found      bool
			BindingSLO string `json:"binding_slo"`
		}
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if res.Goal != "cost" || res.Best != "" || len(res.Designs) != 2 || res.Designs[0].Found || res.Designs[0].BindingSLO == "" {
		t.Errorf("json: %+v", res)
	}
	// "Nothing fits" is an answer, not an error, and says what came closest.
	code, out, _ = runCLI(t, "optimize", "--goal", "cost", "--rps", "30", "--designs", "AA,A100", "--max-machines", "3", "--duration", "20s")
	if code != 0 || !strings.Contains(out, "no design meets the SLOs") || !strings.Contains(out, "closest") {
		t.Errorf("exit %d:\n%s", code, out)
	}
}

func TestOptimizeBadFlags(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"optimize", "--rps", "70"}, "--goal is required"},
		{[]string{"optimize"}, "--goal is required"},
		{[]string{"optimize", "--goal", "speed"}, "--goal must be one of"},
		{[]string{"optimize", "--goal", "cost"}, "needs --rps"},
		{[]string{"optimize", "--goal", "cost", "--rps", "-3"}, "--rps must be a positive"},
		{[]string{"optimize", "--goal", "cost", "--rps", "0"}, "--rps must be a positive"},
		{[]string{"optimize", "--goal", "cost", "--rps", "10", "--power-budget", "100"}, "not a budget"},
		{[]string{"optimize", "--goal", "throughput"}, "exactly one of --power-budget"},
		{[]string{"optimize", "--goal", "throughput", "--power-budget", "0"}, "--power-budget must be a positive"},
		{[]string{"optimize", "--goal", "throughput", "--cost-budget", "-5"}, "--cost-budget must be a positive"},
		{[]string{"optimize", "--goal", "throughput", "--cost-budget", "5", "--power-budget", "5"}, "exactly one of"},
		{[]string{"optimize", "--goal", "throughput", "--cost-budget", "5", "--rps", "5"}, "drop --rps"},
		{[]string{"optimize", "--goal", "cost", "--rps", "10", "--designs", "HH,XY"}, `--designs: unknown design "XY"`},
		{[]string{"optimize", "--goal", "cost", "--rps", "10", "--designs", "HH,hh"}, "named twice"},
		{[]string{"optimize", "--goal", "cost", "--rps", "10", "--designs", "HH,,HA"}, `--designs "HH,,HA": item 2 of 3 is empty`},
		{[]string{"optimize", "--goal", "cost", "--rps", "10", "--designs", " "}, "--designs: no design named"},
		{[]string{"optimize", "--goal", "cost", "--rps", "10", "--gpus", "h100,,h200"}, `--gpus "h100,,h200": item 2 of 3 is empty`},
		{[]string{"optimize", "--goal", "cost", "--rps", "10", "--gpus", "h100,"}, `--gpus "h100,": item 2 of 2 is empty`},
		{[]string{"optimize", "--goal", "cost", "--rps", "10", "--gpus", ""}, "--gpus: no GPU named"},
		{[]string{"optimize", "--goal", "cost", "--rps", "10", "--max-machines", "0"}, "--max-machines"},
		{[]string{"optimize", "--goal", "cost", "--rps", "10", "-j", "0"}, "-j must be at least 1"},
		{[]string{"optimize", "--goal", "cost", "--rps", "10", "--slo-tbt", "1,2"}, "--slo-tbt"},
		{[]string{"optimize", "--goal", "cost", "--rps", "10", "--slo-ttft", "2,x,6"}, "--slo-ttft"},
		{[]string{"optimize", "--goal", "cost", "--rps", "10", "--slo-abs", "lag_p99=1"}, `--slo-abs: "lag_p99": unknown metric "lag"`},
		{[]string{"optimize", "--goal", "cost", "--rps", "10", "--slo-abs", "itl_p101=1"}, "--slo-abs"},
		{[]string{"optimize", "--goal", "cost", "--rps", "10", "--slo-abs", "tbt_p99=1,TBT_p99=0.001"}, "--slo-abs: tbt_p99 is given twice"},
		{[]string{"optimize", "--goal", "cost", "--rps", "10", "--price", "h100=1,h100=2"}, "--price: h100 is priced twice"},
		{[]string{"optimize", "--goal", "throughput", "--cost-budget", "1e9", "--designs", "HH"}, "the budget buys more than 10000 machines of a pool"},
		{[]string{"optimize", "--goal", "cost", "--rps", "0.001", "--duration", "10s", "--designs", "HH"}, "--rps 0.001 over --duration 10s draws no request"},
		{[]string{"optimize", "--goal", "throughput", "--power-budget", "30", "--model", "llama3.1-8b", "--gpus", "h100", "--duration", "5s"}, "--duration 5s: a rate the throughput search tried draws no request in it"},
		{[]string{"optimize", "--goal", "cost", "--rps", "5", "--rate-profile", "diurnal:peak=10,trough=2,period=1000000h", "--designs", "HH"}, "for --duration 1e+06h makes about"},
		{[]string{"optimize", "--goal", "cost", "--rps", "10", "--price", "h100=1", "--price", "H100=2"}, "--price: h100 is priced twice"},
		{[]string{"optimize", "--goal", "cost", "--rps", "10", "--slo-abs", "queue_p90=-1"}, "--slo-abs"},
		{[]string{"optimize", "--goal", "cost", "--rps", "10", "--slo-set", "tokenz"}, `--slo-set tokenz: unknown SLO set "tokenz"`},
		{[]string{"optimize", "--goal", "cost", "--rps", "10", "--slo-set", "itl_p99,itl_p99"}, "given twice"},
		{[]string{"optimize", "--goal", "cost", "--rps", "10", "--slo-set", "queue_p90"}, "--slo-set"},
		{[]string{"optimize", "--goal", "cost", "--rps", "10", "--slo-abs", "tbt_p99"}, "--slo-abs"},
		{[]string{"optimize", "--goal", "cost", "--rps", "10", "--slo-reference", "TPU"}, "--slo-reference"},
		{[]string{"optimize", "--goal", "cost", "--rps", "10", "--precision", "2"}, "--precision"},
		{[]string{"optimize", "--goal", "cost", "--rps", "10", "--format", "xml"}, "--format"},
		{[]string{"optimize", "--goal", "cost", "--rps", "10", "--model", "gpt"}, "--model"},
		{[]string{"optimize", "--goal", "cost", "--rps", "10", "--abort-after", "soon"}, "--abort-after"},
		{[]string{"optimize", "--goal", "cost", "--rps", "10", "--workload", "chat"}, "--workload"},
		{[]string{"optimize", "--goal", "cost", "--rps", "10", "--seeds", "0"}, "--seeds"},
		{[]string{"optimize", "--goal", "cost", "--rps", "10", "--verify", "soon"}, "--verify"},
		{[]string{"optimize", "--goal", "cost", "--rps", "10", "--verify", "-5m"}, "--verify"},
		{[]string{"optimize", "--goal", "cost", "--rps", "30000", "--verify", "1h"}, "--verify 1h at --rps 30000"},
		{[]string{"optimize", "--goal", "cost", "--rps", "10", "--verify", "2m"}, "--verify 2m is no longer than the 2m every simulation already runs"},
		{[]string{"optimize", "--goal", "throughput", "--power-budget", "100", "--duration", "30m", "--verify", "15m"}, "--verify 15m is no longer than the 30m"},
	} {
		code, out, errs := runCLI(t, tc.args...)
		wantBadInput(t, code, out, errs, tc.want)
	}
}

func TestOptimizePolicies(t *testing.T) {
	code, out, errs := runCLI(t, "optimize", "--goal", "cost", "--rps", "10", "--duration", "30s", "--max-machines", "12",
		"--designs", "Baseline-H100,Baseline-H100+sarathi,h100+prefill-first", "--token-budget", "256")
	if code != 0 {
		t.Fatal(errs)
	}
	for _, w := range []string{"Baseline-H100+sarathi", "Baseline-H100+prefill-first", "vs H100+sarathi"} {
		if !strings.Contains(out, w) {
			t.Errorf("output lacks %q:\n%s", w, out)
		}
	}
	code, out, errs = runCLI(t, "optimize", "--goal", "cost", "--rps", "10", "--duration", "30s", "--max-machines", "12",
		"--designs", "Baseline-H100", "--policy", "sarathi", "--tbt-slo", "100ms")
	if code != 0 || !strings.Contains(out, "Baseline-H100+sarathi") {
		t.Errorf("--policy applies to designs named without one: exit %d %s %s", code, out, errs)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--designs", "Baseline-H100+turbo"}, "--designs"},
		{[]string{"--policy", "turbo"}, "--policy"},
		{[]string{"--designs", "Baseline-H100", "--token-budget", "256"}, "apply to the sarathi policy"},
		{[]string{"--designs", "Baseline-H100+sarathi", "--token-budget", "0"}, "--token-budget"},
		{[]string{"--designs", "Baseline-H100+sarathi", "--tbt-slo", "1ms"}, "--tbt-slo"},
	} {
		args := append([]string{"optimize", "--goal", "cost", "--rps", "10", "--duration", "20s", "--max-machines", "4"}, tc.args...)
		code, _, errs := runCLI(t, args...)
		if code != 2 || !strings.Contains(errs, tc.want) {
			t.Errorf("%v: exit %d, stderr %q; want exit 2 saying %q", tc.args, code, errs, tc.want)
		}
	}
}

func TestOptimizePlotDir(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "figs")
	code, out, errs := runCLI(t, "optimize", "--goal", "cost", "--rps", "10", "--duration", "20s", "--max-machines", "12",
		"--designs", "HH,Baseline-H100", "--plot", dir)
	if code != 0 {
		t.Fatal(errs)
	}
	for _, name := range []string{"heatmap-Splitwise-HH", "cost-by-design", "summary"} {
		for _, ext := range []string{".png", ".svg"} {
			p := filepath.Join(dir, name+ext)
			st, err := os.Stat(p)
			if err != nil || st.Size() == 0 || !strings.Contains(out, p) {
				t.Errorf("%s: %v (listed: %v)", p, err, strings.Contains(out, p))
			}
		}
	}
}

func TestPolicyOnLoadCommands(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "sweep.csv")
	code, _, errs := runCLI(t, "sweep", "--cluster", "Baseline-H100:4", "--rps", "2,4", "--duration", "20s",
		"--policy", "sarathi", "--token-budget", "256", "--out", out)
	if code != 0 {
		t.Fatal(errs)
	}
	code, _, errs = runCLI(t, "sweep", "--cluster", "Baseline-H100:4", "--rps", "2", "--duration", "20s", "--policy", "magic")
	if code != 2 || !strings.Contains(errs, "--policy") {
		t.Errorf("sweep --policy magic: exit %d %s", code, errs)
	}
	code, _, errs = runCLI(t, "plot", "cdf", "--design", "A100", "--machines", "2", "--rps", "2", "--duration", "20s",
		"--policy", "prefill-first", "--out", filepath.Join(dir, "cdf.svg"))
	if code != 0 {
		t.Fatal(errs)
	}
}

func TestOptimizeInterrupted(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	var out, errb bytes.Buffer
	path := filepath.Join(t.TempDir(), "optima.csv")
	code := runContext(ctx, []string{"splitplan", "optimize", "--goal", "cost", "--rps", "10", "--duration", "20s", "--out", path}, &out, &errb)
	if code != 1 || !strings.Contains(errb.String(), "interrupted") {
		t.Errorf("exit %d, stderr %q", code, errb.String())
	}
	if _, err := os.Stat(path); err == nil {
		t.Error("an interrupted run wrote its output file")
	}
}

// TestPolicySuffixEverywhere: a design named with a batching policy, as
// optimize writes it to optima.csv, works in evaluate --from, sweep
// --cluster and simulate --design.
func TestPolicySuffixEverywhere(t *testing.T) {
	dir := t.TempDir()
	optima := filepath.Join(dir, "optima.csv")
	if code, _, errs := runCLI(t, "optimize", "--goal", "cost", "--rps", "5", "--designs", "Baseline-H100+sarathi",
		"--duration", "20s", "--max-machines", "6", "--out", optima); code != 0 {
		t.Fatal(errs)
	}
	code, out, errs := runCLI(t, "evaluate", "--from", optima, "--workload", "conversation", "--rps", "2,4", "--duration", "20s")
	if code != 0 || !strings.Contains(out, "Baseline-H100+sarathi ×") {
		t.Errorf("evaluate --from: exit %d\n%s%s", code, out, errs)
	}
	code, out, errs = runCLI(t, "sweep", "--cluster", "Baseline-H100+sarathi:3", "--cluster", "Baseline-H100:3", "--rps", "2", "--duration", "20s")
	if code != 0 || !strings.Contains(out, "Baseline-H100+sarathi ×3") || !strings.Contains(out, "Baseline-H100 ×3") {
		t.Errorf("sweep: exit %d\n%s%s", code, out, errs)
	}
	code, out, errs = runCLI(t, "simulate", "--design", "h100+prefill-first", "--machines", "2", "--rps", "2", "--duration", "20s")
	if code != 0 || !strings.Contains(out, "prefill-first batching") {
		t.Errorf("simulate: exit %d\n%s%s", code, out, errs)
	}
	code, _, errs = runCLI(t, "simulate", "--design", "h100+sarathi", "--policy", "prefill-first", "--machines", "2")
	if code != 2 || !strings.Contains(errs, "give one") {
		t.Errorf("conflicting policies: exit %d %s", code, errs)
	}
	code, _, errs = runCLI(t, "sweep", "--cluster", "Baseline-H100+turbo:3", "--rps", "2")
	if code != 2 || !strings.Contains(errs, "--cluster") {
		t.Errorf("unknown policy suffix: exit %d %s", code, errs)
	}
}

// TestSearchGC: a search runs at searchGCPercent and restores the previous
// target after; a GOGC in the environment is left alone.
func TestSearchGC(t *testing.T) {
	prev := debug.SetGCPercent(123)
	defer debug.SetGCPercent(prev)
	t.Setenv("GOGC", "")
	t.Setenv("GOMEMLIMIT", "")
	restore := searchGC()
	if got := debug.SetGCPercent(searchGCPercent); got != searchGCPercent {
		t.Errorf("during a search the GC target is %d, want %d", got, searchGCPercent)
	}
	if got := debug.SetMemoryLimit(-1); got != searchMemoryLimit {
		t.Errorf("during a search the memory limit is %d, want %d", got, searchMemoryLimit)
	}
	restore()
	if got := debug.SetGCPercent(123); got != 123 {
		t.Errorf("after a search the GC target is %d, want the previous 123", got)
	}
	if got := debug.SetMemoryLimit(-1); got != math.MaxInt64 {
		t.Errorf("after a search the memory limit is %d, want none", got)
	}
	t.Setenv("GOGC", "50")
	restore = searchGC()
	if got := debug.SetGCPercent(123); got != 123 {
		t.Errorf("with GOGC set, a search changed the GC target to %d", got)
	}
	restore()
}

// TestOptimizeStopsChangeNothing: a search stops the simulations that
// certainly fail and says how many; with --points, which writes every
// point's figures, it runs every one to its end; the optima are the same
// byte for byte.
func TestOptimizeStopsChangeNothing(t *testing.T) {
	dir := t.TempDir()
	var optima [2][]byte
	for i, withPoints := range []bool{false, true} {
		out := filepath.Join(dir, fmt.Sprintf("optima%d.csv", i))
		args := []string{"optimize", "--goal", "throughput", "--power-budget", "120", "--duration", "30s", "--max-machines", "12",
			"--designs", "HH,H100", "--out", out}
		if withPoints {
			args = append(args, "--points", filepath.Join(dir, "points.csv"))
		}
		code, stdout, errs := runCLI(t, args...)
		if code != 0 {
			t.Fatal(errs)
		}
		said := strings.Contains(stdout, "of them stopped once they certainly failed a latency target")
		if said == withPoints {
			t.Errorf("--points %v: the search line on stopped simulations is there: %v\n%s", withPoints, said, stdout)
		}
		optima[i], _ = os.ReadFile(out)
	}
	if !bytes.Equal(optima[0], optima[1]) {
		t.Errorf("the optima differ with and without --points:\n%s\n%s", optima[0], optima[1])
	}
}
