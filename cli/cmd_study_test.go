package cli

import (
	"bytes"
	"context"
	"encoding/csv"
	"os"
	"path/filepath"
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
		{"study", "--shard", "2/2", "--out", two, st},
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
	if code, out := sp("study", "merge", st, two); code != 1 || !strings.Contains(out, "1 of 2 jobs missing") ||
		!strings.Contains(out, "rps  5: 0/1 (1 missing)   10: 1/1") || !strings.Contains(out, "\nmissing    5-") {
		t.Errorf("merge with a missing job: exit %d: %s", code, out)
	}
	// A job optimize rejects fails alone: the shard exits 1 naming it, its
	// error is kept, and merge lists it as failed.
	bad := filepath.Join(dir, "bad.toml")
	os.WriteFile(bad, []byte("[options]\ngoal = \"cost\"\nduration = \"20s\"\n[axes]\nrps = [\"5\", \"-3\"]\n"), 0o644)
	three := filepath.Join(dir, "three")
	if code, out := sp("study", "--out", three, bad); code != 1 || !strings.Contains(out, "2 jobs, 1 run now, 1 failed") || !strings.Contains(out, "-3-") {
		t.Errorf("study with a failing job: exit %d: %s", code, out)
	}
	if code, out := sp("study", "merge", bad, three); code != 1 || !strings.Contains(out, "\nfailed     -3-") {
		t.Errorf("merge with a failed job: exit %d: %s", code, out)
	}
	if code, out := sp("study", "merge", bad, filepath.Join(dir, "nowhere")); code != 2 || !strings.Contains(out, "not a result directory") {
		t.Errorf("merge of a missing directory: exit %d: %s", code, out)
	}
	if code, _ := sp("study", "--shard", "3/2", "--out", two, st); code != 2 {
		t.Errorf("--shard 3/2: exit %d, want 2", code)
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
