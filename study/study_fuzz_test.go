package study

import (
	"os"
	"strings"
	"testing"

	"splitplan/internal/fuzzing"
)

// FuzzParse: Parse never panics, its errors name the file, and a study it
// accepts has at least one job, no more than maxJobs, each with a unique
// key, every axis's value and the fixed options.
func FuzzParse(f *testing.F) {
	for _, path := range []string{"testdata/small.toml", "../examples/study/study.toml"} {
		if b, err := os.ReadFile(path); err == nil {
			f.Add(string(b))
		}
	}
	fuzzing.Seed(f,
		bigStudy,
		"[axes]\nrps=[\"1\",\"2\"]\n",
		"[options]\nrps=\"1\"\n[axes]\nrps=[\"2\"]\n",
		"[axes]\nrps=[\"1\"]\n[[exclude]]\nrps=\"1\"\n",
		"[axes]\nrps=[\"1\"]\n[[exclude]]\n",
		"[axes]\nRPS=[\"1\"]\n",
		"[axes]\nrps=[\"1e308\"]\n[options]\nduration=\"1e308s\"\n",
		"[axes]\nrps=[1]\n",
		"",
	)
	f.Fuzz(func(t *testing.T, in string) {
		jobs, axes, err := Parse("fuzz.toml", []byte(in))
		if err != nil {
			if !strings.HasPrefix(err.Error(), "fuzz.toml") {
				t.Fatalf("error does not name the file: %v", err)
			}
			return
		}
		if len(jobs) == 0 || len(jobs) > maxJobs || len(axes) == 0 {
			t.Fatalf("%d jobs, %d axes", len(jobs), len(axes))
		}
		keys := map[string]bool{}
		for _, j := range jobs {
			if keys[j.Key] {
				t.Fatalf("key %q twice", j.Key)
			}
			keys[j.Key] = true
			if len(j.Axes) != len(axes) || !(j.Cost >= 1) {
				t.Fatalf("job %+v: expected a value of each of the axes %v and a cost of 1 or more", j, axes)
			}
			for _, a := range axes {
				if j.Options[a] != j.Axes[a] {
					t.Fatalf("job %+v: option %s is not its axis value", j, a)
				}
			}
		}
	})
}

// FuzzParseShard: ParseShard never panics and accepts only I/N with
// 1 ≤ I ≤ N, returned 0-based.
func FuzzParseShard(f *testing.F) {
	fuzzing.Seed(f, "1/1", "2/3", "0/3", "4/3", "1", "a/b", "1/0", "-1/-1", "+1/+2", "9223372036854775807/9223372036854775807", "")
	f.Fuzz(func(t *testing.T, s string) {
		i, n, err := ParseShard(s)
		if err != nil {
			if !strings.Contains(err.Error(), "--shard") {
				t.Fatalf("error does not name the flag: %v", err)
			}
			return
		}
		if n < 1 || i < 0 || i >= n {
			t.Fatalf("ParseShard(%q) = %d, %d", s, i, n)
		}
	})
}
