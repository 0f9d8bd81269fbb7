package kernel

import (
	"errors"
	"io/fs"
	"math"
	"path/filepath"
	"strings"
	"testing"

	"splitplan/arch"
	"splitplan/hw"
)

const dataDir = "../../../../shared/data/gpu-kernels/h100"

func readRows(t *testing.T, file string) []Row {
	t.Helper()
	rows, err := ReadFile(filepath.Join(dataDir, file))
	if pe := (*fs.PathError)(nil); errors.As(err, &pe) {
		t.Skipf("no kernel data: %v", err) // the file could not be opened
	}
	if err != nil {
		t.Fatal(err)
	}
	return rows
}

// TestHeldOut checks the embedded fit on the rows it did not see: median
// ≤ 5% and P90 ≤ 12% pooled over both files' held-out iteration rows.
func TestHeldOut(t *testing.T) {
	t.Parallel()
	g, _ := hw.Lookup("h100_sxm")
	rows := append(readRows(t, "kernels.csv"), readRows(t, "mixed.csv")...)
	v := Validate(Default, g, rows, InFit)
	for _, k := range []Kind{Prefill, Decode, Mixed, Pooled} {
		t.Logf("%-8s held out %+v  fit %+v", k, v.ByKind[k], v.FitByKind[k])
	}
	for _, e := range v.Rows {
		if e.ErrPct > 8 {
			t.Logf("line %d %s tp%d %s p%d×%d b%d@%d: %.3f ms vs %.3f ms (%.1f%%, fit %v)", e.Row.Line, e.Row.Model, e.Row.TP, e.Row.Kind,
				e.Row.Prompts, e.Row.TokensPerPrompt, e.Row.Batch, e.Row.ContextPerRequest, e.PredS*1e3, e.Row.TimeS*1e3, e.ErrPct, e.InFit)
		}
	}
	s := v.ByKind[Pooled]
	if s.N < 40 || s.Median > 5 || s.P90 > 12 {
		t.Errorf("held out: %+v: want ≥ 40 rows, median ≤ 5%%, P90 ≤ 12%%", s)
	}
}

// TestReadCSVErrors: bad files name the file and line.
// TestInFitTP: the fit set's prefill and decode rows are at TP 1 and 8
// alone, as documented (a TP-2 or TP-4096 row is held out).
func TestInFitTP(t *testing.T) {
	t.Parallel()
	for tp, want := range map[int]bool{1: true, 2: false, 4: false, 8: true, 4096: false} {
		if got := InFit(Row{Kind: Decode, TP: tp, Batch: 1, ContextPerRequest: 1024}); got != want {
			t.Errorf("decode at TP %d: InFit %v, want %v", tp, got, want)
		}
	}
}

func TestReadCSVErrors(t *testing.T) {
	t.Parallel()
	head := "model,tp,layers,kind,prompts,tokens_per_prompt,batch,context_per_request,m,n,k,time_ms\n"
	for _, c := range []struct{ in, want string }{
		{"", "f.csv: empty file"},
		{"model,tp\n", `f.csv:1: missing column "layers"`},
		{head + "llama3.1-8b,1,32,decode,,,x,128,,,,6\n", `f.csv:2: column batch = "x"`},
		{head + "llama3.1-8b,1,32,decode,,,0,128,,,,6\n", "f.csv:2: decode row: expected batch ≥ 1"},
		{head + "llama3.1-8b,1,32,prefill,1,128,,,,,,0\n", "f.csv:2: prefill row: expected time_ms > 0"},
		{head + "gemm,,,gemm,,,,,1,,4096,0.1\n", "f.csv:2: gemm row: expected m, n and k ≥ 1"},
		{head + "x,1,32,train,1,1,,,,,,1\n", `f.csv:2: kind "train"`},
		{head, "f.csv: no rows"},
		{head + "llama3.1-8b,1.9,32,prefill,1,128,,,,,,5\n", `f.csv:2: column tp = "1.9": expected a whole number`},
		{head + "llama3.1-8b,1,32,decode,,,8,999999999999,,,,6\n", `f.csv:2: column context_per_request = "999999999999": expected a whole number`},
		{head + "llama3.1-8b,1,32,prefill,1,128,,,,,,1e300\n", `f.csv:2: time_ms = "1e300": expected a time between 0.001 ms (a microsecond) and 3.6e+06 ms (an hour)`},
		{head + "llama3.1-8b,1,32,prefill,1,128,,,,,,1e-300\n", `f.csv:2: time_ms = "1e-300": expected a time between`},
		{head + "idle,,,idle,,,,,,,,1e300\n", `f.csv:2: time_ms = "1e300"`},
		{"model,tp,layers,kind,prompts,tokens_per_prompt,batch,context_per_request,m,n,k,time_ms,avg_power_w\n" + "llama3.1-8b,1,32,prefill,1,128,,,,,,5,1e9\n", `f.csv:2: column avg_power_w = "1e9": expected at most 10000`},
		{head + "gemm,,,gemm,,,,,1e300,4096,4096,0.1\n", `f.csv:2: column m = "1e300": expected at most 1e+15`},
	} {
		_, err := ReadCSV(strings.NewReader(c.in), "f.csv")
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("ReadCSV(%q) = %v, want an error containing %q", c.in, err, c.want)
		}
	}
}

// TestFitRecovers: a fit on rows the model itself generated (every row of
// kernels.csv's shapes, times from a known Params) recovers those times
// within 1%, so the optimiser, not the model, is not what limits the fit.
func TestFitRecovers(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("a fit: seconds")
	}
	g, _ := hw.Lookup("h100_sxm")
	truth := Params{GEMMCompute: 0.6, GEMMComputeFP8: 0.633178, GEMMMemory: 0.8, Blend: 0.2, GEMMLatencyS: 5e-6,
		AttnCompute: 0.3, KVMemory: 0.75, LayerLatencyS: 30e-6, IterationS: 50e-6}
	synth := denseRows(t, truth, g)
	p, err := Fit(synth, g, Start, func(Row) bool { return true })
	if err != nil {
		t.Fatal(err)
	}
	v := Validate(p, g, synth, func(Row) bool { return true })
	if s := v.FitByKind[Pooled]; s.P90 > 1 {
		t.Errorf("refit on synthetic rows: %+v, want P90 ≤ 1%% (fitted %+v)", s, p)
	}
}

// TestPredictMonotone: the kernel layer never gets faster with more work.
func TestPredictMonotone(t *testing.T) {
	t.Parallel()
	g, _ := hw.Lookup("h100_sxm")
	a, _ := arch.Lookup("deepseek-v3")
	l, err := New(Default, a, g, 8, arch.FP8, arch.FP8)
	if err != nil {
		t.Fatal(err)
	}
	prev := 0.0
	for b := 1; b <= 4096; b *= 2 {
		tm := l.Time(0, 0, 0, b, float64(b)*2048, 1, nil)
		if tm < prev {
			t.Errorf("decode %d: %.4g s < %.4g s at half the batch", b, tm, prev)
		}
		prev = tm
	}
}

// TestExpertParallelImbalance: with whole experts over EP GPUs, an MoE
// layer waits for its busiest GPU — never faster than the balanced
// slicing, never faster with more decodes, the same for a dense model,
// and the gap closing as the batch touches every expert on every GPU.
func TestExpertParallelImbalance(t *testing.T) {
	t.Parallel()
	if z := expectedMaxNormal(8); math.Abs(z-1.4236) > 0.02 {
		t.Errorf("expected maximum of 8 standard normals %.4f, want 1.4236 within Blom's approximation", z)
	}
	if expectedMaxNormal(1) != 0 {
		t.Error("the maximum of one normal should add nothing")
	}
	g, _ := hw.Lookup("h200_sxm")
	a, _ := arch.Lookup("deepseek-v3")
	bal, err := New(Default, a, g, 8, arch.FP8, arch.FP8)
	if err != nil {
		t.Fatal(err)
	}
	ep := bal.WithExpertParallel(8)
	prev, first, last := 0.0, 0.0, 0.0
	for b := 1; b <= 16384; b *= 2 {
		tb, te := bal.Time(0, 0, 0, b, float64(b)*2048, 1, nil), ep.Time(0, 0, 0, b, float64(b)*2048, 1, nil)
		if te < tb {
			t.Errorf("decode %d: %.4g s with EP 8 < %.4g s sliced", b, te, tb)
		}
		if te < prev {
			t.Errorf("decode %d: %.4g s < %.4g s at half the batch", b, te, prev)
		}
		prev = te
		if b == 16 {
			first = te / tb
		}
		last = te / tb
	}
	if !(first > 1.05) || !(last < first) || !(last < 1.02) {
		t.Errorf("EP 8 over sliced: %.3f at 16 decodes, %.3f at 16384: want a gap at small batches that closes", first, last)
	}
	if ep1 := bal.WithExpertParallel(1); ep1.Time(0, 0, 0, 64, 64*2048, 1, nil) != bal.Time(0, 0, 0, 64, 64*2048, 1, nil) {
		t.Error("EP 1 changed the time")
	}
	d, _ := arch.Lookup("llama3.1-70b")
	dl, err := New(Default, d, g, 8, arch.BF16, arch.BF16)
	if err != nil {
		t.Fatal(err)
	}
	if dl.WithExpertParallel(8).Time(0, 0, 0, 64, 64*2048, 1, nil) != dl.Time(0, 0, 0, 64, 64*2048, 1, nil) {
		t.Error("EP changed a dense model's time")
	}
}

// TestNarrowWeightsWithoutTensorCores checks the tensor-core rule: FP4
// weights on an H100 (no FP4 tensor cores) multiply at the BF16 peak and
// fraction, so a compute-bound GEMM takes as long as a BF16 one while a
// weight-bound one reads FP4's bytes; on a B200 FP4 runs at its FP4 peak.
func TestNarrowWeightsWithoutTensorCores(t *testing.T) {
	t.Parallel()
	h, _ := hw.Lookup("h100")
	b, _ := hw.Lookup("b200")
	p := Default
	n, k := 8192.0, 8192.0
	big, small := 65536.0, 1.0
	bf := p.GEMMTime(h, arch.BF16, big, n, k, 1)
	fp4 := p.GEMMTime(h, arch.FP4, big, n, k, 1)
	if math.Abs(fp4/bf-1) > 0.01 {
		t.Errorf("H100 compute-bound GEMM: fp4 %.3g s against bf16 %.3g s, want equal (weight-only FP4)", fp4, bf)
	}
	if fp8 := p.GEMMTime(h, arch.FP8, big, n, k, 1); !(fp8 < 0.7*fp4) {
		t.Errorf("H100 compute-bound GEMM: fp8 %.3g s not faster than weight-only fp4 %.3g s", fp8, fp4)
	}
	if w4, w16 := p.GEMMTime(h, arch.FP4, small, n, k, 1), p.GEMMTime(h, arch.BF16, small, n, k, 1); !(w4 < 0.4*w16) {
		t.Errorf("H100 weight-bound GEMM: fp4 %.3g s against bf16 %.3g s, want FP4's bytes", w4, w16)
	}
	if b4, b8 := p.GEMMTime(b, arch.FP4, big, n, k, 1), p.GEMMTime(b, arch.FP8, big, n, k, 1); !(b4 < 0.6*b8) {
		t.Errorf("B200 compute-bound GEMM: fp4 %.3g s against fp8 %.3g s, want the FP4 peak", b4, b8)
	}
}

// TestSparseAttentionLayer: GLM-5's sparse attention in the kernel layer.
// A prompt token attends to the whole top-k window however few tokens
// precede it (the sparse prefill kernel pads its indices: measured time
// per query flat from 32 to 16,384 tokens), so the prompt attention of
// short prompts grows with their tokens, not their pairs; a decode reads
// the latent of at most the window per request, so past it only the
// indexer's keys grow with the context; each layer pays the indexer's
// fixed kernel time.
func TestSparseAttentionLayer(t *testing.T) {
	t.Parallel()
	g, _ := hw.Lookup("b200")
	a, err := arch.Lookup("glm-5")
	if err != nil {
		t.Fatal(err)
	}
	dense := a
	dense.IndexTopK, dense.IndexHeads, dense.IndexHeadDim = 0, 0, 0
	l, err := New(Default, a, g, 8, arch.FP8, arch.FP8)
	if err != nil {
		t.Fatal(err)
	}
	dl, err := New(Default, dense, g, 8, arch.FP8, arch.FP8)
	if err != nil {
		t.Fatal(err)
	}
	attn := func(l *Layer, pt int) float64 {
		var bd Breakdown
		l.Time(pt, 1, float64(pt)*float64(pt+1)/2, 0, 0, 1, &bd)
		return bd.Terms[2][0] // the attention's compute seconds
	}
	for _, pt := range []int{256, 1024, 8192} {
		pairs := float64(pt) * float64(pt+1) / 2
		if got, want := attn(l, pt), pairs*l.pairFull+float64(pt)*2048*l.pairWin; math.Abs(got-want) > 1e-9*want {
			t.Errorf("a %d-token prompt's attention compute %.4g s, want %.4g: the indexer over its pairs, the latent over 2,048 tokens a query", pt, got, want)
		}
	}
	if l.pairFull <= 0 || l.pairWin <= 0 {
		t.Fatalf("pair times %g, %g", l.pairFull, l.pairWin)
	}
	if r := attn(dl, 1024) / attn(dl, 256); r < 15 {
		t.Errorf("the dense twin's grows with the pairs: %.2f×, want about 16", r)
	}
	decode := func(l *Layer, ctx float64) float64 { return l.Time(0, 0, 0, 8, 8*ctx, 1, nil) }
	sparseGrow, denseGrow := decode(l, 65536)-decode(l, 4096), decode(dl, 65536)-decode(dl, 4096)
	if !(sparseGrow > 0) || sparseGrow > denseGrow/3 {
		t.Errorf("decoding 8 requests from 4,096 to 65,536 tokens of context: sparse +%.3g s, dense +%.3g s; want the sparse growth positive and a fraction of the dense", sparseGrow, denseGrow)
	}
	if d := decode(l, 1024) - decode(dl, 1024); d < float64(a.Layers)*(dsaLayerS+3*Default.GEMMLatencyS) {
		t.Errorf("a short decode's sparse layers cost %.3g s more than dense ones, want at least the indexer's fixed kernels, %.3g s", d, float64(a.Layers)*(dsaLayerS+3*Default.GEMMLatencyS))
	}
}
