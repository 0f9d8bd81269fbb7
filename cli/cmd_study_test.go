package cli

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
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
	files, _ := filepath.Glob(filepath.Join(two, "5-*.csv"))
	os.Remove(files[0])
	if code, out := sp("study", "merge", st, two); code == 0 || !strings.Contains(out, "1 of 2 jobs missing") {
		t.Errorf("merge with a missing job: exit %d: %s", code, out)
	}
	if code, _ := sp("study", "--shard", "3/2", "--out", two, st); code != 2 {
		t.Errorf("--shard 3/2: exit %d, want 2", code)
	}
}
