package study

import (
	"flag"
	"fmt"
	"os"
	"reflect"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden job list")

func listing(t *testing.T) string {
	t.Helper()
	data, err := os.ReadFile("testdata/small.toml")
	if err != nil {
		t.Fatal(err)
	}
	jobs, axes, err := Parse("testdata/small.toml", data)
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "axes %s\n", strings.Join(axes, ","))
	for _, j := range jobs {
		fmt.Fprintf(&b, "%s cost=%g %s\n", j.Key, j.Cost, strings.Join(j.Args(), " "))
	}
	return b.String()
}

// TestJobListGolden: the job list is a pure function of the TOML.
func TestJobListGolden(t *testing.T) {
	t.Parallel()
	got := listing(t)
	if again := listing(t); again != got {
		t.Fatal("two parses of the same file differ")
	}
	if *update {
		if err := os.WriteFile("testdata/small.jobs", []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile("testdata/small.jobs")
	if err != nil {
		t.Fatal(err)
	}
	if got != string(want) {
		t.Errorf("job list differs from testdata/small.jobs:\n%s", got)
	}
	// 3 models x 2 GPU sets x 3 rates, less llama-70b on A100,H100 (3 jobs).
	if n := strings.Count(got, "\n") - 1; n != 15 {
		t.Errorf("%d jobs, want 15", n)
	}
}

// TestShardPartition: for N = 1..16 every job is in exactly one shard.
func TestShardPartition(t *testing.T) {
	t.Parallel()
	data, _ := os.ReadFile("testdata/small.toml")
	jobs, _, err := Parse("small", data)
	if err != nil {
		t.Fatal(err)
	}
	for n := 1; n <= 16; n++ {
		count := map[string]int{}
		loads := make([]float64, n)
		for i := 0; i < n; i++ {
			sh, err := Shard(jobs, i, n)
			if err != nil {
				t.Fatal(err)
			}
			for _, j := range sh {
				count[j.Key]++
				loads[i] += j.Cost
			}
		}
		if len(count) != len(jobs) {
			t.Fatalf("N=%d: %d distinct jobs in shards, want %d", n, len(count), len(jobs))
		}
		for k, c := range count {
			if c != 1 {
				t.Fatalf("N=%d: job %s in %d shards", n, k, c)
			}
		}
		// Greedy balance: no shard exceeds the lightest by more than the
		// largest single job.
		maxCost, lo, hi := 0.0, loads[0], loads[0]
		for _, j := range jobs {
			maxCost = max(maxCost, j.Cost)
		}
		for _, l := range loads {
			lo, hi = min(lo, l), max(hi, l)
		}
		if hi-lo > maxCost {
			t.Errorf("N=%d: loads %v unbalanced by more than one job (%g)", n, loads, maxCost)
		}
	}
}

// bigStudy is 359 bytes whose axes' cross product is 10⁸ jobs.
const bigStudy = "[axes]\n" +
	"a=[\"0\",\"1\",\"2\",\"3\",\"4\",\"5\",\"6\",\"7\",\"8\",\"9\"]\nb=[\"0\",\"1\",\"2\",\"3\",\"4\",\"5\",\"6\",\"7\",\"8\",\"9\"]\n" +
	"c=[\"0\",\"1\",\"2\",\"3\",\"4\",\"5\",\"6\",\"7\",\"8\",\"9\"]\nd=[\"0\",\"1\",\"2\",\"3\",\"4\",\"5\",\"6\",\"7\",\"8\",\"9\"]\n" +
	"e=[\"0\",\"1\",\"2\",\"3\",\"4\",\"5\",\"6\",\"7\",\"8\",\"9\"]\nf=[\"0\",\"1\",\"2\",\"3\",\"4\",\"5\",\"6\",\"7\",\"8\",\"9\"]\n" +
	"g=[\"0\",\"1\",\"2\",\"3\",\"4\",\"5\",\"6\",\"7\",\"8\",\"9\"]\nh=[\"0\",\"1\",\"2\",\"3\",\"4\",\"5\",\"6\",\"7\",\"8\",\"9\"]\n"

func TestParseErrors(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ toml, want string }{
		{"[axes]\n", "at least one axis"},
		{"[axes]\nrps=[]\n", "has no values"},
		{"[axes]\nrps=[\"1\",\"1\"]\n", "repeats value"},
		{"[options]\nrps=\"1\"\n[axes]\nrps=[\"2\"]\n", "both an axis"},
		{"[axes]\nrps=[\"1\"]\n[[exclude]]\nmodel=\"x\"\n", "not an axis"},
		{"[axes]\nrps=[\"1\"]\n[[exclude]]\nrps=\"1\"\n", "leave no job"},
		{"[axis]\nrps=[\"1\"]\n", "unknown key"},
		{bigStudy, "more than 100000 jobs"},
		{"[options]\nmax-machines = 2026-01-01\n[axes]\nrps=[\"1\"]\n", "line 2 (last key \"options.max-machines\"): a value must be a string, a number or a boolean, as on the command line; got a date or time"},
		{"[axes]\nrps=[\"1\"]\n[[exclude]]\nrps=[\"1\"]\n", "a value must be a string, a number or a boolean, as on the command line; got an array"},
		{"[options]\nseed = { a = 1 }\n[axes]\nrps=[\"1\"]\n", "got a table"},
	} {
		_, _, err := Parse("s.toml", []byte(c.toml))
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.HasPrefix(err.Error(), "s.toml") {
			t.Errorf("%q: error %v, want one naming s.toml and %q", c.toml, err, c.want)
		}
	}
	for _, s := range []string{"0/3", "4/3", "1", "a/b", "1/0"} {
		if _, _, err := ParseShard(s); err == nil {
			t.Errorf("ParseShard(%q) accepted", s)
		}
	}
	if i, n, err := ParseShard("2/3"); err != nil || i != 1 || n != 3 {
		t.Errorf("ParseShard(2/3) = %d,%d,%v", i, n, err)
	}
}

// parseJobs is the jobs of the study file doc, named name.
func parseJobs(t *testing.T, name, doc string) []Job {
	t.Helper()
	jobs, _, err := Parse(name, []byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	return jobs
}

// A value may be written as TOML writes a number or a boolean: the jobs,
// keys and arguments are those of the same values written as strings, and
// a boolean is passed as --NAME=VALUE, the one form a boolean flag takes.
func TestParseNumbersAndBooleans(t *testing.T) {
	t.Parallel()
	typed := parseJobs(t, "s.toml", "[options]\nmax-machines = 20\nslo-scale = 1.5\nexhaustive = true\n[axes]\nrps = [10, 20.5]\n[[exclude]]\nrps = 10\n")
	quoted := parseJobs(t, "s.toml", "[options]\nmax-machines = \"20\"\nslo-scale = \"1.5\"\nexhaustive = \"true\"\n[axes]\nrps = [\"10\", \"20.5\"]\n[[exclude]]\nrps = \"10\"\n")
	if !reflect.DeepEqual(typed, quoted) {
		t.Errorf("typed values %+v, quoted %+v", typed, quoted)
	}
	if len(typed) != 1 {
		t.Fatalf("%d jobs, want 1 (rps 10 excluded)", len(typed))
	}
	if got, want := strings.Join(typed[0].Args(), " "), "--exhaustive=true --max-machines 20 --rps 20.5 --slo-scale 1.5"; got != want {
		t.Errorf("args %q, want %q", got, want)
	}
}

// TestKeyStable: a key depends on the job's options, not on the order the
// file lists them or on the other jobs.
func TestKeyStable(t *testing.T) {
	t.Parallel()
	a := parseJobs(t, "a", "[options]\ngoal=\"min-cost\"\nduration=\"20s\"\n[axes]\nrps=[\"10\",\"40\"]\n")
	b := parseJobs(t, "b", "[axes]\nrps=[\"40\"]\n[options]\nduration=\"20s\"\ngoal=\"min-cost\"\n")
	if a[1].Key != b[0].Key {
		t.Errorf("keys differ: %s vs %s", a[1].Key, b[0].Key)
	}
	if a[0].Key == a[1].Key {
		t.Error("different jobs share a key")
	}
}
