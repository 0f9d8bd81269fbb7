package memory

import (
	"errors"
	"math"
	"strings"
	"testing"

	"splitplan/arch"
	"splitplan/hw"
)

func lookup(t *testing.T, model, gpu string) (arch.Arch, hw.GPU) {
	t.Helper()
	a, err := arch.Lookup(model)
	if err != nil {
		t.Fatal(err)
	}
	g, err := hw.Lookup(gpu)
	if err != nil {
		t.Fatal(err)
	}
	return a, g
}

// The configurations issue 28 names cannot load their weights, and the
// error gives the sizes.
func TestRefusals(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		model, gpu string
		tp         int
		p          arch.Precision
		weightsGiB float64 // per GPU
	}{
		{"deepseek-r1", "h100", 8, arch.FP8, 79.1}, // DeepSeek-R1 FP8 on 8 × 80 GB (q_a and kv_a whole on every GPU)
		{"llama3.1-70b", "h200", 1, arch.BF16, 131.4},
		{"mixtral-8x7b", "l40s", 2, arch.BF16, 43.5},
	} {
		a, g := lookup(t, tc.model, tc.gpu)
		b, err := Plan(ForArch(a, g, tc.tp, tc.p, tc.p.KVCache()), Settings{})
		var nf *WeightsDoNotFitError
		if !errors.As(err, &nf) || !errors.Is(err, ErrNoFit) {
			t.Fatalf("%s on %s·tp%d: err %v, want WeightsDoNotFitError", tc.model, tc.gpu, tc.tp, err)
		}
		if b.Tokens != 0 || math.Abs(nf.WeightsGiB-tc.weightsGiB) > 0.1 || nf.UsableGiB >= nf.WeightsGiB {
			t.Errorf("%s on %s·tp%d: %+v, %d tokens", tc.model, tc.gpu, tc.tp, nf, b.Tokens)
		}
		if msg := err.Error(); !strings.Contains(msg, "GiB per GPU") || !strings.Contains(msg, tc.model) {
			t.Errorf("message %q", msg)
		}
	}
	// The same models fit where they are served in practice.
	for _, tc := range []struct {
		model, gpu string
		tp         int
		p          arch.Precision
	}{{"deepseek-r1", "h200", 8, arch.FP8}, {"llama3.1-70b", "h200", 2, arch.BF16}, {"mixtral-8x7b", "l40s", 4, arch.BF16}} {
		a, g := lookup(t, tc.model, tc.gpu)
		if b, err := Plan(ForArch(a, g, tc.tp, tc.p, tc.p.KVCache()), Settings{}); err != nil || b.Tokens < 16384 {
			t.Errorf("%s on %s·tp%d: %d tokens, %v", tc.model, tc.gpu, tc.tp, b.Tokens, err)
		}
	}
}

// More of the memory to the engine never holds fewer tokens, and the
// split adds up: usable = HBM × utilization − reserve, KV = usable − weights.
func TestMonotoneInUtilization(t *testing.T) {
	t.Parallel()
	a, g := lookup(t, "llama3.1-70b", "h100")
	prev := int64(-1)
	for u := 0.5; u <= 1.0001; u += 0.05 {
		b, err := Plan(ForArch(a, g, 4, arch.BF16, arch.BF16), Settings{Utilization: math.Min(u, 1)})
		if err != nil && !errors.Is(err, ErrNoFit) {
			t.Fatal(err)
		}
		if b.Tokens < prev {
			t.Errorf("utilization %.2f: %d tokens < %d", u, b.Tokens, prev)
		}
		if err == nil && math.Abs(b.Usable-(b.HBM*math.Min(u, 1)-b.Reserve)) > 1 || err == nil && math.Abs(b.KV-(b.Usable-b.Weights)) > 1 {
			t.Errorf("utilization %.2f: split %+v does not add up", u, b)
		}
		prev = b.Tokens
	}
	if prev <= 0 {
		t.Fatal("70B on 4 × H100 at utilization 1 holds no tokens")
	}
	// A larger batch-token limit reserves more.
	small, _ := Plan(ForArch(a, g, 4, arch.BF16, arch.BF16), Settings{MaxBatchedTokens: 2048})
	large, _ := Plan(ForArch(a, g, 4, arch.BF16, arch.BF16), Settings{MaxBatchedTokens: 32768})
	if !(small.Reserve < large.Reserve && small.Tokens > large.Tokens) {
		t.Errorf("reserve %v (2k tokens) vs %v (32k): tokens %d vs %d", small.Reserve, large.Reserve, small.Tokens, large.Tokens)
	}
	for _, bad := range []Settings{{Utilization: 1.5}, {Utilization: -0.1}, {Utilization: math.NaN()}, {MaxBatchedTokens: -1}} {
		if _, err := Plan(ForArch(a, g, 4, arch.BF16, arch.BF16), bad); err == nil || errors.Is(err, ErrNoFit) {
			t.Errorf("settings %+v accepted", bad)
		}
	}
}

// An MLA latent is whole on every GPU: at tp 8 each GPU keeps the
// whole model's per-token cache, so 8 GPUs hold about as many tokens as
// one GPU's free memory allows, not 8 times as many.
func TestMLAReplication(t *testing.T) {
	t.Parallel()
	a, g := lookup(t, "deepseek-r1", "h200")
	r := ForArch(a, g, 8, arch.FP8, arch.FP8)
	if want := float64(a.KVBytesPerToken(arch.FP8)); math.Abs(r.KVBytesPerTokenPerGPU-want) > 1 {
		t.Errorf("MLA per GPU at tp8: %v bytes per token, want the whole %v", r.KVBytesPerTokenPerGPU, want)
	}
	b, err := Plan(r, Settings{})
	if err != nil {
		t.Fatal(err)
	}
	if want := int64(b.KV / float64(a.KVBytesPerToken(arch.FP8))); b.Tokens != want {
		t.Errorf("tokens %d, want %d", b.Tokens, want)
	}
	// Grouped-query heads: 8 kv heads over tp 16 keep one per GPU.
	l, _ := lookup(t, "llama3.1-70b", "h100")
	r8, r16 := ForArch(l, g, 8, arch.BF16, arch.BF16), ForArch(l, g, 16, arch.BF16, arch.BF16)
	if r8.KVBytesPerTokenPerGPU != r16.KVBytesPerTokenPerGPU || r8.KVBytesPerTokenPerGPU*8 != float64(l.KVBytesPerToken(arch.BF16)) {
		t.Errorf("kv heads < tp: %v per GPU at tp8, %v at tp16", r8.KVBytesPerTokenPerGPU, r16.KVBytesPerTokenPerGPU)
	}
}

// fp8 weights take half the bytes of bf16 ones, and fp8 KV half the
// per-token cache, so more tokens fit.
func TestFP8Halves(t *testing.T) {
	t.Parallel()
	a, g := lookup(t, "llama3.1-70b", "h200")
	bf, fp := ForArch(a, g, 2, arch.BF16, arch.BF16), ForArch(a, g, 2, arch.FP8, arch.FP8)
	emb := 2 * 2 * float64(a.EmbeddingParams()) // embedding and head stay bf16
	if got := (fp.WeightBytes - emb) / (bf.WeightBytes - emb); math.Abs(got-0.5) > 1e-6 {
		t.Errorf("fp8 / bf16 weights (embeddings aside) = %v, want 0.5", got)
	}
	if fp.KVBytesPerTokenPerGPU*2 != bf.KVBytesPerTokenPerGPU {
		t.Errorf("fp8 KV %v vs bf16 %v per token", fp.KVBytesPerTokenPerGPU, bf.KVBytesPerTokenPerGPU)
	}
	b1, err1 := Plan(bf, Settings{})
	b2, err2 := Plan(fp, Settings{})
	if err1 != nil || err2 != nil || b2.Tokens < 2*b1.Tokens {
		t.Errorf("tokens bf16 %d (%v), fp8 %d (%v)", b1.Tokens, err1, b2.Tokens, err2)
	}
}

// A model with no per-token cache is bounded, not divided by zero.
func TestNoCache(t *testing.T) {
	t.Parallel()
	b, err := Plan(Replica{Model: "m", GPU: "g", HBMBytes: 80 * GiB, TP: 1, WeightBytes: 1e9}, Settings{})
	if err != nil || b.Tokens != 1<<62 {
		t.Errorf("%d tokens, %v", b.Tokens, err)
	}
}

// TensorRT-LLM's rule (a fraction of the memory free after the weights)
// leaves a tightly packed replica far more cache than a share of the whole
// device does: DeepSeek-R1 fp8 on 4 × B200 keeps 5 GiB per GPU at 0.9 of
// the device, 18 GiB at 0.9 of what is free. The fraction orders the
// tokens, and the weights still have to fit with room to spare.
func TestFreeFraction(t *testing.T) {
	t.Parallel()
	a, g := lookup(t, "deepseek-r1", "b200")
	r := ForArch(a, g, 4, arch.FP8, arch.FP8)
	device, err1 := Plan(r, Settings{})
	free, err2 := Plan(r, Settings{FreeFraction: DefaultFreeFraction})
	if err1 != nil || err2 != nil {
		t.Fatal(err1, err2)
	}
	if want := 0.9 * (free.HBM - free.Reserve - free.Weights); math.Abs(free.KV-want) > 1 || !(free.KV > 3*device.KV) {
		t.Errorf("free-fraction KV %.1f GiB (want %.1f), device-share KV %.1f GiB", free.KV/GiB, want/GiB, device.KV/GiB)
	}
	half, _ := Plan(r, Settings{FreeFraction: 0.5})
	if !(half.Tokens < free.Tokens) {
		t.Errorf("fraction 0.5 holds %d tokens, 0.9 %d", half.Tokens, free.Tokens)
	}
	h, _ := hw.Lookup("h100")
	if b, err := Plan(ForArch(a, h, 8, arch.FP8, arch.FP8), Settings{FreeFraction: 0.9}); err == nil && b.Tokens >= 16384 {
		t.Errorf("DeepSeek-R1 on 8 × H100 under TensorRT-LLM's rule: %d tokens, want (almost) none", b.Tokens)
	}
	if _, err := Plan(r, Settings{FreeFraction: 1.2}); err == nil {
		t.Error("fraction 1.2 accepted")
	}
}

// TestStaticFraction: SGLang's mem_fraction_static holds the weights and
// the cache; the activation reserve lies outside it.
func TestStaticFraction(t *testing.T) {
	t.Parallel()
	a, g := lookup(t, "deepseek-r1", "b200")
	r := ForArch(a, g, 4, arch.FP8, arch.FP8)
	b, err := Plan(r, Settings{StaticFraction: 0.95})
	if err != nil {
		t.Fatal(err)
	}
	if want := 0.95*b.HBM - b.Weights; math.Abs(b.KV-want) > 1 || !(b.Reserve > 0) {
		t.Errorf("static fraction 0.95: KV %.2f GiB, want %.2f (reserve %.2f GiB outside it)", b.KV/GiB, want/GiB, b.Reserve/GiB)
	}
	lower, err := Plan(r, Settings{StaticFraction: 0.9})
	if err != nil {
		t.Fatal(err)
	}
	if !(lower.Tokens < b.Tokens) {
		t.Errorf("fraction 0.9 holds %d tokens, 0.95 %d", lower.Tokens, b.Tokens)
	}
	// Below the weights: refused with the sizes.
	var wd *WeightsDoNotFitError
	if _, err := Plan(r, Settings{StaticFraction: 0.5}); !errors.As(err, &wd) {
		t.Errorf("fraction 0.5 below the weights: %v", err)
	}
	if _, err := Plan(r, Settings{StaticFraction: -0.1}); err == nil {
		t.Error("fraction -0.1 accepted")
	}
}

// TestRecurrentState: a model with linear-attention layers holds, beside
// its weights, one recurrent state per running sequence for up to
// ProfiledSequences of them, which the cache does not get: Qwen3.5's 45
// Gated DeltaNet layers keep 45 × 8 value heads × 128 × 128 bf16 values a
// sequence on each GPU at TP 8. A state too large to fit says so.
func TestRecurrentState(t *testing.T) {
	t.Parallel()
	a, g := lookup(t, "qwen3.5-397b-a17b", "b200_sxm")
	r := ForArch(a, g, 8, arch.FP8, arch.FP8)
	if want := 45.0 * 8 * 128 * 128 * 2; r.StateBytesPerSequence != want {
		t.Fatalf("state %g bytes a sequence per GPU, want %g", r.StateBytesPerSequence, want)
	}
	with, err := Plan(r, Settings{})
	if err != nil {
		t.Fatal(err)
	}
	bare := r
	bare.StateBytesPerSequence = 0
	without, err := Plan(bare, Settings{})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := without.KV-with.KV, float64(ProfiledSequences)*r.StateBytesPerSequence; math.Abs(got-want) > 1 || with.State != want || !(with.Tokens < without.Tokens) {
		t.Errorf("the states take %.2f GiB from the cache (budget %.2f GiB), want %.2f GiB; tokens %d against %d", got/GiB, with.State/GiB, want/GiB, with.Tokens, without.Tokens)
	}
	big := r
	big.StateBytesPerSequence = 1 * GiB
	_, err = Plan(big, Settings{})
	var nf *WeightsDoNotFitError
	if !errors.As(err, &nf) || !strings.Contains(err.Error(), "recurrent states of 256 sequences") {
		t.Errorf("a state of 1 GiB a sequence: error %v, want one naming the states", err)
	}
	dense, _ := lookup(t, "llama3.1-8b", "h100_sxm")
	if s := dense.RecurrentStateBytesPerGPU(1); s != 0 {
		t.Errorf("a model without linear attention keeps %g bytes of state", s)
	}
}
