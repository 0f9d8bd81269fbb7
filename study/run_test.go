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
	t.Parallel()
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
	t.Parallel()
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

// TestFailedJobs: a failing job leaves its error beside the results, the
// others still run, Check and WriteSummary report it per axis, and a
// re-run that succeeds clears it.
func TestFailedJobs(t *testing.T) {
	t.Parallel()
	jobs, axes := smallJobs(t)
	dir := t.TempDir()
	bad := jobs[1].Key
	failing := func(ctx context.Context, j Job) ([]byte, error) {
		if j.Key == bad {
			return nil, errors.New("optimize exited 2: no design fits\nsecond line")
		}
		return fakeRunner(ctx, j)
	}
	var seen []Progress
	ran, err := Run(context.Background(), dir, jobs, failing, func(p Progress) { seen = append(seen, p) })
	var fe *FailedError
	if !errors.As(err, &fe) || len(fe.Keys) != 1 || fe.Keys[0] != bad || ran != len(jobs)-1 {
		t.Fatalf("ran %d, err %v; want %d and one failure", ran, err, len(jobs)-1)
	}
	if len(seen) != len(jobs)+1 || seen[0].Done != 0 || seen[len(seen)-1].Done != len(jobs) ||
		seen[len(seen)-1].Failed != 1 || seen[len(seen)-1].CostLeft != 0 {
		t.Errorf("progress: %d calls, first %+v, last %+v", len(seen), seen[0], seen[len(seen)-1])
	}
	// Remove one result: one missing, one failed.
	os.Remove(ResultPath(dir, jobs[0]))
	os.WriteFile(ResultPath(dir, jobs[2]), []byte("design,cost\nA,1\n"), 0o644)
	sts := Check(dir, jobs)
	want := map[State]int{Done: len(jobs) - 3, Missing: 1, Failed: 1, Unverified: 1}
	got := map[State]int{}
	for _, s := range sts {
		got[s.State]++
	}
	if fmt.Sprint(got) != fmt.Sprint(want) || sts[1].Reason != "optimize exited 2: no design fits" {
		t.Errorf("states %v, want %v; reason %q", got, want, sts[1].Reason)
	}
	var b bytes.Buffer
	if err := WriteSummary(&b, sts, axes); err != nil {
		t.Fatal(err)
	}
	// 15 jobs (18 less the 3 of llama-70b on A100,H100); the first three
	// (H100, llama-8b, rates 10, 40, 80) are not done.
	wantSum := `study: 12 of 15 jobs done, 1 missing, 1 failed, 1 unverified
  gpus   H100: 6/9 (1 missing, 1 failed, 1 unverified)   A100,H100: 6/6
  model  llama-8b: 3/6 (1 missing, 1 failed, 1 unverified)   llama-70b: 3/3   qwen-32b: 6/6
  rps    10: 4/5 (1 missing)   40: 4/5 (1 failed)   80: 4/5 (1 unverified)
missing    ` + jobs[0].Key + `
failed     ` + jobs[1].Key + `: optimize exited 2: no design fits
unverified ` + jobs[2].Key + `
`
	if b.String() != wantSum {
		t.Errorf("summary:\n%s\nwant:\n%s", b.String(), wantSum)
	}
	ran, err = Run(context.Background(), dir, jobs, fakeRunner, nil)
	if err != nil || ran != 3 {
		t.Fatalf("re-run: ran %d, err %v; want 3", ran, err)
	}
	if _, err := os.Stat(FailedPath(dir, jobs[1])); !os.IsNotExist(err) {
		t.Errorf("the failure record stays after the job succeeded: %v", err)
	}
	for _, s := range Check(dir, jobs) {
		if s.State != Done {
			t.Errorf("%s: %s after the re-run", s.Job.Key, s.State)
		}
	}
}

// TestMergeUnionColumns: results with different columns (optimize adds
// analytic_bound only when a design was bounded out) merge under the union
// of their columns, a job lacking one leaving it empty.
func TestMergeUnionColumns(t *testing.T) {
	t.Parallel()
	jobs, axes := smallJobs(t)
	dir := t.TempDir()
	some := func(ctx context.Context, j Job) ([]byte, error) {
		if j.Key == jobs[1].Key {
			return []byte("design,cost,bound\nA,1,7\n"), nil
		}
		return []byte("design,cost\nA,1\n"), nil
	}
	if _, err := Run(context.Background(), dir, jobs, some, nil); err != nil {
		t.Fatal(err)
	}
	got, _, err := Merge(dir, jobs, axes)
	if err != nil {
		t.Fatal(err)
	}
	lines := bytes.Split(got, []byte("\n"))
	want := []string{"job,axis_gpus,axis_model,axis_rps,design,cost,bound",
		jobs[0].Key + ",H100,llama-8b,10,A,1,", jobs[1].Key + ",H100,llama-8b,40,A,1,7"}
	for i, w := range want {
		if string(lines[i]) != w {
			t.Errorf("line %d: %s, want %s", i, lines[i], w)
		}
	}
}
