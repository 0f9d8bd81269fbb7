package gpuprofile

import (
	"path/filepath"
	"strings"
	"testing"

	"splitplan/arch"
	"splitplan/evaluator/perf/kernel"
	"splitplan/hw"
)

// The profiler's fp8-weight runs of data/gpu-runs (tools/gpu-profile
// --weights fp8): Llama-3.1-8B at TP 1 and the TP-8 share of
// Llama-3.1-70B, their projections as e4m3 GEMMs, on an H100 and an H200.
// No fit saw an fp8 iteration: the embedded kernel layer's fp8 GEMM
// constant (GEMMComputeFP8) is fitted on the shared table's fp8 GEMMs
// alone.

// TestFP8RunsHeldOut holds the embedded kernel layer to the fp8 runs,
// every row held out, priced with fp8 weights (kernel.Row.Precision) and
// the bf16 KV cache and LM head the profiler keeps. The bounds sit a
// little above what it scores (H100: 2.9% / 9.3% and 8.1% / 12.5%; H200,
// carried by the spec sheet: 4.6% / 27.5% and 11.7% / 19.7%, its large
// decode batches as in the bf16 runs, TestDenseRunsHeldOut). The same rows
// priced with bf16 weights miss by more (40.8%, 23.9%, 31.3%, 14.9%: the
// 70B share's iterations are mostly fixed latencies at these sizes): the
// rows are read as fp8.
func TestFP8RunsHeldOut(t *testing.T) {
	h100, h200 := hopper(t)
	for _, c := range []struct {
		gpu      string
		g        hw.GPU
		run      string
		med, p90 float64
	}{
		{"h100", h100, "llama3.1-8b-fp8", 5, 12},
		{"h100", h100, "llama3.1-70b-fp8", 10, 15},
		{"h200", h200, "llama3.1-8b-fp8", 6, 30},
		{"h200", h200, "llama3.1-70b-fp8", 13, 22},
	} {
		heldOut := func(rows []kernel.Row) kernel.Summary {
			return kernel.Validate(kernel.Default, c.g, rows, func(kernel.Row) bool { return false }).ByKind[kernel.Pooled]
		}
		rows, meta, notes := readRunNotes(t, c.gpu, c.run)
		if meta["gpu"] != gpuNames[c.gpu] || meta["power_limit_w"] != 700.0 {
			t.Errorf("%s/%s: meta gpu %v, power limit %v: want %s at 700 W", c.gpu, c.run, meta["gpu"], meta["power_limit_w"], gpuNames[c.gpu])
		}
		var iters, bf []kernel.Row
		for _, r := range rows {
			if !r.IsIteration() {
				continue
			}
			iters = append(iters, r)
			if r.Model != c.run || r.Precision() != arch.FP8 || !strings.Contains(notes[r.Line], "weights=fp8 e4m3") {
				t.Errorf("%s/%s:%d: model %s (%s), note %q: want %s, fp8 weights", c.gpu, c.run, r.Line, r.Model, r.Precision(), notes[r.Line], c.run)
			}
			// the same row under a bf16 model name: priced with bf16 weights
			r.Model = strings.TrimSuffix(r.Model, "-fp8")
			bf = append(bf, r)
		}
		if len(iters) < 15 {
			t.Fatalf("%s/%s: %d iteration rows", c.gpu, c.run, len(iters))
		}
		s, sb := heldOut(iters), heldOut(bf)
		t.Logf("%s/%s held out: %d rows, median %.1f%%, P90 %.1f%% (priced as bf16: %.1f%% / %.1f%%)", c.gpu, c.run, s.N, s.Median, s.P90, sb.Median, sb.P90)
		if s.N != len(iters) || s.Median > c.med || s.P90 > c.p90 {
			t.Errorf("%s/%s: %+v, want all %d rows, median ≤ %v%%, P90 ≤ %v%%", c.gpu, c.run, s, len(iters), c.med, c.p90)
		}
		if !(sb.Median > s.Median && sb.P90 > s.P90) {
			t.Errorf("%s/%s: priced as bf16 %.1f%%, as fp8 %.1f%%: the fp8 rows should be read as fp8", c.gpu, c.run, sb.Median, s.Median)
		}
		mixed, err := kernel.ReadFile(filepath.Join("..", "..", "data", "gpu-runs", c.gpu, c.run, "mixed.csv"))
		if err != nil {
			t.Fatal(err)
		}
		if sm := heldOut(mixed); sm.N > 0 {
			t.Logf("%s/%s mixed.csv held out: %d rows, median %.1f%%, P90 %.1f%%", c.gpu, c.run, sm.N, sm.Median, sm.P90)
		}
	}
}
