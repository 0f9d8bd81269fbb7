package arch

import (
	"math"
	"strings"
	"testing"
)

func mustLookup(t *testing.T, name string) Arch {
	t.Helper()
	a, err := Lookup(name)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func within(t *testing.T, what string, got, want, rel float64) {
	t.Helper()
	if math.Abs(got-want) > rel*want {
		t.Errorf("%s = %.4g, want %.4g within %.1f%%", what, got, want, 100*rel)
	}
}

// TestHandChecked compares derived figures with numbers worked out by hand
// and with the parameter counts the model cards publish.
func TestHandChecked(t *testing.T) {
	t.Parallel()
	// Llama-3.1-70B: attention 8192×128×(2×64+2×8) = 150,994,944; FFN
	// 3×8192×28672 = 704,643,072; ×80 layers = 68.45e9; embeddings
	// 2×128256×8192 = 2.10e9 (untied): 70.55e9 (card: 70.6e9; norms
	// ignored). KV: 2×80×8×128×2 B = 327,680 B/token.
	l := mustLookup(t, "llama3.1-70b")
	if got, want := l.TotalParams(), int64(80*(150994944+704643072)+2*128256*8192); got != want {
		t.Errorf("llama3.1-70b params = %d, want %d", got, want)
	}
	within(t, "llama3.1-70b params", float64(l.TotalParams()), 70.6e9, 0.01)
	if got := l.KVBytesPerToken(BF16); got != 327680 {
		t.Errorf("llama3.1-70b KV bytes/token = %d, want 327,680", got)
	}
	if got := l.KVBytesPerToken(FP8); got != 163840 {
		t.Errorf("llama3.1-70b fp8 KV bytes/token = %d, want 163,840", got)
	}

	// DeepSeek-V3: MLA attention per layer 7168×1536 + 1536×128×192 +
	// 7168×576 + 512×128×256 + 128×128×7168 = 187,105,280; ×61 = 11.41e9;
	// dense FFN 3 layers × 3×7168×18432 = 1.19e9; 58 MoE layers × (257
	// experts × 3×7168×2048 + router 7168×256) = 656.5e9; embeddings
	// 2×129280×7168 = 1.85e9: 671e9 total. Active: 11.41 + 1.19 + 58 ×
	// 9 × 44.04e6 (+ router) + 0.93 (head) ≈ 36.5e9 (card: 37e9, which
	// also counts the input embedding, 0.93e9). KV: 61 × (512+64) × 2 B.
	d := mustLookup(t, "deepseek-v3")
	if got := d.AttentionParamsPerLayer(); got != 187105280 {
		t.Errorf("deepseek-v3 attention params/layer = %d, want 187,105,280", got)
	}
	within(t, "deepseek-v3 params", float64(d.TotalParams()), 671e9, 0.01)
	within(t, "deepseek-v3 active", float64(d.ActiveParams()), 37e9, 0.03)
	if got := d.KVBytesPerToken(BF16); got != 70272 {
		t.Errorf("deepseek-v3 KV bytes/token = %d, want 61×576×2 = 70,272", got)
	}

	// BLOOM-176B: KV 2×70×14336×2 B = 4,014,080; params 70 × (4×14336² +
	// 8×14336²) + 250880×14336 (tied) = 176.2e9 (card 176.2e9 with biases
	// and norms, 0.03%).
	b := mustLookup(t, "bloom-176b")
	if got := b.KVBytesPerToken(BF16); got != 4014080 {
		t.Errorf("bloom-176b KV bytes/token = %d, want 4,014,080", got)
	}
	within(t, "bloom-176b params", float64(b.TotalParams()), 176.2e9, 0.005)

	// Qwen3-235B-A22B: 94 × (4096×128×136 + 128 × 3×4096×1536 + router)
	// + 2×151936×4096 = 235.1e9; active 94 × (71.3e6 + 8×18.87e6) + 0.62e9
	// ≈ 21.7e9 (card: 22e9; q/k norms ignored).
	q := mustLookup(t, "Qwen/Qwen3-235B-A22B-FP8")
	within(t, "qwen3-235b params", float64(q.TotalParams()), 235e9, 0.01)
	within(t, "qwen3-235b active", float64(q.ActiveParams()), 22e9, 0.03)

	// gpt-oss-120b: card 116.83e9 total, 5.13e9 active (attention sinks
	// and biases, about 0.1%, ignored here).
	g := mustLookup(t, "gpt-oss-120b")
	within(t, "gpt-oss params", float64(g.TotalParams()), 116.83e9, 0.01)
	within(t, "gpt-oss active", float64(g.ActiveParams()), 5.13e9, 0.02)
	// Half its layers slide over 128 tokens: at 1000 tokens of context
	// the cache is 18×1000 + 18×128 token-layers of 2×8×64×2 B.
	if got, want := g.KVBytesForContext(BF16, 1000), int64((18*1000+18*128)*2*8*64*2); got != want {
		t.Errorf("gpt-oss KV for 1000 tokens = %d, want %d", got, want)
	}

	// Llama2-70B: 68.7e9 (card 69e9).
	within(t, "llama2-70b params", float64(mustLookup(t, "llama2-70b").TotalParams()), 68.98e9, 0.01)
	// Mixtral-8x7B: 46.7e9 total, 12.9e9 active.
	m := mustLookup(t, "mixtral-8x7b")
	within(t, "mixtral params", float64(m.TotalParams()), 46.7e9, 0.01)
	within(t, "mixtral active", float64(m.ActiveParams()), 12.9e9, 0.02)
}

func TestWeightBytes(t *testing.T) {
	t.Parallel()
	l := mustLookup(t, "llama3.1-70b")
	emb := 2 * float64(l.EmbeddingParams())
	non := float64(l.NonEmbeddingParams())
	for _, c := range []struct {
		p    Precision
		want float64
	}{{BF16, 2 * (non + emb)}, {FP8, non + 2*emb}, {FP4, non*0.5625 + 2*emb}} {
		if got := float64(l.WeightBytes(c.p)); math.Abs(got-c.want) > 1 {
			t.Errorf("WeightBytes(%v) = %.0f, want %.0f", c.p, got, c.want)
		}
	}
}

func TestKVPerGPU(t *testing.T) {
	t.Parallel()
	l := mustLookup(t, "llama3.1-70b")
	for _, c := range []struct {
		tp   int
		want float64
	}{{1, 327680}, {2, 163840}, {8, 40960}, {16, 40960}} { // 8 KV heads: replicated beyond tp 8
		full, win := l.KVBytesPerTokenPerGPU(BF16, c.tp)
		if full != c.want || win != 0 {
			t.Errorf("tp %d: KV/GPU = %v, %v; want %v, 0", c.tp, full, win, c.want)
		}
	}
	d := mustLookup(t, "deepseek-v3")
	if full, _ := d.KVBytesPerTokenPerGPU(BF16, 8); full != 70272 {
		t.Errorf("MLA latent is replicated: KV/GPU at tp 8 = %v, want 70,272", full)
	}
}

func TestFLOPs(t *testing.T) {
	t.Parallel()
	l := mustLookup(t, "llama3.1-70b")
	full, win := l.AttentionFLOPsPerContextToken()
	if full != 4*80*64*128 || win != 0 {
		t.Errorf("attention FLOPs/context token = %v, %v", full, win)
	}
	if got, want := l.FLOPsPerToken(1000), 2*float64(l.ActiveParams())+1000*full; got != want {
		t.Errorf("FLOPsPerToken(1000) = %v, want %v", got, want)
	}
	d := mustLookup(t, "deepseek-v3")
	if full, _ := d.AttentionFLOPsPerContextToken(); full != 61*2*128*(128+64+128) {
		t.Errorf("MLA attention FLOPs/context token = %v", full)
	}
}

func TestLookup(t *testing.T) {
	t.Parallel()
	want := map[string]string{
		"llama3.1-70b": "llama3.1-70b", "Llama3.1-8B": "llama3.1-8b", "llama3.1-405b": "llama3.1-405b",
		"qwen3-32b": "qwen3-32b", "qwen3-8b": "qwen3-8b", "qwen3-30b-a3b": "qwen3-30b-a3b",
		"qwen3-235b-a22b": "qwen3-235b-a22b", "qwen3.5-397b-a17b": "qwen3.5-397b-a17b",
		"deepseek-v3": "deepseek-v3", "deepseek-r1": "deepseek-r1", "kimi-k2.5": "kimi-k2.5",
		"gpt-oss-120b": "gpt-oss-120b", "minimax-m2.5": "minimax-m2.5", "mixtral-8x7b": "mixtral-8x7b",
		"bloom-176b": "bloom-176b", "bloom": "bloom-176b", "llama2-70b": "llama2-70b",
		"meta-llama/Llama-2-70b-hf": "llama2-70b", "meta-llama/Llama-3.1-70B": "llama3.1-70b",
		"nvidia/DeepSeek-R1-NVFP4": "deepseek-r1", "nvidia/Llama-3.1-8B-Instruct-FP8": "llama3.1-8b",
		"nvidia/Qwen3-32B-NVFP4": "qwen3-32b", "nvidia/DeepSeek-V3.1-NVFP4": "deepseek-v3.1",
		"Qwen/Qwen3-235B-A22B-FP8": "qwen3-235b-a22b", "Qwen/Qwen3-235B-A22B": "qwen3-235b-a22b",
		"meta-llama/Meta-Llama-3.1-405B": "llama3.1-405b", "openai/gpt-oss-120b": "gpt-oss-120b",
	}
	for in, name := range want {
		a, err := Lookup(in)
		if err != nil {
			t.Errorf("Lookup(%q): %v", in, err)
			continue
		}
		if a.Name != name {
			t.Errorf("Lookup(%q) = %s, want %s", in, a.Name, name)
		}
	}
	_, err := Lookup("gpt-5")
	if err == nil || !strings.Contains(err.Error(), "llama3.1-70b") || !strings.Contains(err.Error(), "gpt-5") {
		t.Errorf("unknown name: error %v should name it and list the built-ins", err)
	}
	names := Names()
	for i := 1; i < len(names); i++ {
		if names[i-1] >= names[i] {
			t.Errorf("Names not sorted and unique: %v", names)
		}
	}
	if len(names) != 18 {
		t.Errorf("got %d built-ins, want 18 (15 distinct in models.csv + bloom + llama2 + glm-5): %v", len(names), names)
	}
	for _, a := range Builtin() {
		if err := a.Validate(); err != nil {
			t.Error(err)
		}
	}
}

func TestPrecision(t *testing.T) {
	t.Parallel()
	for s, want := range map[string]Precision{"bf16": BF16, "FP16": BF16, "fp8": FP8, "fp8_block": FP8,
		"fp4": FP4, "nvfp4": FP4, "mxfp4": FP4, "int4_wo": INT4, "int4": INT4} {
		var p Precision
		if err := p.UnmarshalText([]byte(s)); err != nil || p != want {
			t.Errorf("UnmarshalText(%q) = %v, %v; want %v", s, p, err, want)
		}
		b, err := p.MarshalText()
		if err != nil {
			t.Fatal(err)
		}
		if q, err := ParsePrecision(string(b)); err != nil || q != p {
			t.Errorf("round trip of %v: %v, %v", p, q, err)
		}
	}
	if _, err := ParsePrecision("fp6"); err == nil || !strings.Contains(err.Error(), "fp6") {
		t.Errorf("ParsePrecision(fp6): %v", err)
	}
	if INT4.Compute() != BF16 || FP4.Compute() != FP4 {
		t.Error("INT4 computes in bf16, FP4 in fp4")
	}
	if !(FP4.BytesPerValue() < FP8.BytesPerValue() && FP8.BytesPerValue() < BF16.BytesPerValue()) {
		t.Error("bytes per value not ordered")
	}
}

// TestAttentionParamsPerGPU checks the attention weights each GPU holds:
// all of them at tp 1, a 1/tp share when everything shards (Llama-3.1-70B
// at tp 8: 8 KV heads), the K and V projections of one whole KV head each
// when KV heads < tp (Qwen3-235B, 4 KV heads, at tp 8), MLA's q_a and kv_a
// whole on every GPU (DeepSeek-V3), and WeightBytesPerGPU adding exactly
// that excess per layer.
func TestAttentionParamsPerGPU(t *testing.T) {
	t.Parallel()
	for _, name := range []string{"llama3.1-70b", "qwen3-235b-a22b", "deepseek-r1", "kimi-k2.5", "gpt-oss-120b", "mixtral-8x7b"} {
		a := mustLookup(t, name)
		all := float64(a.AttentionParamsPerLayer())
		if got := a.AttentionParamsPerGPU(1); math.Abs(got-all) > 1e-6*all {
			t.Errorf("%s tp 1: %v per GPU, want all %v", name, got, all)
		}
		for _, tp := range []int{2, 4, 8} {
			got := a.AttentionParamsPerGPU(tp)
			if got < all/float64(tp)-1e-6*all || got > all {
				t.Errorf("%s tp %d: %v per GPU outside [all/tp, all] = [%v, %v]", name, tp, got, all/float64(tp), all)
			}
			wb := a.WeightBytesPerGPU(FP8, tp)
			want := float64(a.WeightBytes(FP8))/float64(tp) + float64(a.Layers)*(got-all/float64(tp))
			if math.Abs(wb-want) > 1e-9*want {
				t.Errorf("%s tp %d: WeightBytesPerGPU %v, want %v", name, tp, wb, want)
			}
		}
	}
	h, d := 8192.0, 128.0
	if got, want := mustLookup(t, "llama3.1-70b").AttentionParamsPerGPU(8), h*d*(2*64+2*8)/8; got != want {
		t.Errorf("llama3.1-70b tp 8: %v, want %v (everything sharded)", got, want)
	}
	q := mustLookup(t, "qwen3-235b-a22b")
	qh, qd := float64(q.Hidden), float64(q.HeadDimOrDefault())
	if got, want := q.AttentionParamsPerGPU(8), qh*qd*2*float64(q.Heads)/8+qh*qd*2; got != want {
		t.Errorf("qwen3-235b tp 8: %v, want %v (one whole KV head per GPU)", got, want)
	}
	ds := mustLookup(t, "deepseek-r1")
	whole := float64(ds.Hidden) * float64(ds.QLoraRank+ds.KVLoraRank+ds.QKRopeHeadDim)
	if got, want := ds.AttentionParamsPerGPU(8), (float64(ds.AttentionParamsPerLayer())-whole)/8+whole; math.Abs(got-want) > 1 {
		t.Errorf("deepseek-r1 tp 8: %v, want %v (q_a and kv_a whole)", got, want)
	}
}

// TestSparseAttention: DeepSeek sparse attention (GLM-5) caches every
// token's latent and indexer key, reads the latent of at most IndexTopK
// tokens a query (the windowed part) and the indexer keys of all of them
// (full), scores every token with the indexer (whole on every GPU) and
// attends to IndexTopK in the absorbed form (split over the group); a
// dense twin attends to everything.
func TestSparseAttention(t *testing.T) {
	t.Parallel()
	g := mustLookup(t, "glm-5")
	dense := g
	dense.IndexTopK, dense.IndexHeads, dense.IndexHeadDim = 0, 0, 0
	latent := 78 * 576 * 2.0 // bf16
	if got, want := g.KVBytesPerToken(BF16), int64(latent+78*132); got != want {
		t.Errorf("KV bytes per token %d, want %d (latent + indexer key of 128 fp8 values and a scale)", got, want)
	}
	if got, want := g.KVBytesForContext(BF16, 100000), int64(100000*(latent+78*132)); got != want {
		t.Errorf("KV bytes of a 100,000-token context %d, want %d: every token is cached", got, want)
	}
	for _, tp := range []int{1, 8} {
		full, win := g.KVBytesPerTokenPerGPU(FP8, tp)
		if full != 78*132 || win != 78*576 {
			t.Errorf("tp %d: KV bytes per GPU %g read of every token, %g of the window; want %d and %d", tp, full, win, 78*132, 78*576)
		}
		f, w := g.AttentionFLOPsPerContextTokenPerGPU(tp)
		if wantF, wantW := 78*2*32*128.0, 78*2*64*(2*512+64)/float64(tp); f != wantF || w != wantW {
			t.Errorf("tp %d: attention FLOPs per context token %g (indexer) and %g (latent), want %g and %g", tp, f, w, wantF, wantW)
		}
	}
	if g.AttentionWindow() != 2048 || dense.AttentionWindow() != 0 {
		t.Errorf("attention windows %d and %d, want 2048 and 0", g.AttentionWindow(), dense.AttentionWindow())
	}
	if sw := mustLookup(t, "gpt-oss-120b"); !g.AttentionWindowPadded() || dense.AttentionWindowPadded() || sw.AttentionWindow() == 0 || sw.AttentionWindowPadded() {
		t.Errorf("padded windows: sparse %v, dense %v, sliding window %v; want only the sparse one", g.AttentionWindowPadded(), dense.AttentionWindowPadded(), sw.AttentionWindowPadded())
	}
	// Beyond the window the sparse model's attention FLOPs grow by the
	// indexer's alone.
	grow := g.FLOPsPerToken(65536) - g.FLOPsPerToken(4096)
	if want := 78 * 2 * 32 * 128.0 * (65536 - 4096); math.Abs(grow-want) > 1e-6*want {
		t.Errorf("FLOPs from 4,096 to 65,536 tokens of context grow by %g, want %g (the indexer's)", grow, want)
	}
	if dense.FLOPsPerToken(65536)-dense.FLOPsPerToken(4096) <= 2*grow {
		t.Errorf("the dense twin's attention should grow much faster")
	}
	if g.ReplicatedWeightBytes(BF16, 8) <= dense.ReplicatedWeightBytes(BF16, 8) {
		t.Errorf("the indexer's weights are held whole on every GPU")
	}
	bad := g
	bad.KVLoraRank = 0
	if err := bad.Validate(); err == nil || !strings.Contains(err.Error(), "index_topk") {
		t.Errorf("sparse attention without latent attention: %v", err)
	}
	bad = dense
	bad.IndexHeads = 32
	if err := bad.Validate(); err == nil || !strings.Contains(err.Error(), "index_topk") {
		t.Errorf("indexer heads without a top-k: %v", err)
	}
}
