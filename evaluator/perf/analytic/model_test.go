package analytic

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"splitplan/arch"
	"splitplan/evaluator/perf/kernel"
	"splitplan/hw"
	"splitplan/memory"
)

// configs returns every built-in arch × GPU × TP in {1, 2, 4, 8} whose
// bf16 weights fit (or, when none fits on that GPU, fp4 weights).
func configs(t *testing.T) []Config {
	t.Helper()
	var out []Config
	for _, a := range arch.Builtin() {
		for _, g := range hw.Builtin() {
			for _, tp := range []int{1, 2, 4, 8} {
				for _, w := range []arch.Precision{arch.BF16, arch.FP4} {
					eff := DefaultEfficiency
					eff.ScoreBytes = 8
					eff.FlatLatency = 0.5
					eff.ExpertCompute = 0.15
					eff.LayerOverheadS = 30e-6
					eff.CommLarge, eff.LargeMessageMiB = 0.2, 24
					eff.PromptOverheadS = 5e-3
					m, err := New(Config{Arch: a, GPU: g, TP: tp, Weights: w, KV: w, Eff: eff})
					if err != nil {
						if !strings.Contains(err.Error(), "weights need") {
							t.Fatal(err)
						}
						continue
					}
					out = append(out, m.Config())
					break
				}
			}
		}
	}
	if len(out) < 100 {
		t.Fatalf("only %d configurations fit", len(out))
	}
	return out
}

func randBatch(r *rand.Rand) Batch {
	var b Batch
	if r.IntN(3) > 0 {
		b.Prompts = 1 + r.IntN(8)
		per := 1 + r.IntN(8192)
		b.PromptTokens = b.Prompts * per
		b.PromptAttnPairs = float64(b.Prompts) * AttnPairs(per, r.IntN(4096))
	}
	if r.IntN(3) > 0 || b.PromptTokens == 0 {
		b.Decodes = 1 + r.IntN(256)
		b.DecodeContextTokens = int64(b.Decodes) * int64(1+r.IntN(32768))
	}
	return b
}

func finitePositive(t *testing.T, what string, s float64) {
	t.Helper()
	if !(s > 0) || math.IsInf(s, 0) {
		t.Fatalf("%s = %v: expected a positive finite time", what, s)
	}
}

// TestPhysical checks, over every built-in configuration and random
// batches, that more work never takes less time, a batch takes at least as
// long as each of its parts alone, and every time is finite and positive.
func TestPhysical(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(1, 2))
	for _, cfg := range configs(t) {
		m, err := New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		name := cfg.Arch.Name + "/" + cfg.GPU.Name
		for range 40 {
			b := randBatch(r)
			s := m.BatchTime(b)
			finitePositive(t, name, s)
			// More of each kind of work never takes less time.
			more := []Batch{b, b, b, b, b}
			more[0].PromptTokens += 1 + r.IntN(1000)
			more[1].PromptAttnPairs += float64(r.IntN(1 << 20))
			more[2].Decodes++
			more[2].DecodeContextTokens += int64(1 + r.IntN(4096)) // the new request's context
			more[3].DecodeContextTokens += int64(r.IntN(1 << 16))
			more[4].Prompts++
			for i, mb := range more {
				if s2 := m.BatchTime(mb); s2 < s {
					t.Fatalf("%s: more work (%d) took less time: %+v %v s → %+v %v s", name, i, b, s, mb, s2)
				}
			}
			// The mixed batch takes at least as long as its prompt part
			// and its decode part alone.
			prompt := Batch{PromptTokens: b.PromptTokens, Prompts: b.Prompts, PromptAttnPairs: b.PromptAttnPairs}
			decode := Batch{Decodes: b.Decodes, DecodeContextTokens: b.DecodeContextTokens}
			if p, d := m.BatchTime(prompt), m.BatchTime(decode); s < p || s < d {
				t.Fatalf("%s: batch %+v takes %v s, less than its parts %v s / %v s", name, b, s, p, d)
			}
			// The IterationModel methods.
			tok := 1 + r.IntN(16384)
			p1, ex := m.PromptTime(tok)
			p2, _ := m.PromptTime(tok + 1 + r.IntN(1000))
			finitePositive(t, name+" PromptTime", p1)
			if ex || p2 < p1 {
				t.Fatalf("%s: PromptTime(%d) = %v, larger prompt %v, extrapolated %v", name, tok, p1, p2, ex)
			}
			batch := 1 + r.IntN(256)
			ctx := int64(batch) * int64(1+r.IntN(16384))
			d1, _ := m.DecodeTime(batch, ctx)
			d2, _ := m.DecodeTime(batch+1, ctx+int64(1+r.IntN(16384)))
			d3, _ := m.DecodeTime(batch, ctx+int64(r.IntN(100000)))
			finitePositive(t, name+" DecodeTime", d1)
			// Each member alone: one request with its share of the
			// context (here the largest share possible, all but one
			// token for each other request).
			alone, _ := m.DecodeTime(1, ctx-int64(batch-1))
			if d2 < d1 || d3 < d1 || d1 < alone {
				t.Fatalf("%s: DecodeTime(%d, %d) = %v; +1 request %v, +context %v, member alone %v", name, batch, ctx, d1, d2, d3, alone)
			}
			mx, _ := m.MixedTime(tok, batch, ctx)
			if mx < p1 || mx < d1 {
				t.Fatalf("%s: MixedTime(%d, %d, %d) = %v < prompt %v or decode %v", name, tok, batch, ctx, mx, p1, d1)
			}
			// Chunked prefill: a chunk never gets cheaper with more prior
			// context, and the chunks of a prompt take at least as long
			// as the whole prompt in one iteration.
			c1 := m.PromptChunkTime(tok, 100)
			c2 := m.PromptChunkTime(tok, 100+r.IntN(10000))
			if c2 < c1 {
				t.Fatalf("%s: chunk of %d after more context took less time", name, tok)
			}
			// (Up to the large-message size: past it one iteration's
			// all-reduces cost more per token than two halves' — the
			// profiles' superlinear prompt times — so chunks may win.)
			half := tok / 2
			if half > 0 && float64(tok) <= m.largeTokens && m.PromptChunkTime(half, 0)+m.PromptChunkTime(tok-half, half) < p1*(1-1e-12) {
				t.Fatalf("%s: chunked prefill of %d tokens faster than one iteration", name, tok)
			}
		}
		if s, _ := m.PromptTime(0); s != 0 {
			t.Fatalf("%s: empty prompt takes %v", name, s)
		}
		if s, _ := m.DecodeTime(0, 0); s != 0 {
			t.Fatalf("%s: empty decode takes %v", name, s)
		}
		if s, _ := m.MixedTime(0, 0, 100); s != 0 {
			t.Fatalf("%s: empty mixed iteration takes %v", name, s)
		}
	}
}

// TestHandComputed checks one decode iteration against the formula worked
// out by hand: Llama-3.1-70B, bf16, one H200 (141 GiB holds its 141.1e9
// bytes), all efficiencies 1, no overheads.
func TestHandComputed(t *testing.T) {
	t.Parallel()
	a, _ := arch.Lookup("llama3.1-70b")
	g, _ := hw.Lookup("h200")
	m, err := New(Config{Arch: a, GPU: g, TP: 1, Eff: Efficiency{Compute: 1, Memory: 1, Comm: 1}})
	if err != nil {
		t.Fatal(err)
	}
	// One request at 1000 tokens of context: every layer reads its
	// weights (80 × 855,638,016 × 2 B), the KV cache 1001 × 327,680 B
	// (1000 read, 1 written) and the head 128256 × 8192 × 2 B, at 4.8e12
	// B/s; the compute (2 FLOPs per weight) is far below.
	bytes := 80*855638016*2.0 + 1001*327680.0 + 128256*8192*2.0
	want := bytes / 4.8e12
	got, _ := m.DecodeTime(1, 1000)
	if math.Abs(got-want) > 1e-9*want {
		t.Errorf("DecodeTime = %v s, want %v s", got, want)
	}
	// 8192-token prompt: compute-bound at 989e12 FLOP/s: 2 × 8192 ×
	// (weights of the layers) + attention 4×80×64×128 per pair over
	// 8192·8193/2 pairs + the head for one token.
	flops := 2*8192*80*855638016.0 + 4*80*64*128*8192*8193/2.0
	wantP := flops/989e12 + max(2*128256*8192.0/989e12, 128256*8192*2.0/4.8e12)
	gotP, _ := m.PromptTime(8192)
	// The KV written and read back by the prompt (2 × 8192 × 327,680 B)
	// is hidden under the attention compute.
	if math.Abs(gotP-wantP) > 1e-9*wantP {
		t.Errorf("PromptTime = %v s, want %v s", gotP, wantP)
	}
}

func TestMoEExperts(t *testing.T) {
	t.Parallel()
	a, _ := arch.Lookup("deepseek-v3")
	g, _ := hw.Lookup("b200")
	m, err := New(Config{Arch: a, GPU: g, TP: 8, Weights: arch.FP8, KV: arch.FP8, Eff: DefaultEfficiency})
	if err != nil {
		t.Fatal(err)
	}
	// Few tokens touch few experts: a batch of 1 reads far fewer bytes
	// than one of 256, which touches nearly all 256 experts per layer.
	d1, _ := m.DecodeTime(1, 1000)
	d256, _ := m.DecodeTime(256, 256*1000)
	if !(d256 > 3*d1) {
		t.Errorf("deepseek-v3 decode: batch 1 %v s, batch 256 %v s: expected the batch to read most experts", d1, d256)
	}
}

func TestNewErrors(t *testing.T) {
	t.Parallel()
	a, _ := arch.Lookup("llama3.1-405b")
	g, _ := hw.Lookup("a100")
	for _, c := range []struct {
		cfg  Config
		want string
	}{
		{Config{Arch: a, GPU: g, TP: 4, Eff: DefaultEfficiency}, "weights need"},
		{Config{Arch: a, GPU: g, TP: 0, Eff: DefaultEfficiency}, "tp"},
		{Config{Arch: a, GPU: g, TP: 8, EP: 3, Eff: DefaultEfficiency}, "ep"},
		{Config{Arch: a, GPU: g, TP: 16, Eff: Efficiency{Compute: 0, Memory: 1, Comm: 1}}, "compute"},
		{Config{Arch: a, GPU: g, TP: 16, Eff: Efficiency{Compute: 1, Memory: 1, Comm: 1, OverheadS: -1}}, "overhead_s"},
		{Config{Arch: a, GPU: g, TP: 16, Eff: Efficiency{Compute: 1, Memory: 1, Comm: 1, FlatLatency: 1.5}}, "flat_latency"},
		{Config{Arch: a, GPU: g, TP: 16, Eff: Efficiency{Compute: 1, Memory: 1, Comm: 1, ExpertCompute: 1.5}}, "expert_compute"},
		{Config{Arch: arch.Arch{Name: "x"}, GPU: g, TP: 1, Eff: DefaultEfficiency}, "layers"},
		{Config{Arch: a, GPU: hw.GPU{Name: "y"}, TP: 1, Eff: DefaultEfficiency}, "memory_gib"},
	} {
		if _, err := New(c.cfg); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("New: error %v, want one mentioning %q", err, c.want)
		}
	}
}

// TestLatencySteps checks the all-reduce latency steps: a ring's 2(TP−1)
// at FlatLatency 0, 2 at any TP at 1, never fewer with more GPUs nor with
// less flattening, and the model's decode of one token dearer by exactly
// the ring's extra steps.
func TestLatencySteps(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(3, 4))
	for range 1000 {
		tp := 1 + r.IntN(64)
		f := r.Float64()
		s := LatencySteps(tp, f)
		if tp == 1 && s != 0 {
			t.Fatalf("LatencySteps(1, %v) = %v, want 0", f, s)
		}
		if LatencySteps(tp+1, f) < s || LatencySteps(tp, f*r.Float64()) < s {
			t.Fatalf("LatencySteps(%d, %v) = %v: not monotone", tp, f, s)
		}
		if tp > 1 && (LatencySteps(tp, 0) != float64(2*(tp-1)) || LatencySteps(tp, 1) != 2) {
			t.Fatalf("LatencySteps(%d, 0/1) = %v/%v, want %d/2", tp, LatencySteps(tp, 0), LatencySteps(tp, 1), 2*(tp-1))
		}
	}
	a, _ := arch.Lookup("llama3.1-70b")
	g, _ := hw.Lookup("h100_sxm")
	eff := Efficiency{Compute: 1, Memory: 1, Comm: 0.5}
	ring, err := New(Config{Arch: a, GPU: g, TP: 8, Eff: eff})
	if err != nil {
		t.Fatal(err)
	}
	eff.FlatLatency = 1
	flat, err := New(Config{Arch: a, GPU: g, TP: 8, Eff: eff})
	if err != nil {
		t.Fatal(err)
	}
	b := Batch{Decodes: 1, DecodeContextTokens: 1000}
	want := 2 * float64(a.Layers) * 12 * RingStepBytes / (g.IntraNodeGBs * 1e9 * 0.5)
	if got := ring.BatchTime(b) - flat.BatchTime(b); math.Abs(got-want) > 1e-9 {
		t.Fatalf("ring − flat latency at TP 8 = %v s, want %v s", got, want)
	}
}

func TestKVCapacity(t *testing.T) {
	t.Parallel()
	a, _ := arch.Lookup("llama3.1-70b")
	g, _ := hw.Lookup("h100")
	// 8 × H100: per GPU 80 GiB × 0.9 − the engine's reserve − 141.1e9 B / 8
	// free, over 40,960 B per token per GPU (the memory package).
	b, err := memory.Plan(memory.ForArch(a, g, 8, arch.BF16, arch.BF16), memory.Settings{})
	if err != nil {
		t.Fatal(err)
	}
	free := 80*float64(1<<30)*0.9 - b.Reserve - float64(a.WeightBytes(arch.BF16))/8
	want := int64(math.Floor(free / 40960))
	if got := KVCapacityTokens(a, g, 8, arch.BF16, arch.BF16, DefaultReserveFraction); got != want {
		t.Errorf("capacity %d, want %d", got, want)
	}
	m, _ := New(Config{Arch: a, GPU: g, TP: 8, Eff: DefaultEfficiency})
	if m.KVCapacityTokens() != want {
		t.Errorf("Model.KVCapacityTokens %d, want %d", m.KVCapacityTokens(), want)
	}
	if fp8 := KVCapacityTokens(a, g, 8, arch.BF16, arch.FP8, DefaultReserveFraction); fp8 != 2*want && fp8 != 2*want+1 {
		t.Errorf("fp8 KV should double the capacity: %d vs %d", fp8, want)
	}
	if got := KVCapacityTokens(a, g, 1, arch.BF16, arch.BF16, DefaultReserveFraction); got != 0 {
		t.Errorf("70B in bf16 on one H100 leaves %d tokens, want 0", got)
	}
	// More GPUs never hold less.
	prev := int64(0)
	for _, tp := range []int{2, 4, 8, 16} {
		c := KVCapacityTokens(a, g, tp, arch.BF16, arch.BF16, DefaultReserveFraction)
		if c < prev {
			t.Errorf("tp %d holds %d < %d", tp, c, prev)
		}
		prev = c
	}
}
func TestDPView(t *testing.T) {
	t.Parallel()
	ds, err := arch.Lookup("deepseek-ai/DeepSeek-R1")
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := DPView(ds, 1); got != ds {
		t.Error("dp 1 changed the architecture")
	}
	llama, _ := arch.Lookup("meta-llama/Llama-3.1-70B")
	if got, _ := DPView(llama, 8); got != llama {
		t.Error("a dense model changed under attention DP")
	}
	for _, dp := range []int{2, 4, 8} {
		v, err := DPView(ds, dp)
		if err != nil {
			t.Fatal(err)
		}
		if v.MoEIntermediate*dp != ds.MoEIntermediate || v.SharedExperts != ds.SharedExperts*dp {
			t.Errorf("dp %d: expert width %d, shared %d", dp, v.MoEIntermediate, v.SharedExperts)
		}
		if v.ExpertsPerToken < ds.ExpertsPerToken || v.ExpertsPerToken > min(ds.Experts, dp*ds.ExpertsPerToken) {
			t.Errorf("dp %d: %d experts per token, want within [%d, %d]", dp, v.ExpertsPerToken, ds.ExpertsPerToken, dp*ds.ExpertsPerToken)
		}
		// Each rank holds 1/dp of the routed experts' bytes.
		per, whole := float64(v.Experts)*float64(v.ExpertParams()), float64(ds.Experts)*float64(ds.ExpertParams())
		if d := per*float64(dp) - whole; d > 1e-6*whole || d < -1e-6*whole {
			t.Errorf("dp %d: rank expert params %g × dp ≠ %g", dp, per, whole)
		}
	}
	if _, err := DPView(ds, 7); err == nil {
		t.Error("dp 7 does not divide the expert width: want an error")
	}
	// One rank of an attention-DP group is the view's model: more work
	// never takes less time.
	b200, _ := hw.Lookup("b200_sxm")
	r := rand.New(rand.NewPCG(5, 6))
	for _, dp := range []int{4, 8} {
		m, err := New(Config{Arch: ds, GPU: b200, TP: 1, DP: dp, Weights: arch.FP4, KV: arch.FP8, Eff: DefaultEfficiency})
		if err != nil {
			t.Fatal(err)
		}
		v, _ := DPView(ds, dp)
		view, err := New(Config{Arch: v, GPU: b200, TP: 1, Weights: arch.FP4, KV: arch.FP8, Eff: DefaultEfficiency})
		if err != nil {
			t.Fatal(err)
		}
		if m.KVCapacityTokens() != view.KVCapacityTokens() {
			t.Fatalf("dp %d: KV capacity %d, view's %d", dp, m.KVCapacityTokens(), view.KVCapacityTokens())
		}
		for range 200 {
			b := randBatch(r)
			s := m.BatchTime(b)
			more := b
			more.Decodes++
			more.DecodeContextTokens += 100
			if m.BatchTime(more) < s || s != view.BatchTime(b) {
				t.Fatalf("dp %d: batch %+v: %v s, one more decode %v s, the view's model %v s", dp, b, s, m.BatchTime(more), view.BatchTime(b))
			}
		}
	}
}

// TestExpertCompute checks the routed experts' own compute efficiency: 0
// and Compute give the same model, a lower one slows a compute-bound MoE
// prompt and leaves a dense model alone.
func TestExpertCompute(t *testing.T) {
	t.Parallel()
	g, _ := hw.Lookup("h200")
	moe, _ := arch.Lookup("deepseek-v3")
	dense, _ := arch.Lookup("llama3.1-70b")
	at := func(a arch.Arch, expert float64) float64 {
		eff := DefaultEfficiency
		eff.ExpertCompute = expert
		m, err := New(Config{Arch: a, GPU: g, TP: 8, Weights: arch.FP8, KV: arch.FP8, Eff: eff})
		if err != nil {
			t.Fatal(err)
		}
		s, _ := m.PromptTime(8192)
		return s
	}
	if a, b := at(moe, 0), at(moe, DefaultEfficiency.Compute); a != b {
		t.Errorf("deepseek-v3 prompt: expert_compute 0 gives %v s, = compute gives %v s", a, b)
	}
	if a, b := at(moe, DefaultEfficiency.Compute), at(moe, 0.1); !(b > 1.5*a) {
		t.Errorf("deepseek-v3 prompt of 8192 tokens: %v s at the dense efficiency, %v s with experts at 0.1: expected much slower", a, b)
	}
	if a, b := at(dense, 0), at(dense, 0.1); a != b {
		t.Errorf("llama3.1-70b prompt: %v s, %v s with expert_compute 0.1: a dense model has no experts", a, b)
	}
}

// TestLayerOverhead checks the per-layer overhead adds its cost times the
// layers to every iteration, and that a negative one is refused.
func TestLayerOverhead(t *testing.T) {
	t.Parallel()
	g, _ := hw.Lookup("h100")
	for _, name := range []string{"llama3.1-8b", "deepseek-v3"} {
		a, _ := arch.Lookup(name)
		build := func(layer float64) *Model {
			eff := DefaultEfficiency
			eff.LayerOverheadS = layer
			m, err := New(Config{Arch: a, GPU: g, TP: 8, Weights: arch.FP8, KV: arch.FP8, Eff: eff})
			if err != nil {
				t.Fatal(err)
			}
			return m
		}
		m0, m1 := build(0), build(40e-6)
		want := 40e-6 * float64(a.Layers)
		for _, b := range []Batch{{Decodes: 1, DecodeContextTokens: 100}, {PromptTokens: 4096, Prompts: 1, PromptAttnPairs: AttnPairs(4096, 0)}} {
			if d := m1.BatchTime(b) - m0.BatchTime(b); math.Abs(d-want) > 1e-12 {
				t.Errorf("%s: layer overhead adds %v s to %+v, want %v s", name, d, b, want)
			}
		}
	}
	a, _ := arch.Lookup("llama3.1-8b")
	eff := DefaultEfficiency
	eff.LayerOverheadS = -1e-6
	if _, err := New(Config{Arch: a, GPU: g, TP: 1, Eff: eff}); err == nil || !strings.Contains(err.Error(), "layer_overhead_s") {
		t.Errorf("negative layer overhead: error %v", err)
	}
}

// TestLargeMessageRate checks the all-reduce's large-message regime: the
// time is continuous at the threshold, grows at the slower rate beyond it,
// and nothing changes without a threshold or below it.
func TestLargeMessageRate(t *testing.T) {
	t.Parallel()
	a, _ := arch.Lookup("llama2-70b")
	g := mustGPU(t, "a100")
	base := Efficiency{Compute: 0.6, Memory: 0.8, Comm: 0.6}
	large := base
	large.CommLarge, large.LargeMessageMiB = 0.15, 32
	noThreshold := base
	noThreshold.CommLarge = 0.15
	mk := func(e Efficiency) *Model {
		m, err := New(Config{Arch: a, GPU: g, TP: 8, Eff: e})
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	mb, ml, mn := mk(base), mk(large), mk(noThreshold)
	at := int(32 * (1 << 20) / (float64(a.Hidden) * activationBytes)) // 2048 tokens
	p := func(tokens int) Batch {
		return Batch{PromptTokens: tokens, Prompts: 1, PromptAttnPairs: AttnPairs(tokens, 0)}
	}
	for _, n := range []int{1, 100, at} {
		if mb.BatchTime(p(n)) != ml.BatchTime(p(n)) {
			t.Errorf("%d tokens (at or below the threshold): %v with the large-message rate, %v without", n, ml.BatchTime(p(n)), mb.BatchTime(p(n)))
		}
	}
	for _, n := range []int{at + 1, 2 * at, 4 * at} {
		if mn.BatchTime(p(n)) != mb.BatchTime(p(n)) {
			t.Errorf("%d tokens: CommLarge without a threshold changed the time", n)
		}
		// Beyond the threshold the excess over one rate is exactly the
		// slower rate's on the tokens past it.
		perToken := 2 * float64(a.Layers) * 2 * 7.0 / 8 * float64(a.Hidden) * activationBytes / (g.IntraNodeGBs * 1e9)
		want := float64(n-at) * perToken * (1/0.15 - 1/0.6)
		if got := ml.BatchTime(p(n)) - mb.BatchTime(p(n)); math.Abs(got-want) > 1e-9*want+1e-12 {
			t.Errorf("%d tokens: large-message excess %v s, want %v s", n, got, want)
		}
	}
	if d := ml.BatchTime(p(at+1)) - ml.BatchTime(p(at)); d <= 0 || d > 1e-3 {
		t.Errorf("one token past the threshold adds %v s: expected a small positive step (continuity)", d)
	}
}

// TestCarriedTo checks that carrying efficiencies to another GPU scales
// only the GPU-side fixed costs, by the bandwidth ratio, and that carrying
// to the same GPU changes nothing.
func TestCarriedTo(t *testing.T) {
	t.Parallel()
	a100, h100 := mustGPU(t, "a100"), mustGPU(t, "h100")
	e := Efficiency{Compute: 0.6, Memory: 0.8, Comm: 0.6, CommLarge: 0.2, LargeMessageMiB: 40,
		OverheadS: 10e-3, LayerOverheadS: 50e-6, SequenceOverheadS: 300e-6, PromptOverheadS: 12e-3}
	if got := e.CarriedTo(a100, a100); got != e {
		t.Errorf("carried to the same GPU: %+v, want %+v", got, e)
	}
	got := e.CarriedTo(a100, h100)
	r := a100.MemoryBWTBs / h100.MemoryBWTBs
	want := e
	want.OverheadS, want.LayerOverheadS = e.OverheadS*r, e.LayerOverheadS*r
	if got != want {
		t.Errorf("carried A100 → H100: %+v, want %+v", got, want)
	}
	if back := got.CarriedTo(h100, a100); math.Abs(back.OverheadS-e.OverheadS) > 1e-15 || math.Abs(back.LayerOverheadS-e.LayerOverheadS) > 1e-18 {
		t.Errorf("carried there and back: %+v, want %+v", back, e)
	}
}

// TestBatchTermsMatchWork checks the power model's fast path: BatchTerms
// equals BatchWork's terms to the bit, over every built-in configuration
// under the kernel layer (with and without expert parallelism and the
// engines' MoE kernels) and the roofline, and random batches.
func TestBatchTermsMatchWork(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(7, 28))
	checked := 0
	for _, c := range configs(t) {
		for _, kernels := range []bool{false, true} {
			c.Eff.Kernels = kernels
			variants := []Config{c}
			if kernels && c.Arch.IsMoE() {
				ep := c
				ep.EP = c.TP
				moe := c
				moe.MoE = kernel.EnginePath("sglang", c.Arch, c.Weights, c.GPU, kernel.Switches{})
				variants = append(variants, ep, moe)
			}
			for _, v := range variants {
				m, err := New(v)
				if err != nil {
					t.Fatal(err)
				}
				if got := m.BatchTerms(Batch{}); got != ([5]Term{}) {
					t.Fatalf("%s/%s/tp%d: BatchTerms of no work = %v, want zero", v.Arch.Name, v.GPU.Name, v.TP, got)
				}
				for range 20 {
					b := randBatch(r)
					if got, want := m.BatchTerms(b), m.BatchWork(b).Terms; got != want {
						t.Fatalf("%s/%s/tp%d kernels=%v ep=%d: BatchTerms(%+v) = %v, want BatchWork's %v",
							v.Arch.Name, v.GPU.Name, v.TP, kernels, v.EP, b, got, want)
					}
					checked++
				}
			}
		}
	}
	t.Logf("%d batches checked", checked)
}
