package study

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

func fakeRunner(ctx context.Context, j Job) ([]byte, error) {
	return []byte(fmt.Sprintf("design,cost\nA,%g\nB,%g\n", j.Cost, 2*j.Cost)), nil
}

func smallJobs(t *testing.T) ([]Job, []string) {
	data, err := os.ReadFile("testdata/small.toml")
	if err != nil {
		t.Fatal(err)
	}
	jobs, axes, err := Parse("small", data)
	if err != nil {
		t.Fatal(err)
	}
	return jobs, axes
}

// TestMergeShardsEqualsUnsharded: merge of shards == unsharded, byte for byte.
func TestMergeShardsEqualsUnsharded(t *testing.T) {
	jobs, axes := smallJobs(t)
	one := t.TempDir()
	if _, err := Run(context.Background(), one, jobs, fakeRunner, nil); err != nil {
		t.Fatal(err)
	}
	want, missing, err := Merge(one, jobs, axes)
	if err != nil || len(missing) != 0 {
		t.Fatal(err, missing)
	}
	for _, n := range []int{2, 3, 7} {
		dir := t.TempDir()
		for i := 0; i < n; i++ {
			sh, _ := Shard(jobs, i, n)
			if _, err := Run(context.Background(), dir, sh, fakeRunner, nil); err != nil {
				t.Fatal(err)
			}
		}
		got, missing, err := Merge(dir, jobs, axes)
		if err != nil || len(missing) != 0 {
			t.Fatal(err, missing)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("N=%d: merged shards differ from the unsharded run", n)
		}
	}
	// Missing jobs are listed.
	dir := t.TempDir()
	sh, _ := Shard(jobs, 0, 3)
	Run(context.Background(), dir, sh, fakeRunner, nil)
	_, missing, _ = Merge(dir, jobs, axes)
	if len(missing) != len(jobs)-len(sh) {
		t.Errorf("%d missing, want %d", len(missing), len(jobs)-len(sh))
	}
}

// TestInterruptResume: a shard cancelled mid-job leaves no partial file, and
// running it again completes only the remaining jobs.
func TestInterruptResume(t *testing.T) {
	jobs, axes := smallJobs(t)
	dir := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	calls := 0
	interrupted := func(ctx context.Context, j Job) ([]byte, error) {
		calls++
		if calls == 4 {
			cancel()
			return []byte("design,cost\nA,"), nil // half-written output
		}
		return fakeRunner(ctx, j)
	}
	ran, err := Run(ctx, dir, jobs, interrupted, nil)
	if !errors.Is(err, context.Canceled) || ran != 3 {
		t.Fatalf("ran %d, err %v; want 3 and context.Canceled", ran, err)
	}
	files, _ := filepath.Glob(filepath.Join(dir, "*"))
	hidden, _ := filepath.Glob(filepath.Join(dir, ".*"))
	if len(files) != 3 || len(hidden) != 0 {
		t.Fatalf("after interrupt: files %v hidden %v", files, hidden)
	}
	// A corrupt (truncated) result does not verify and is redone.
	os.WriteFile(ResultPath(dir, jobs[0]), []byte("design,cost\nA,1\n"), 0o644)
	ran, err = Run(context.Background(), dir, jobs, fakeRunner, nil)
	if err != nil || ran != len(jobs)-2 {
		t.Fatalf("resume ran %d (err %v), want %d", ran, err, len(jobs)-2)
	}
	got, missing, err := Merge(dir, jobs, axes)
	ref := t.TempDir()
	Run(context.Background(), ref, jobs, fakeRunner, nil)
	want, _, _ := Merge(ref, jobs, axes)
	if err != nil || len(missing) != 0 || !bytes.Equal(got, want) {
		t.Fatalf("resumed merge differs (err %v, missing %v)", err, missing)
	}
}
