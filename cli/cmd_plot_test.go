package cli

import (
	"bytes"
	"context"
	"flag"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"splitplan/costpower"
	"splitplan/report"
	"splitplan/search"
	"splitplan/slo"
	"splitplan/traces"
)

var updateGolden = flag.Bool("update", false, "rewrite the golden files under testdata/")

// The CSV fixtures under testdata/plots were made by:
//
//	splitplan optimize --goal cost --rps 20 --designs HH,HA,Baseline-H100 --max-machines 24 --duration 30s --points points-cost.csv --out optima-cost.csv
//	splitplan optimize --goal throughput --power-budget 150 --designs HH,HA,Baseline-H100 --max-machines 16 --duration 30s --points points-power.csv --out optima-power.csv
//	splitplan sweep --cluster HH:6:2 --cluster Baseline-H100:8 --rps 5:30:5 --duration 30s --out sweep.csv
func fixture(name string) string { return filepath.Join("testdata", "plots", name) }

// checkGolden compares an SVG written by a command with testdata/plots/NAME.svg.
func checkGolden(t *testing.T, name, got string) {
	t.Helper()
	data, err := os.ReadFile(got)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.HasPrefix(data, []byte("<?xml")) {
		t.Fatalf("%s is not an SVG", got)
	}
	file := fixture(name + ".svg")
	if *updateGolden {
		if err := os.WriteFile(file, data, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(file)
	if err != nil {
		t.Fatalf("%v (go test -run %s -update writes it)", err, t.Name())
	}
	if !bytes.Equal(data, want) {
		os.WriteFile(file+".got", data, 0o644)
		t.Errorf("%s differs from %s (see %s.got; -update accepts it)", name, file, file)
	}
}

func TestPlotGoldenFromCSV(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		name string
		args []string
	}{
		{"heatmap-cost", []string{"plot", "heatmap", "--points", fixture("points-cost.csv"), "--optima", fixture("optima-cost.csv"), "--design", "HH"}},
		{"heatmap-cost-color", []string{"plot", "heatmap", "--points", fixture("points-cost.csv"), "--design", "Splitwise-HA", "--color", "cost"}},
		{"heatmap-capacity", []string{"plot", "heatmap", "--points", fixture("points-power.csv"), "--design", "HA"}},
		{"pareto", []string{"plot", "pareto", "--points", fixture("points-power.csv"), "--optima", fixture("optima-power.csv")}},
		{"pareto-optima", []string{"plot", "pareto", "--optima", fixture("optima-power.csv") + "," + fixture("optima-cost.csv"), "--y", "power"}},
		{"summary", []string{"plot", "summary", "--optima", fixture("optima-power.csv"), "--optima", fixture("optima-cost.csv")}},
		{"latency", []string{"plot", "latency", "--sweep", fixture("sweep.csv")}},
		{"cdf", []string{"plot", "cdf", "--design", "HH", "--prompt", "4", "--token", "2", "--rps", "8", "--duration", "20s"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, ext := range []string{".svg", ".png"} {
				out := filepath.Join(dir, tc.name+ext)
				code, stdout, stderr := runCLI(t, append(tc.args, "--out", out)...)
				if code != 0 || !strings.Contains(stdout, "wrote "+out) {
					t.Fatalf("exit %d: %s %s", code, stdout, stderr)
				}
			}
			checkGolden(t, tc.name, filepath.Join(dir, tc.name+".svg"))
		})
	}
}

func TestPlotRunsItsOwnSearch(t *testing.T) {
	dir := t.TempDir()
	small := []string{"--max-machines", "8", "--duration", "20s"}
	for _, args := range [][]string{
		{"plot", "heatmap", "--design", "HH", "--goal", "cost", "--rps", "8"},
		{"plot", "pareto", "--goal", "throughput", "--power-budget", "80", "--designs", "HH,Baseline-H100"},
		{"plot", "summary", "--goal", "cost", "--rps", "8", "--designs", "HH,HA,Baseline-H100"},
	} {
		out := filepath.Join(dir, args[1]+".svg")
		code, stdout, stderr := runCLI(t, append(append(args, small...), "--out", out)...)
		if code != 0 || !strings.Contains(stdout, "wrote") {
			t.Errorf("%v: exit %d: %s %s", args, code, stdout, stderr)
		}
	}
}

// TestPlotHeatmapPolicySuffix: a heatmap's own search of a baseline named
// with its batching policy draws the baseline's one axis of machines: the
// design is the search's, resolved once with its suffix (the heatmap once
// resolved the name again without splitting the suffix, missed, and drew a
// baseline as a Splitwise design's prompt × token grid).
func TestPlotHeatmapPolicySuffix(t *testing.T) {
	out := filepath.Join(t.TempDir(), "heatmap.svg")
	code, stdout, stderr := runCLI(t, "plot", "heatmap", "--design", "Baseline-H100+sarathi", "--goal", "cost", "--rps", "10",
		"--max-machines", "12", "--duration", "30s", "--out", out)
	if code != 0 || !strings.Contains(stdout, "wrote") {
		t.Fatalf("exit %d: %s %s", code, stdout, stderr)
	}
	svg, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if s := string(svg); !strings.Contains(s, ">machines<") || strings.Contains(s, ">token machines<") || !strings.Contains(s, "Baseline-H100+sarathi") {
		t.Errorf("a baseline's heatmap should have one axis, \"machines\", and name Baseline-H100+sarathi")
	}
}

func TestPlotBadInput(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		os.WriteFile(p, []byte(body), 0o644)
		return p
	}
	head := report.PointsCSVHeader + ",note\n"
	badNum := write("bad.csv", head+"Splitwise-HH,1,1,2,20,76,22,10,true,true,tbt_p50,0.1,\nSplitwise-HH,2,x,3,20,114,33,10,true,true,tbt_p50,0.1,\n")
	noCol := write("nocol.csv", "design,prompt_machines\nHH,1\n")
	empty := write("empty.csv", "")
	headOnly := write("head.csv", head)
	ragged := write("ragged.csv", head+"Splitwise-HH,1\n")
	infeasible := write("infeasible.csv", head+"Splitwise-HH,1,1,2,20,76,22,10,false,true,ttft_p99,-0.5,\n")
	svg := filepath.Join(dir, "x.svg")
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"plot", "heatmap", "--points", badNum, "--design", "HH", "--out", svg}, 2, badNum + ":3: column token_machines (3)"},
		{[]string{"plot", "heatmap", "--points", noCol, "--design", "HH", "--out", svg}, 2, noCol + ":1: no column \"token_machines\""},
		{[]string{"plot", "heatmap", "--points", empty, "--design", "HH", "--out", svg}, 2, empty + ": empty file"},
		{[]string{"plot", "heatmap", "--points", headOnly, "--design", "HH", "--out", svg}, 2, "header only"},
		{[]string{"plot", "pareto", "--points", ragged, "--out", svg}, 2, ragged + ":2:"},
		{[]string{"plot", "heatmap", "--points", infeasible, "--design", "HH", "--out", svg}, 0, "no figure"},
		{[]string{"plot", "pareto", "--points", infeasible, "--out", svg}, 0, "no figure"},
		{[]string{"plot", "heatmap", "--points", fixture("points-cost.csv"), "--design", "AA", "--out", svg}, 2, "no points of design Splitwise-AA"},
		{[]string{"plot", "heatmap", "--points", fixture("points-cost.csv"), "--design", "HH", "--rps", "33", "--out", svg}, 2, "--rps 33"},
		{[]string{"plot", "heatmap", "--points", fixture("points-power.csv"), "--design", "HH", "--color", "cost", "--out", svg}, 2, "choose one with --rps"},
		{[]string{"plot", "heatmap", "--points", fixture("points-cost.csv"), "--design", "HH", "--color", "pink", "--out", svg}, 2, "--color"},
		{[]string{"plot", "heatmap", "--points", fixture("points-cost.csv"), "--design", "HH", "--out", filepath.Join(dir, "x.pdf")}, 2, "x.pdf"},
		{[]string{"plot", "heatmap", "--points", fixture("points-cost.csv"), "--design", "HH"}, 2, "out"},
		{[]string{"plot", "summary", "--optima", fixture("optima-cost.csv"), "--baseline", "Baseline-A100", "--out", svg}, 2, "no design Baseline-A100"},
		{[]string{"plot", "summary", "--optima", badNum, "--out", svg}, 2, badNum + ":1: no column \"goal\""},
		{[]string{"plot", "latency", "--sweep", fixture("optima-cost.csv"), "--out", svg}, 2, "no column \"cluster\""},
		{[]string{"plot", "pareto", "--points", fixture("points-power.csv"), "--y", "joules", "--out", svg}, 2, "--y"},
		{[]string{"plot", "cdf", "--prompt", "2", "--token", "1", "--out", svg}, 2, "--design is required"},
		{[]string{"plot", "heatmap", "--points", fixture("points-cost.csv"), "--optima", fixture("optima-cost.csv"), "--design", "Baseline-B300", "--out", svg}, 2, "no row of design Baseline-B300"},
		{[]string{"plot", "heatmap", "--points", fixture("points-cost.csv"), "--design", "HH", "--goal", "throughput", "--out", svg}, 2, "--goal asks for a search, which --points replaces"},
	} {
		code, stdout, stderr := runCLI(t, tc.args...)
		if code != tc.code || !strings.Contains(stdout+stderr, tc.want) {
			t.Errorf("%v: exit %d (want %d), output %q %q: want %q", tc.args[1:3], code, tc.code, stdout, stderr, tc.want)
		}
	}
	if _, err := os.Stat(svg); err == nil {
		t.Error("a rejected figure was written")
	}
}

func TestSweepCommand(t *testing.T) {
	dir := t.TempDir()
	args := []string{"sweep", "--cluster", "HH:4:2", "--design", "Baseline-H100", "--machines", "5", "--rps", "4:12:4", "--duration", "20s"}
	csv1, csv2, fig := filepath.Join(dir, "a.csv"), filepath.Join(dir, "b.csv"), filepath.Join(dir, "s.svg")
	code, out, errs := runCLI(t, append(args, "-j", "1", "--out", csv1, "--plot", fig)...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	for _, want := range []string{"Baseline-H100 ×5", "Splitwise-HH 4P/2T", "P99 TTFT s", "highest rate tried", "wrote     " + fig} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	runCLI(t, append(args, "-j", "2", "--out", csv2)...)
	a, _ := os.ReadFile(csv1)
	b, _ := os.ReadFile(csv2)
	if !bytes.Equal(a, b) {
		t.Error("sweep CSV differs between -j 1 and -j 2")
	}
	lines := strings.Split(strings.TrimSpace(string(a)), "\n")
	wantHead := "cluster,rps,ttft_p50_s,ttft_p90_s,ttft_p99_s,tbt_p50_s,tbt_p90_s,tbt_p99_s,e2e_p50_s,e2e_p90_s,e2e_p99_s," +
		"ttft_p50_slowdown,ttft_p90_slowdown,ttft_p99_slowdown,tbt_p50_slowdown,tbt_p90_slowdown,tbt_p99_slowdown,e2e_p50_slowdown,e2e_p90_slowdown,e2e_p99_slowdown,slo_pass,binding_slo,avg_kw,j_per_output_token," +
		"verified_s,verified_pass,verified_slo,verified_slack,scenarios_passed,scenarios,scenario_avg_kw_p10,scenario_avg_kw_p50,scenario_avg_kw_p90,scenario_avg_kw_known"
	if lines[0] != wantHead || len(lines) != 7 || !strings.HasPrefix(lines[1], "Baseline-H100 ×5,4,") {
		t.Errorf("sweep CSV:\n%s", a)
	}
	// The saved CSV plots the same figure.
	fig2 := filepath.Join(dir, "s2.svg")
	if code, _, errs := runCLI(t, "plot", "latency", "--sweep", csv1, "--out", fig2); code != 0 {
		t.Fatalf("plot latency: %s", errs)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"sweep", "--cluster", "HH:4:2", "--rps", "10:5:1"}, "--rps"},
		{[]string{"sweep", "--cluster", "HH:4:2", "--rps", "fast"}, "--rps"},
		{[]string{"sweep", "--cluster", "HH:4", "--rps", "5"}, "--cluster \"HH:4\""},
		{[]string{"sweep", "--cluster", "Baseline-H100:0", "--rps", "5"}, "--cluster"},
		{[]string{"sweep", "--cluster", "HH:4:2", "--cluster", "HH:4:2", "--rps", "5"}, "twice"},
		{[]string{"sweep", "--rps", "5"}, "no cluster"},
		{[]string{"sweep", "--prompt", "3", "--rps", "5"}, "--prompt needs --design"},
		{[]string{"sweep", "--cluster", "HH:4:2", "--rps", "5", "--plot", "x.gif"}, "--plot"},
		{[]string{"sweep", "--cluster", "HH:4:2", "--rps", "5", "--slo-tbt", "1,2"}, "--slo-tbt"},
		{[]string{"sweep", "--cluster", "HH:4:2", "--rps", "5", "--bogus"}, "bogus"},
		{[]string{"sweep", "--cluster", "HH:4:2", "--rps", "5", "--verify", "soon"}, "--verify"},
		{[]string{"sweep", "--cluster", "HH:4:2", "--rps", "5", "--verify", "-5m"}, "--verify"},
		{[]string{"evaluate", "--cluster", "HH:4:2", "--rps", "5,30000", "--verify", "1h"}, "--verify 1h at --rps 30000"},
		{[]string{"sweep", "--cluster", "HH:4:2", "--rps", "5", "--duration", "20s", "--verify", "10s"}, "--verify 10s is no longer than the 20s"},
		{[]string{"sweep", "--cluster", "HH:4:2", "--rps", "5", "--scenarios", "-1"}, "--scenarios -1"},
		{[]string{"evaluate", "--cluster", "HH:4:2", "--rps", "5", "--scenarios", "5000"}, "--scenarios 5000"},
		{[]string{"evaluate", "--cluster", "HH:4:2", "--rps", "5", "--scenarios", "4", "--compat", "splitwise-sim"}, "--scenarios scales the performance models"},
	} {
		code, _, errs := runCLI(t, tc.args...)
		if code != 2 || !strings.Contains(errs, tc.want) {
			t.Errorf("%v: exit %d, stderr %q: want 2 naming %q", tc.args, code, errs, tc.want)
		}
	}
}

func TestParseRates(t *testing.T) {
	got, err := parseRates("20:140:10")
	if err != nil || len(got) != 13 || got[0] != 20 || got[12] != 140 {
		t.Errorf("20:140:10 = %v, %v", got, err)
	}
	got, err = parseRates("0.1:0.3:0.1")
	if err != nil || len(got) != 3 || got[2] != 0.3 {
		t.Errorf("0.1:0.3:0.1 = %v, %v", got, err)
	}
	got, err = parseRates("5, 7.5,10")
	if err != nil || len(got) != 3 || got[1] != 7.5 {
		t.Errorf("list = %v, %v", got, err)
	}
	for _, bad := range []string{"", "0", "-5", "1:2", "1:2:0", "NaN", "1:1e9:1"} {
		if _, err := parseRates(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

func TestEvaluateCommand(t *testing.T) {
	dir := t.TempDir()
	csv := filepath.Join(dir, "e.csv")
	code, out, errs := runCLI(t, "evaluate", "--from", fixture("optima-cost.csv"), "--workload", "conversation", "--rps", "10,20",
		"--duration", "20s", "--out", csv, "--plot", filepath.Join(dir, "e.svg"))
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	for _, want := range []string{"conversation sizes", "Splitwise-HH 10P/1T", "Baseline-H100 ×", "wrote", "verify    every row that met every SLO over 20s was checked over 15m"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	// --verify 0 checks nothing: no verify line, no check in the CSV.
	csv0 := filepath.Join(dir, "e0.csv")
	if code, out, errs := runCLI(t, "evaluate", "--from", fixture("optima-cost.csv"), "--workload", "conversation", "--rps", "10,20",
		"--duration", "20s", "--verify", "0", "--out", csv0); code != 0 || strings.Contains(out, "verify ") {
		t.Errorf("--verify 0: exit %d, %s\n%s", code, errs, out)
	}
	if rows, err := report.ReadLoadCSV(csv0); err != nil || slices.ContainsFunc(rows, func(r report.LoadRow) bool { return r.Verified != nil }) {
		t.Errorf("--verify 0: the CSV has checks (%v)", err)
	}
	data, _ := os.ReadFile(csv)
	if n := strings.Count(string(data), "\n"); n != 1+3*2 {
		t.Errorf("evaluate CSV has %d lines, want a header and 6 rows:\n%s", n, data)
	}
	// Nothing feasible in the optima: a valid, empty answer.
	none := filepath.Join(dir, "none.csv")
	os.WriteFile(none, []byte(report.OptimaCSVHeader+"\nSplitwise-HH,cost,1,1,2,76,22.75,70,,false,ttft_p99,-3\n"), 0o644)
	noneOut := filepath.Join(dir, "none-evaluate.csv")
	code, out, _ = runCLI(t, "evaluate", "--from", none, "--rps", "10", "--out", noneOut)
	if code != 0 || !strings.Contains(out, "nothing to evaluate; --out "+noneOut+" not written") {
		t.Errorf("all-infeasible optima: exit %d, %q", code, out)
	}
	if _, err := os.Stat(noneOut); err == nil {
		t.Errorf("all-infeasible optima wrote %s", noneOut)
	}
	if code, _, errs := runCLI(t, "evaluate", "--from", fixture("optima-cost.csv")); code != 2 || !strings.Contains(errs, "--rps") {
		t.Errorf("missing --rps: exit %d, %q", code, errs)
	}
}

// TestEvaluateRobustTable: evaluate --from a robust table (optimize
// --confidence --out) runs each design's robust plan and its nominal one
// where they differ, once where they are the same, and says which is
// which; a design with neither is skipped.
func TestEvaluateRobustTable(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	rob := filepath.Join(dir, "robust.csv")
	body := report.RobustCSVHeader + "\n" +
		"Splitwise-HH,cost,0.9,32,29,true,9,2,418,true,10,2,456,456,136.5,29,9,9,10,2,2,2,418,418,456,false,20\n" +
		"Baseline-H100,cost,0.9,32,29,true,17,0,646,true,17,0,646,646,193.4,30,16,17,17,0,0,0,608,646,646,false,12\n" +
		"Splitwise-HA,cost,0.9,32,29,false,,,,false,,,,,,,,,,,,,,,,false,0\n"
	if err := os.WriteFile(rob, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "e.csv")
	code, stdout, errs := runCLI(t, "evaluate", "--from", rob, "--rps", "10", "--duration", "10s", "--out", out)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	for _, want := range []string{
		"robust.csv: Splitwise-HH: robust plan 10P/2T (met every SLO in at least 29 of 32 scenarios, confidence 0.9), nominal plan 9P/2T",
		"robust.csv: Baseline-H100: robust plan 17 machines (met every SLO in at least 30 of 32 scenarios, confidence 0.9), nominal plan 17 machines, the same plan",
		"robust.csv: Splitwise-HA found no optimum, skipped",
		"Splitwise-HH 10P/2T", "Splitwise-HH 9P/2T", "Baseline-H100 ×17",
	} {
		if !strings.Contains(stdout, want) {
			t.Errorf("output lacks %q:\n%s", want, stdout)
		}
	}
	data, _ := os.ReadFile(out)
	if n := strings.Count(string(data), "\n"); n != 1+3 {
		t.Errorf("evaluate CSV has %d lines, want a header and 3 rows (the baseline's one plan once):\n%s", n, data)
	}
}

func TestWriteOptimizePlots(t *testing.T) {
	for _, goal := range []search.Goal{search.GoalCost, search.GoalThroughput} {
		pl, _ := loadPlan("")
		sizes, _ := traces.Builtin("coding")
		p := &search.Problem{Catalog: pl.Catalog, Perf: pl.perfSource(), Model: "bloom-176b", Goal: goal,
			Designs:  []search.DesignSpec{{Design: mustDesign(t, pl, "Splitwise-HH")}, {Design: mustDesign(t, pl, "Baseline-H100")}},
			Workload: &search.Workload{Sizes: sizes, DurationS: 20}, MaxMachines: 8, Parallel: 2}
		p.SLO, _ = sloDefaultForTest()
		if goal == search.GoalCost {
			p.RateRPS = 8
		} else {
			p.PowerBudgetKW = 80
		}
		res, err := search.Run(context.Background(), p)
		if err != nil {
			t.Fatal(err)
		}
		dir := filepath.Join(t.TempDir(), "figs")
		paths, err := report.WriteOptimizePlots(dir, res, p)
		if err != nil {
			t.Fatal(err)
		}
		want := []string{"heatmap-Splitwise-HH.png", "heatmap-Splitwise-HH.svg", "summary.png", "summary.svg"}
		if goal == search.GoalCost {
			want = append(want, "cost-by-design.png")
		} else {
			want = append(want, "pareto.svg")
		}
		for _, w := range want {
			found := false
			for _, p := range paths {
				if filepath.Base(p) == w {
					found = true
				}
			}
			if _, err := os.Stat(filepath.Join(dir, w)); err != nil || !found {
				t.Errorf("%s: %s not written (paths %v)", goal, w, paths)
			}
		}
	}
}

func sloDefaultForTest() (s slo.Spec, err error) { return slo.Default(), nil }

// mustDesign resolves a design name in pl's catalog, as the commands do
// once at their edge.
func mustDesign(t testing.TB, pl *plan, name string) costpower.Design {
	t.Helper()
	d, err := pl.Catalog.ResolveDesign(name)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// TestEvaluateScenariosDeterministic: the rows' scenario counts, and the
// whole report, do not depend on -j.
func TestEvaluateScenariosDeterministic(t *testing.T) {
	t.Parallel()
	args := []string{"evaluate", "--cluster", "HH:4:2", "--cluster", "Baseline-H100:5", "--rps", "4,8", "--duration", "20s", "--verify", "1m", "--scenarios", "5"}
	var outs []string
	for _, j := range []string{"1", "3"} {
		code, out, errs := runCLI(t, append(args, "-j", j)...)
		if code != 0 {
			t.Fatalf("-j %s: exit %d: %s", j, code, errs)
		}
		outs = append(outs, out)
	}
	if outs[0] != outs[1] {
		t.Errorf("-j 1 and -j 3 differ:\n%s\n---\n%s", outs[0], outs[1])
	}
	for _, want := range []string{"SCENARIOS", "every row judged in 5 scenarios", "/5 "} {
		if !strings.Contains(outs[0], want) {
			t.Errorf("output lacks %q:\n%s", want, outs[0])
		}
	}
}
