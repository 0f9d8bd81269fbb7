package gpuprofile

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"

	"splitplan/evaluator/perf/kernel"
	"splitplan/hw"
)

// The profiler's dense runs of data/gpu-runs: Qwen3-32B and Qwen3-8B,
// models the embedded kernel layer's fit never saw, on the H100 it was
// fitted on and on an H200; and a Llama-3.1-8B run stopped by a SIGTERM.

// TestDenseRunsHeldOut holds the embedded kernel layer (kernel.Default,
// fitted on the Llama shapes of ../shared/data/gpu-kernels) to issue 28's
// kernel targets on models it never saw: on the H100, median ≤ 5% and P90
// ≤ 12% (measured 3.0% / 6.2%); on the H200, carried by its spec sheet,
// median ≤ 5% (3.5%), P90 ≤ 25% (21.1%: its large decode batches, whose
// KV reads reach less of the H200's bandwidth, TestH200Fit).
func TestDenseRunsHeldOut(t *testing.T) {
	h100, h200 := hopper(t)
	for _, c := range []struct {
		gpu      string
		g        hw.GPU
		med, p90 float64
	}{{"h100", h100, 5, 12}, {"h200", h200, 5, 25}} {
		rows, meta := readRun(t, c.gpu, "qwen3-dense")
		if meta["power_limit_w"] != 700.0 {
			t.Errorf("%s/qwen3-dense: power limit %v", c.gpu, meta["power_limit_w"])
		}
		models := map[string]int{}
		for _, r := range rows {
			if r.IsIteration() {
				models[r.Model]++
			}
		}
		if models["qwen3-32b"] < 8 || models["qwen3-8b"] < 8 {
			t.Errorf("%s/qwen3-dense: iteration rows per model %v", c.gpu, models)
		}
		s := heldOut(t, kernel.Default, c.g, c.gpu, "qwen3-dense")
		t.Logf("%s, Qwen3-32B and Qwen3-8B, held out: %+v", c.gpu, s)
		if s.N < 20 || s.Median > c.med || s.P90 > c.p90 {
			t.Errorf("%s/qwen3-dense: %+v, want median ≤ %v%%, P90 ≤ %v%%", c.gpu, s, c.med, c.p90)
		}
	}
}

// TestStoppedRun: a run stopped by a SIGTERM (timeout -s TERM 45 on an
// H200) wrote the rows it had measured, as many as its message says,
// readable as any run, and exited 130.
func TestStoppedRun(t *testing.T) {
	dir := filepath.Join("..", "..", "data", "gpu-runs", "h200", "llama3.1-8b-stopped")
	log, err := os.ReadFile(filepath.Join(dir, "stderr.log"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`INTERRUPTED, (\d+) of (\d+) planned rows`).FindSubmatch(log)
	if m == nil || !regexp.MustCompile(`exit status 130\b`).Match(log) {
		t.Fatalf("stderr.log does not record an interrupted run that exited 130:\n%s", log)
	}
	wrote, _ := strconv.Atoi(string(m[1]))
	planned, _ := strconv.Atoi(string(m[2]))
	rows, meta := readRun(t, "h200", "llama3.1-8b-stopped")
	mixed, err := kernel.ReadFile(filepath.Join(dir, "mixed.csv"))
	if err != nil {
		t.Fatal(err)
	}
	if n := len(rows) + len(mixed); n != wrote || wrote >= planned || wrote < 10 {
		t.Errorf("%d rows in the files; the run says it wrote %d of %d planned", n, wrote, planned)
	}
	if e, _ := meta["elapsed_s"].(float64); !(e > 0 && e < 45) {
		t.Errorf("meta elapsed_s %v: want the time before the 45 s SIGTERM", meta["elapsed_s"])
	}
}
