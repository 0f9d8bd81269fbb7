package kernel

import (
	"os"
	"path/filepath"
	"sort"
	"testing"

	"splitplan/hw"
)

// h200Dir holds the H200 measurement that tools/gpu-profile made on a real
// H200 (data/gpu-kernels/h200/README.md): it is in the repository, so these
// tests run everywhere.
const h200Dir = "../../../data/gpu-kernels/h200"

func readH200(t *testing.T, file string) []Row {
	t.Helper()
	path := filepath.Join(h200Dir, file)
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows, err := ReadCSV(f, path)
	if err != nil {
		t.Fatal(err)
	}
	return rows
}

// TestH200CarriedBySpec is the independent check of the rule that carries
// the kernel layer from the H100 it was fitted on to other GPUs by their
// spec sheets alone: the embedded layer, fitted on the H100 only, against
// every iteration of the measured H200 (none of which any fit saw).
// Measured 2026-11-27: pooled median 4.8%, P90 19.8% over 134 iterations
// (Llama-3.1-8B and -70B, and Qwen3-32B and -8B, shapes the H100 table
// lacks);
// decode of many requests at long context is the weak point (the H200's
// attention reads its KV cache at a smaller share of its bandwidth than
// the H100's, so the carried model is up to 30% fast there).
func TestH200CarriedBySpec(t *testing.T) {
	g, err := hw.Lookup("h200_sxm")
	if err != nil {
		t.Fatal(err)
	}
	rows := append(readH200(t, "kernels.csv"), readH200(t, "mixed.csv")...)
	v := Validate(Default, g, rows, func(Row) bool { return false })
	s := v.ByKind[Pooled]
	t.Logf("H200, carried from the H100 by spec: %+v (prefill %+v, decode %+v, mixed %+v)", s, v.ByKind[Prefill], v.ByKind[Decode], v.ByKind[Mixed])
	if s.N < 130 || v.Skipped > 0 || s.Median > 6 || s.P90 > 22 {
		t.Errorf("H200 carried by spec: %+v, %d skipped: want ≥ 130 rows, none skipped, median ≤ 6%%, P90 ≤ 22%%", s, v.Skipped)
	}
}

// TestH200MeasuredPhysics: what the measurement says of the H200 against
// the H100 on the same work (the shared H100 table, when it is beside the
// repository), and that the embedded kernel layer says the same: the
// same tensor cores and power limit give prefill within 5% (median), and
// the 1.43× bandwidth makes decode faster, by less than 1.43×.
func TestH200MeasuredPhysics(t *testing.T) {
	h100, _ := hw.Lookup("h100_sxm")
	h200, _ := hw.Lookup("h200_sxm")
	key := func(r Row) Row { r.Line, r.TimeS, r.PowerW, r.SMMHz = 0, 0, 0, 0; return r }
	mine := map[Row]float64{}
	for _, r := range append(readH200(t, "kernels.csv"), readH200(t, "mixed.csv")...) {
		if r.IsIteration() {
			mine[key(r)] = r.TimeS
		}
	}
	ratios := func(measured func(Row) (float64, bool)) map[Kind][]float64 {
		out := map[Kind][]float64{}
		for r, t200 := range mine {
			if t100, ok := measured(r); ok {
				out[r.Kind] = append(out[r.Kind], t100/t200)
			}
		}
		return out
	}
	median := func(v []float64) float64 {
		s := append([]float64(nil), v...)
		sort.Float64s(s)
		return s[len(s)/2]
	}
	check := func(what string, rs map[Kind][]float64) {
		p, d := rs[Prefill], rs[Decode]
		if len(p) < 10 || len(d) < 30 {
			t.Fatalf("%s: %d prefill and %d decode rows in common", what, len(p), len(d))
		}
		mp, md := median(p), median(d)
		t.Logf("%s: H100/H200 time, median: prefill %.3f (%d rows), decode %.3f (%d rows)", what, mp, len(p), md, len(d))
		if mp < 0.95 || mp > 1.05 {
			t.Errorf("%s: prefill H100/H200 %.3f: want within 5%% (same tensor cores and power limit)", what, mp)
		}
		if md <= 1 || md >= h200.MemoryBWTBs/h100.MemoryBWTBs {
			t.Errorf("%s: decode H100/H200 %.3f: want faster on the H200, by less than its bandwidth ratio %.2f", what, md, h200.MemoryBWTBs/h100.MemoryBWTBs)
		}
	}
	check("the embedded kernel layer", ratios(func(r Row) (float64, bool) {
		a, err1 := Predict(Default, h100, r)
		b, err2 := Predict(Default, h200, r)
		if err1 != nil || err2 != nil {
			return 0, false
		}
		// The model's ratio, scaled onto the measured H200 time.
		return a / b * mine[key(r)], true
	}))
	path := filepath.Join(dataDir, "kernels.csv")
	if _, err := os.Stat(path); err != nil {
		t.Skipf("no shared H100 table beside the repository: %v", err)
	}
	h100Rows := map[Row]float64{}
	for _, r := range append(readRows(t, "kernels.csv"), readRows(t, "mixed.csv")...) {
		if r.IsIteration() {
			h100Rows[key(r)] = r.TimeS
		}
	}
	check("measured", ratios(func(r Row) (float64, bool) { t, ok := h100Rows[r]; return t, ok }))
}
