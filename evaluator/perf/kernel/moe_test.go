package kernel

import (
	"math"
	"strings"
	"testing"

	"splitplan/arch"
	"splitplan/hw"
)

// TestRowArchLayers: a row that ran fewer layers of a model is that
// model's first layers (as tools/gpu-profile --max-layers runs them): a
// dense model's, an MoE model's leading dense layers then MoE layers (one
// at least); more layers than the model has, too few for one MoE layer,
// and a truncated sliding-window or linear-attention model are refused.
func TestRowArchLayers(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		model              string
		layers             int
		wantDense, wantMoE int
		err                string
	}{
		{"llama3.1-8b", 4, 4, 0, ""},
		{"llama3.1-8b", 0, 32, 0, ""},
		{"mixtral-8x7b", 4, 0, 4, ""},
		{"mixtral-8x7b", 32, 0, 32, ""},
		{"qwen3-235b-a22b", 1, 0, 1, ""},
		{"deepseek-v3", 5, 3, 2, ""},
		{"deepseek-v3", 3, 0, 0, "expected more than its 3 dense layers"},
		{"mixtral-8x7b", 33, 0, 0, "runs 33 layers of 32"},
		{"gpt-oss-120b", 4, 0, 0, "runs 4 layers of 36"},
		{"qwen3.5-397b-a17b", 8, 0, 0, "runs 8 layers of 60"},
	} {
		a, err := Row{Model: c.model, Layers: c.layers, Kind: Prefill}.Arch()
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%s with %d layers: %v, want an error containing %q", c.model, c.layers, err, c.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s with %d layers: %v", c.model, c.layers, err)
			continue
		}
		if a.DenseLayers() != c.wantDense || a.MoELayers() != c.wantMoE {
			t.Errorf("%s with %d layers: %d dense + %d MoE, want %d + %d", c.model, c.layers, a.DenseLayers(), a.MoELayers(), c.wantDense, c.wantMoE)
		}
		if err := a.Validate(); err != nil {
			t.Errorf("%s with %d layers: %v", c.model, c.layers, err)
		}
	}
	if (Row{Model: "mixtral-8x7b", Kind: Decode}).IsMoE() != true || (Row{Model: "llama3.1-8b", Kind: Decode}).IsMoE() ||
		(Row{Model: "mixtral-8x7b", Kind: GEMM}).IsMoE() {
		t.Error("IsMoE: want true for an MoE model's iteration row only")
	}
}

// moeTruth is a kernel layer whose routed experts' grouped GEMMs run at
// 0.35 of the bf16 peak, well under its dense GEMMs' 0.6.
var moeTruth = Params{GEMMCompute: 0.6, GEMMComputeFP8: 0.633178, GEMMMemory: 0.8, Blend: 0.2, GEMMLatencyS: 5e-6,
	AttnCompute: 0.3, KVMemory: 0.75, LayerLatencyS: 30e-6, IterationS: 50e-6, ExpertCompute: 0.35, ExpertLayerS: 40e-6, ExpertTileRows: 64}

// moeRows are MoE iteration rows as tools/gpu-profile plans them
// (prefill, decode and mixed of Mixtral-8x7B at TP 2 and of Qwen3-30B-A3B
// and the first 4 layers of Qwen3-235B-A22B at TP 1), timed by p.
func moeRows(t *testing.T, p Params, g hw.GPU) []Row {
	t.Helper()
	var rows []Row
	for _, m := range []struct {
		model      string
		tp, layers int
	}{{"mixtral-8x7b", 2, 32}, {"qwen3-30b-a3b", 1, 48}, {"qwen3-235b-a22b", 1, 4}} {
		add := func(r Row) {
			r.Model, r.TP, r.Layers, r.Line = m.model, m.tp, m.layers, len(rows)+2
			tm, err := Predict(p, g, r)
			if err != nil {
				t.Fatal(err)
			}
			r.TimeS = tm
			rows = append(rows, r)
		}
		for _, n := range []int{128, 512, 2048, 8192} {
			add(Row{Kind: Prefill, Prompts: 1, TokensPerPrompt: n})
		}
		for _, b := range []int{1, 16, 128, 512} {
			add(Row{Kind: Decode, Batch: b, ContextPerRequest: 2048})
		}
		add(Row{Kind: Mixed, Prompts: 1, TokensPerPrompt: 512, Batch: 64, ContextPerRequest: 2048})
	}
	return rows
}

// denseRows are kernels.csv's GEMM and iteration rows timed by p.
func denseRows(t *testing.T, p Params, g hw.GPU) []Row {
	t.Helper()
	var out []Row
	for _, r := range readRows(t, "kernels.csv") {
		if r.Kind != GEMM && !r.IsIteration() {
			continue
		}
		tm, err := Predict(p, g, r)
		if err != nil {
			t.Fatal(err)
		}
		r.TimeS = tm
		out = append(out, r)
	}
	return out
}

// checkRecovered checks a fit p of rows timed with moeTruth: its expert
// fraction moeTruth's 0.35 within 2%, its MoE routing time the 40 µs
// within 5%, its tile the 64 rows, every other constant dense's.
func checkRecovered(t *testing.T, p, dense Params, fit string) {
	t.Helper()
	if d := math.Abs(p.ExpertCompute-0.35) / 0.35; d > 0.02 {
		t.Errorf("%s: expert_compute %.4f, want 0.35 within 2%%", fit, p.ExpertCompute)
	}
	if d := math.Abs(p.ExpertLayerS-40e-6) / 40e-6; d > 0.05 {
		t.Errorf("%s: expert_layer_s %.3g, want 40e-6 within 5%%", fit, p.ExpertLayerS)
	}
	if p.ExpertTileRows != 64 {
		t.Errorf("%s: expert_tile_rows %v, want 64", fit, p.ExpertTileRows)
	}
	q := p
	q.ExpertCompute, q.ExpertLayerS, q.ExpertTileRows = 0, 0, 0
	if q != dense {
		t.Errorf("%s: the other constants %+v, want %+v", fit, q, dense)
	}
}

// TestFitExpertsRecovers: on MoE rows made by a kernel layer with a known
// expert fraction (0.35), the second stage alone, every other constant at
// the truth, recovers it within 2%; rows that are not MoE are ignored,
// and none is an error.
func TestFitExpertsRecovers(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("a fit of every MoE row: seconds (the full suite runs it)")
	}
	g, _ := hw.Lookup("h100_sxm")
	dense := moeTruth
	dense.ExpertCompute, dense.ExpertLayerS, dense.ExpertTileRows = 0, 0, 0
	rows := append(moeRows(t, moeTruth, g), Row{Model: "llama3.1-8b", TP: 1, Kind: Decode, Batch: 1, ContextPerRequest: 128, TimeS: 1})
	p, err := FitExperts(dense, g, rows)
	if err != nil {
		t.Fatal(err)
	}
	checkRecovered(t, p, dense, "FitExperts")
	if _, err := FitExperts(dense, g, rows[len(rows)-1:]); err == nil {
		t.Error("FitExperts with no MoE row: no error")
	}
}

// TestFitTwoStages: the full fit on a synthetic table (kernels.csv's
// dense rows and MoE rows, all timed by a kernel layer with expert
// fraction 0.35, MoE routing time 40 µs, tile 64 rows) recovers them, and its dense
// constants are exactly those of the fit on the dense rows alone, which
// leaves the expert fraction unmeasured (equal to the dense one).
func TestFitTwoStages(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("two fits: seconds")
	}
	g, _ := hw.Lookup("h100_sxm")
	dense := denseRows(t, moeTruth, g)
	all := func(Row) bool { return true }
	pd, err := Fit(dense, g, Start, all)
	if err != nil {
		t.Fatal(err)
	}
	if pd.ExpertCompute != 0 || pd.ExpertFraction() != pd.GEMMCompute {
		t.Errorf("fit without MoE rows: expert_compute %v (fraction %v), want 0 (the dense %v)", pd.ExpertCompute, pd.ExpertFraction(), pd.GEMMCompute)
	}
	pm, err := Fit(append(dense, moeRows(t, moeTruth, g)...), g, Start, all)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("dense fit %+v; expert_compute %.4f", pd, pm.ExpertCompute)
	checkRecovered(t, pm, pd, "the two-stage fit")
}

// TestExpertFractionMonotone: over every MoE built-in, GPU, TP 1–8, bf16
// and fp8 weights and iterations from one decode to 16k prompt tokens, a
// lower expert fraction is never faster, and an unmeasured one (0) is
// exactly the dense fraction (so the embedded fit's outputs do not move).
func TestExpertFractionMonotone(t *testing.T) {
	t.Parallel()
	n := 0
	for _, a := range arch.Builtin() {
		if !a.IsMoE() {
			continue
		}
		for _, g := range hw.Builtin() {
			for _, tp := range []int{1, 2, 4, 8} {
				for _, w := range []arch.Precision{arch.BF16, arch.FP8} {
					var prev, unmeasured []float64
					for _, f := range []float64{0, Default.GEMMCompute, 0.5, 0.35, 0.2, 0.05} {
						p := Default
						p.ExpertCompute = f
						l, err := New(p, a, g, tp, w, w)
						if err != nil {
							t.Fatal(err)
						}
						var times []float64
						for _, it := range [][2]int{{0, 1}, {0, 64}, {0, 512}, {512, 0}, {4096, 32}, {16384, 0}} {
							pt := it[0]
							times = append(times, l.Time(pt, min(pt, 1), float64(pt)*float64(pt+1)/2, it[1], float64(it[1])*2048, 1, nil))
						}
						for i := range times {
							switch {
							case prev == nil:
							case f == Default.GEMMCompute && times[i] != prev[i]:
								t.Errorf("%s/%s/tp%d/%s: expert_compute = gemm_compute gives %v s, unmeasured %v s", a.Name, g.Name, tp, w, times[i], prev[i])
							case times[i] < prev[i]:
								t.Errorf("%s/%s/tp%d/%s: expert_compute %v gives %v s, faster than %v s at a higher fraction", a.Name, g.Name, tp, w, f, times[i], prev[i])
							}
							n++
						}
						prev = times
						if f == 0 {
							unmeasured = times
						}
					}
					if last := len(prev) - 1; !(prev[last] > unmeasured[last]) {
						t.Errorf("%s/%s/tp%d/%s: 16k-token prefill %v s at expert_compute 0.05, not slower than %v s at the dense fraction", a.Name, g.Name, tp, w, prev[last], unmeasured[last])
					}
				}
			}
		}
	}
	if n < 1000 {
		t.Fatalf("%d comparisons", n)
	}
	t.Logf("%d comparisons", n)
}

// TestMLARowsNotFitted: rows of a latent-attention model are MLA rows
// (and MoE rows), FitExperts leaves them out (so a table with MoE rows of
// MLA models only leaves nothing to fit and says so), their time cannot
// move the fitted fraction, and Validate groups them as mla, not moe.
func TestMLARowsNotFitted(t *testing.T) {
	t.Parallel()
	g, _ := hw.Lookup("h100_sxm")
	mla := Row{Model: "deepseek-r1", TP: 8, Layers: 4, Kind: Decode, Batch: 8, ContextPerRequest: 1024, TimeS: 1}
	if !mla.IsMLA() || !mla.IsMoE() {
		t.Fatalf("deepseek-r1 decode row: IsMLA %v, IsMoE %v, want both", mla.IsMLA(), mla.IsMoE())
	}
	if r := (Row{Model: "qwen3-30b-a3b", TP: 1, Kind: Decode, Batch: 1, ContextPerRequest: 128}); r.IsMLA() {
		t.Error("qwen3-30b-a3b: IsMLA true")
	}
	dense := moeTruth
	dense.ExpertCompute = 0
	if _, err := FitExperts(dense, g, []Row{mla}); err == nil {
		t.Error("FitExperts on MLA rows only: no error")
	}
	rows := moeRows(t, moeTruth, g)
	if testing.Short() {
		// Every other row: the two fits take half the time, and MLA rows
		// still must not move them.
		half := rows[:0:0]
		for i := 0; i < len(rows); i += 2 {
			half = append(half, rows[i])
		}
		rows = half
	}
	p1, err := FitExperts(dense, g, rows)
	if err != nil {
		t.Fatal(err)
	}
	p2, err := FitExperts(dense, g, append(rows, mla, mla, mla))
	if err != nil {
		t.Fatal(err)
	}
	if p1 != p2 {
		t.Errorf("MLA rows moved the fit: %+v against %+v", p2, p1)
	}
	v := Validate(p1, g, []Row{mla}, func(Row) bool { return true })
	if v.ByKind[MLA].N+v.FitByKind[MLA].N != 1 || v.ByKind[MoE].N+v.FitByKind[MoE].N != 0 {
		t.Errorf("an MLA row grouped as %+v / %+v", v.ByKind, v.FitByKind)
	}
}

// TestProfiledExpertsPhysical: the engine-free layer with the profiler's
// routed-expert constants (Default.WithProfiledExperts, what perf query
// --engine none prices an MoE model with) over every MoE built-in, GPU, TP
// 1–8 and bf16/fp8 weights: never faster with more decodes, more context
// or more prompt tokens, never faster than with the experts at the dense
// efficiency (routing and tiles only add work), and a GPU with at least
// another's peaks and bandwidth never slower.
func TestProfiledExpertsPhysical(t *testing.T) {
	t.Parallel()
	p := Default.WithProfiledExperts()
	if p.ExpertCompute == 0 || p.ExpertTileRows == 0 {
		t.Fatalf("ProfiledExperts %+v: want measured constants", ProfiledExperts)
	}
	type work struct{ pt, d, ctx int }
	works := []work{{0, 1, 512}, {0, 8, 2048}, {0, 64, 2048}, {0, 256, 4096}, {512, 0, 0}, {2048, 0, 0}, {8192, 0, 0}, {2048, 16, 2048}}
	at := func(l *Layer, w work) float64 {
		return l.Time(w.pt, min(w.pt, 1), float64(w.pt)*float64(w.pt+1)/2, w.d, float64(w.d*w.ctx), 1, nil)
	}
	var n, pairs int
	for _, a := range arch.Builtin() {
		if !a.IsMoE() {
			continue
		}
		for _, tp := range []int{1, 2, 4, 8} {
			for _, w := range []arch.Precision{arch.BF16, arch.FP8} {
				layers := map[string]*Layer{}
				for _, g := range hw.Builtin() {
					if g.Tensor(w) != w {
						continue
					}
					l, err := New(p, a, g, tp, w, w)
					if err != nil {
						continue
					}
					dense, err := New(Default, a, g, tp, w, w)
					if err != nil {
						t.Fatal(err)
					}
					layers[g.Name] = l
					for _, wk := range works {
						tm := at(l, wk)
						if d := at(dense, wk); tm < d*(1-1e-12) {
							t.Errorf("%s/%s/tp%d/%s %+v: %v s with the profiled experts, below %v s at the dense efficiency", a.Name, g.Name, tp, w, wk, tm, d)
						}
						for _, more := range []work{{wk.pt, wk.d * 2, wk.ctx}, {wk.pt, wk.d, wk.ctx + 1024}, {wk.pt + 256, wk.d, wk.ctx}} {
							if tm2 := at(l, more); tm2 < tm*(1-1e-12) {
								t.Errorf("%s/%s/tp%d/%s: %+v takes %v s, less than %+v's %v s", a.Name, g.Name, tp, w, more, tm2, wk, tm)
							}
						}
						n++
					}
				}
				for _, g := range hw.Builtin() {
					for _, g2 := range hw.Builtin() {
						l, l2 := layers[g.Name], layers[g2.Name]
						if l == nil || l2 == nil || g.Name == g2.Name || !hw.KernelDominates(g2, g) {
							continue
						}
						pairs++
						for _, wk := range works {
							if t1, t2 := at(l, wk), at(l2, wk); t2 > t1*(1+1e-9) {
								t.Errorf("%s/tp%d/%s %+v: %s (at least %s's peaks and bandwidth) takes %v s, more than %v s", a.Name, tp, w, wk, g2.Name, g.Name, t2, t1)
							}
						}
					}
				}
			}
		}
	}
	t.Logf("%d configurations × work checked, %d dominating pairs", n, pairs)
	if n < 500 || pairs < 50 {
		t.Errorf("only %d checks and %d pairs", n, pairs)
	}
}
