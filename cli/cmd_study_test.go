package cli

import (
	"bytes"
	"context"
	"encoding/csv"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"splitplan/study"
)

// TestStudyShardsMerge runs a 2-job study unsharded and as 2 shards through
// the CLI and checks the merged CSVs are byte-identical, and that merge
// fails listing a missing job.
func TestStudyShardsMerge(t *testing.T) {
	dir := t.TempDir()
	st := filepath.Join(dir, "s.toml")
	os.WriteFile(st, []byte("[options]\ngoal = \"cost\"\nduration = \"20s\"\n[axes]\nrps = [\"5\", \"10\"]\n"), 0o644)
	sp := func(args ...string) (int, string) {
		var out, errb bytes.Buffer
		code := runContext(context.Background(), append([]string{"splitplan"}, args...), &out, &errb)
		return code, out.String() + errb.String()
	}
	if code, out := sp("study", "--list", st); code != 0 || strings.Count(out, "--goal cost") != 2 {
		t.Fatalf("--list: %d %s", code, out)
	}
	one, two := filepath.Join(dir, "one"), filepath.Join(dir, "two")
	for _, a := range [][]string{
		{"study", "--out", one, st},
		{"study", "--shard", "1/2", "--out", two, st},
		{"study", "--shard-index", "1", "--shards", "2", "--out", two, st},
		{"study", "merge", "--out", filepath.Join(dir, "m1.csv"), st, one},
		{"study", "merge", "--out", filepath.Join(dir, "m2.csv"), st, two},
	} {
		if code, out := sp(a...); code != 0 {
			t.Fatalf("%v: exit %d: %s", a, code, out)
		}
	}
	m1, _ := os.ReadFile(filepath.Join(dir, "m1.csv"))
	m2, _ := os.ReadFile(filepath.Join(dir, "m2.csv"))
	if len(m1) == 0 || !bytes.Equal(m1, m2) {
		t.Fatalf("sharded merge differs from unsharded:\n%s\n---\n%s", m1, m2)
	}
	if !strings.HasPrefix(string(m1), "job,axis_rps,design,") {
		t.Errorf("merged header: %.60s", m1)
	}
	if code, out := sp("study", "merge", "--out", filepath.Join(dir, "m3.csv"), "--json", filepath.Join(dir, "m.json"), st, two); code != 0 ||
		!strings.Contains(out, "study: 2 of 2 jobs done\n  rps  5: 1/1   10: 1/1\n") {
		t.Fatalf("merge --json: exit %d: %s", code, out)
	}
	js, _ := os.ReadFile(filepath.Join(dir, "m.json"))
	recs, err := study.ReadJSON(bytes.NewReader(js))
	if err != nil {
		t.Fatal(err)
	}
	var back bytes.Buffer
	csv.NewWriter(&back).WriteAll(recs)
	if !bytes.Equal(back.Bytes(), m1) {
		t.Errorf("the JSON's rows differ from the CSV's:\n%s", js)
	}
	files, _ := filepath.Glob(filepath.Join(two, "5-*.csv"))
	os.Remove(files[0])
	part, partJSON := filepath.Join(dir, "part.csv"), filepath.Join(dir, "part.json")
	if code, out := sp("study", "merge", "--out", part, "--json", partJSON, st, two); code != 1 || !strings.Contains(out, "1 of 2 jobs missing") ||
		!strings.Contains(out, "rps  5: 0/1 (1 missing)   10: 1/1") || !strings.Contains(out, "\nmissing    5-") || !strings.Contains(out, "nothing written") {
		t.Errorf("merge with a missing job: exit %d: %s", code, out)
	}
	for _, f := range []string{part, partJSON} {
		if _, err := os.Stat(f); err == nil {
			t.Errorf("merge with a missing job wrote %s", f)
		}
	}
	if code, out := sp("study", "merge", "--partial", "--out", part, st, two); code != 1 || !strings.Contains(out, "1 of 2 jobs missing") {
		t.Errorf("--partial merge with a missing job: exit %d: %s", code, out)
	}
	if b, err := os.ReadFile(part); err != nil || strings.Count(string(b), "\n") < 2 {
		t.Errorf("--partial merge: %q %v", b, err)
	}
	// A job whose options optimize refuses is an input error before any
	// job is listed or run, naming the file and the job.
	refused := filepath.Join(dir, "refused.toml")
	os.WriteFile(refused, []byte("[options]\ngoal = \"cost\"\nduration = \"20s\"\n[axes]\nrps = [\"5\", \"-3\"]\n"), 0o644)
	for _, args := range [][]string{{"study", "--list", refused}, {"study", "--out", filepath.Join(dir, "never"), refused}} {
		if code, out := sp(args...); code != 2 || !strings.Contains(out, refused+": optimize refuses the options of 1 of the 2 jobs; nothing was run") ||
			!strings.Contains(out, "job -3-") || !strings.Contains(out, "--rps must be a positive number") || strings.Contains(out, "job 5-") {
			t.Errorf("%v: exit %d: %s", args, code, out)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "never")); err == nil {
		t.Errorf("a study refused for a job's options made its result directory")
	}
	// A job that fails once it runs (a request of its trace that no machine
	// can hold) fails alone: the shard exits 1 naming it, its error is
	// kept, and merge lists it as failed.
	head := "request_id,request_type,application_id,arrival_timestamp,batch_size,prompt_size,token_size\n"
	good, huge := filepath.Join(dir, "good.csv"), filepath.Join(dir, "huge.csv")
	os.WriteFile(good, []byte(head+"0,2,0,0.0,1,1000,50\n1,2,0,0.1,1,1200,40\n"), 0o644)
	os.WriteFile(huge, []byte(head+"0,2,0,0.0,1,1000,50\n1,2,0,0.1,1,900000,40\n"), 0o644)
	bad := filepath.Join(dir, "bad.toml")
	os.WriteFile(bad, []byte(fmt.Sprintf("[options]\ngoal = \"cost\"\nrps = \"5\"\nduration = \"10s\"\ndesigns = \"HH\"\nmax-machines = \"8\"\n[axes]\ntrace = [%q, %q]\n", good, huge)), 0o644)
	three := filepath.Join(dir, "three")
	if code, out := sp("study", "--out", three, bad); code != 1 || !strings.Contains(out, "2 jobs, 1 run now, 1 failed") || !strings.Contains(out, "unservable") {
		t.Errorf("study with a failing job: exit %d: %s", code, out)
	}
	if code, out := sp("study", "merge", bad, three); code != 1 || !strings.Contains(out, "\nfailed     ") {
		t.Errorf("merge with a failed job: exit %d: %s", code, out)
	}
	// Options whose files every job would write to one place, and
	// --schedule (whose plans are not the CSV a study merges), are refused.
	for opt, want := range map[string]string{"plot = \"figs\"": "option plot: every job would write its figures into the same directory",
		"schedule = \"1h\"": "option schedule: a study merges each job's optimize CSV"} {
		f := filepath.Join(dir, "outopt.toml")
		os.WriteFile(f, []byte("[options]\ngoal = \"cost\"\n"+opt+"\n[axes]\nrps = [\"5\"]\n"), 0o644)
		if code, out := sp("study", "--list", f); code != 2 || !strings.Contains(out, want) {
			t.Errorf("--list with %s: exit %d: %s", opt, code, out)
		}
	}
	// An option optimize does not have, or one the study sets itself, is
	// refused before any job is listed or run.
	for opt, want := range map[string]string{"bogus = \"1\"": "option bogus: not an optimize flag", "out = \"x.csv\"": "option out: the study writes each job's --out"} {
		f := filepath.Join(dir, "opt.toml")
		os.WriteFile(f, []byte("[options]\ngoal = \"cost\"\n"+opt+"\n[axes]\nrps = [\"5\"]\n"), 0o644)
		for _, args := range [][]string{{"study", "--list", f}, {"study", "--out", filepath.Join(dir, "never"), f}} {
			if code, out := sp(args...); code != 2 || !strings.Contains(out, want) {
				t.Errorf("%v with %s: exit %d: %s", args, opt, code, out)
			}
		}
		if _, err := os.Stat(filepath.Join(dir, "never")); err == nil {
			t.Errorf("a study refused for %s made its result directory", opt)
		}
	}
	if code, out := sp("study", "merge", bad, filepath.Join(dir, "nowhere")); code != 2 || !strings.Contains(out, "not a result directory") {
		t.Errorf("merge of a missing directory: exit %d: %s", code, out)
	}
	for _, a := range [][]string{{"--shard", "3/2"}, {"--shard-index", "2", "--shards", "2"}, {"--shard-index", "0"},
		{"--shard-index", "x", "--shards", "2"}, {"--shard", "1/2", "--shard-index", "0", "--shards", "2"}} {
		if code, out := sp(append(append([]string{"study"}, a...), "--out", two, st)...); code != 2 || !strings.Contains(out, "--shard") {
			t.Errorf("%v: exit %d, want 2: %s", a, code, out)
		}
	}
}

// TestStudyProgressLine: done of total, failures, elapsed and the time left
// from the cost of the jobs run so far; no estimate before a job has run
// or once none is left; nothing is written on a pipe unless
// SPLITPLAN_PROGRESS=1.
func TestStudyProgressLine(t *testing.T) {
	for _, c := range []struct {
		p    study.Progress
		want string
	}{
		{study.Progress{Total: 9, CostLeft: 90}, "s: 0/9 jobs done, 10s"},
		{study.Progress{Done: 4, Total: 9, Failed: 1, CostRan: 20, CostLeft: 40}, "s: 4/9 jobs done (1 failed), 10s, about 20s left"},
		{study.Progress{Done: 9, Total: 9, Ran: 9, CostRan: 90}, "s: 9/9 jobs done, 10s"},
	} {
		if got := studyProgressLine("s", c.p, 10*time.Second); got != c.want {
			t.Errorf("%+v: %q, want %q", c.p, got, c.want)
		}
	}
	var b bytes.Buffer
	t.Setenv("SPLITPLAN_PROGRESS", "")
	sp := newStudyProgress(&b, "s")
	sp.update(study.Progress{Done: 1, Total: 2, CostRan: 1, CostLeft: 1})
	if b.Len() != 0 {
		t.Errorf("progress on a pipe: %q", b.String())
	}
	t.Setenv("SPLITPLAN_PROGRESS", "1")
	sp = newStudyProgress(&b, "s")
	sp.update(study.Progress{Total: 2, CostLeft: 2})
	sp.update(study.Progress{Done: 1, Total: 2, CostRan: 1, CostLeft: 1})
	sp.update(study.Progress{Done: 2, Total: 2, CostRan: 2})
	if got := b.String(); strings.Count(got, "\n") != 2 || !strings.HasPrefix(got, "s: 1/2 jobs done, ") {
		t.Errorf("progress lines in a log: %q", got)
	}
}

// TestPlotStudy draws both study figures from a merged table (CSV and its
// JSON): the lines figure has a line per GPU set and a panel per model,
// the winners figure names each cell's winner; the same input draws the
// same SVG twice; bad axes and tables are bad input.
func TestPlotStudy(t *testing.T) {
	dir := t.TempDir()
	merged := filepath.Join(dir, "m.csv")
	var b strings.Builder
	b.WriteString("job,axis_gpus,axis_model,axis_rps,design,goal,cost_usd_per_h,power_kw,capacity_rps,feasible\n")
	for _, m := range []string{"llama3.1-8b", "qwen3-32b"} {
		for _, g := range []string{"h100", "a100,h100"} {
			for k, r := range []string{"10", "20", "40"} {
				key := m + "_" + strings.ReplaceAll(g, ",", "+") + "_" + r
				// The baseline meets the goal but at qwen3-32b, h100, 40 req/s;
				// Splitwise, cheaper, only on a100,h100.
				feasible := m != "qwen3-32b" || r != "40" || g != "h100"
				fmt.Fprintf(&b, "%s,%q,%s,%s,Baseline H100·tp4,cost,%d,11,%s,%t\n", key, g, m, r, 38*(k+1), r, feasible)
				fmt.Fprintf(&b, "%s,%q,%s,%s,Splitwise H100·tp2 / A100·tp8,cost,%d,11,%s,%t\n", key, g, m, r, 30*(k+1), r, g != "h100")
			}
		}
	}
	os.WriteFile(merged, []byte(b.String()), 0o644)
	sp := func(args ...string) (int, string) {
		var out, errb bytes.Buffer
		code := runContext(context.Background(), append([]string{"splitplan"}, args...), &out, &errb)
		return code, out.String() + errb.String()
	}
	lines, winners := filepath.Join(dir, "s.svg"), filepath.Join(dir, "w.svg")
	for _, a := range [][]string{
		{"plot", "study", "--merged", merged, "--out", lines},
		{"plot", "study-winners", "--merged", merged, "--out", winners},
		{"plot", "study-winners", "--merged", merged, "--out", filepath.Join(dir, "w.png")},
	} {
		if code, out := sp(a...); code != 0 || !strings.HasPrefix(out, "wrote ") {
			t.Fatalf("%v: exit %d: %s", a, code, out)
		}
	}
	svg, _ := os.ReadFile(lines)
	for _, want := range []string{">llama3.1-8b<", ">qwen3-32b<", ">a100,h100<", ">rate (req/s)<", ">cost ($/h)<", "per gpus"} {
		if !bytes.Contains(svg, []byte(want)) {
			t.Errorf("lines figure lacks %q", want)
		}
	}
	w1, _ := os.ReadFile(winners)
	// 12 cells: 5 on h100 won by the baseline ($38, 76, 114/h), one where
	// nothing met the goal, 6 on a100,h100 won by Splitwise ($30, 60, 90/h).
	for text, n := range map[string]int{"30 $/h": 2, "60 $/h": 2, "90 $/h": 2, "38 $/h": 2, "76 $/h": 2, "114 $/h": 1, "none": 1} {
		if got := bytes.Count(w1, []byte(">"+text+"<")); got != n {
			t.Errorf("winners figure: %d cells %q, want %d", got, text, n)
		}
	}
	if !bytes.Contains(w1, []byte(">h100 · qwen3-32b<")) {
		t.Error("winners figure lacks a row's label")
	}
	sp("plot", "study-winners", "--merged", merged, "--out", winners)
	if w2, _ := os.ReadFile(winners); !bytes.Equal(w1, w2) {
		t.Error("two drawings of the same table differ")
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"plot", "study", "--merged", merged, "--x", "speed", "--out", lines}, `--x "speed": not an axis`},
		{[]string{"plot", "study", "--merged", merged, "--x", "gpus", "--out", lines}, `value "h100" (` + merged + `:2) is not a number`},
		{[]string{"plot", "study", "--merged", merged, "--panel", "rps", "--out", lines}, `--panel "rps"`},
		{[]string{"plot", "study", "--merged", filepath.Join(dir, "none.csv"), "--out", lines}, "--merged"},
		{[]string{"plot", "study-winners", "--merged", lines, "--out", winners}, "--merged"},
	} {
		if code, out := sp(c.args...); code != 2 || !strings.Contains(out, c.want) {
			t.Errorf("%v: exit %d: %s (want 2 and %q)", c.args, code, out, c.want)
		}
	}
}

// TestREADMEStudy runs the README's study (27 jobs) and checks what the
// README shows of it: merge's summary, and the excerpt of the merged CSV
// (each line, less its trailing "…", begins a line of the CSV).
func TestREADMEStudy(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the README's 27-job study")
	}
	data, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	readme := string(data)
	block := func(start string) string {
		i := strings.Index(readme, "```\n"+start)
		if i < 0 {
			t.Fatalf("README.md has no block starting %q", start)
		}
		b := readme[i+4:]
		return b[:strings.Index(b, "```")]
	}
	dir := t.TempDir()
	results, merged := filepath.Join(dir, "results"), filepath.Join(dir, "study.csv")
	var out, errb bytes.Buffer
	if code := runContext(context.Background(), []string{"splitplan", "study", "--out", results, "examples/study/study.toml"}, &out, &errb); code != 0 {
		t.Fatalf("study: exit %d: %s", code, errb.String())
	}
	errb.Reset()
	if code := runContext(context.Background(), []string{"splitplan", "study", "merge", "--out", merged, "examples/study/study.toml", results}, &out, &errb); code != 0 {
		t.Fatalf("merge: exit %d: %s", code, errb.String())
	}
	summary := block("$ go run . study --out results")
	summary = summary[strings.Index(summary, "study: "):]
	if summary != errb.String() {
		t.Errorf("README's merge summary:\n%s\nthe merge's:\n%s", summary, errb.String())
	}
	csvText, _ := os.ReadFile(merged)
	lines := strings.Split(string(csvText), "\n")
	for _, l := range strings.Split(strings.TrimSpace(block("job,axis_gpus")), "\n") {
		prefix := strings.TrimSuffix(l, "…")
		found := false
		for _, m := range lines {
			if strings.HasPrefix(m, prefix) {
				found = true
				break
			}
		}
		if !found {
			t.Errorf("README's study.csv line is not in the merged CSV: %s", l)
		}
	}
}

// TestOptimizeCheckOnly: under checkOnly, optimize resolves its arguments
// and stops before searching, on the nominal, robust and scheduled paths:
// good arguments exit 0 with nothing printed or written, refused ones exit
// 2 with optimize's own message.
func TestOptimizeCheckOnly(t *testing.T) {
	ctx := context.WithValue(context.Background(), checkOnlyKey{}, true)
	dir := t.TempDir()
	out := filepath.Join(dir, "out.csv")
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"--goal", "cost", "--rps", "70"}, 0, ""},
		{[]string{"--goal", "cost", "--rps", "70", "--confidence", "0.9"}, 0, ""},
		{[]string{"--goal", "cost", "--rate-profile", "diurnal:peak=100,trough=30,period=24h", "--schedule", "1h"}, 0, ""},
		{[]string{"--goal", "cost", "--rps", "-1"}, 2, "--rps must be a positive number"},
		{[]string{"--goal", "energy", "--rps", "70", "--confidence", "0.9"}, 2, "--confidence answers --goal cost or power"},
		{[]string{"--goal", "cost", "--rate-profile", "diurnal:peak=100,trough=30,period=24h", "--schedule", "48h"}, 2, "is longer than the profile simulated"},
	} {
		var stdout, stderr bytes.Buffer
		args := append([]string{"splitplan", "optimize"}, tc.args...)
		if tc.code == 0 && !slices.Contains(tc.args, "--schedule") {
			args = append(args, "--out", out)
		}
		code := runContext(ctx, args, &stdout, &stderr)
		if code != tc.code || !strings.Contains(stderr.String(), tc.want) || stdout.Len() != 0 {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want exit %d and %q", tc.args, code, stdout.String(), stderr.String(), tc.code, tc.want)
		}
	}
	if _, err := os.Stat(out); err == nil {
		t.Errorf("a check wrote %s", out)
	}
}

// TestStudyArgs: a study given other than its arguments says so, and a
// flag written after them (urfave/cli reads it as one more argument) is
// named as a flag to move.
func TestStudyArgs(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"study"}, "study: want one STUDY.toml argument, got 0"},
		{[]string{"study", "a.toml", "b.toml"}, "study: want one STUDY.toml argument, got 2"},
		{[]string{"study", "a.toml", "--list"}, "study: --list is a flag after the arguments: flags go before them (splitplan study [flags] STUDY.toml)"},
		{[]string{"study", "merge", "a.toml"}, "study merge: want STUDY.toml DIR, got 1"},
		{[]string{"study", "merge", "a.toml", "dir", "--out", "x.csv"}, "study merge: --out is a flag after the arguments"},
	} {
		code, out, errs := runCLI(t, tc.args...)
		wantBadInput(t, code, out, errs, tc.want)
	}
}
