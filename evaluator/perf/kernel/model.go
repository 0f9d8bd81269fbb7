// Package kernel is the GPU kernel layer of the performance model (issue
// 28): the time one GPU takes for its tensor-parallel share of one
// iteration, with no all-reduce and no serving engine around it — exactly
// what ../shared/data/gpu-kernels measures.
//
// Each GEMM (M tokens × N outputs × K inputs, weights at a precision) is a
// blended roofline
//
//	c = 2MNK / (peak(precision) × GEMMCompute(precision))
//	m = (N·K·weight bytes + 2·M·(N+K)) / (HBM bandwidth × GEMMMemory)
//	t = max(c, m) + Blend × min(c, m)² / max(c, m) + GEMMLatencyS
//
// so small M is weight-bandwidth-bound and large M saturates at
// GEMMCompute of the dense peak (the power-limited clock). A layer runs
// the attention input/output projections and the FFN (or shared experts
// and one grouped GEMM per expert matrix, whose M per expert is the
// tokens routed to it, at ExpertCompute of the peak where the grouped
// GEMMs are measured), causal flash attention for prompt tokens
// (FLOPs at AttnCompute of the bf16 peak), a decode attention that reads
// the KV cache (at KVMemory of the bandwidth, blended with its FLOPs),
// the element-wise kernels (two RMSNorms, SiLU·mul, two residual adds:
// their bytes at GEMMMemory of the bandwidth) and LayerLatencyS of
// small-kernel launches in a CUDA graph; after the last layer the LM head
// for each sequence's last token, and IterationS once per iteration.
//
// The carry rule: every fraction is of the GPU's own spec-sheet figure
// (dense peak at the GEMM's precision, HBM bandwidth) and is the same for
// every GPU; the latencies are the same in seconds. A GPU's power limit
// enters through its spec-sheet peak (the fraction fitted on the H100 at
// its 700 W limit stands for any GPU run at its own rated power). No GPU
// has a free parameter: a GPU with at least another's peaks and bandwidth
// is never slower, and two GPUs with the same peaks differ only where
// bandwidth matters.
package kernel

import (
	"fmt"
	"math"

	"splitplan/arch"
	"splitplan/hw"
)

// Ceilings the fitted fractions cannot exceed (the best a tuned kernel
// reaches on an H100: GEMMs ≤ 0.81 of the dense peak, a copy ≤ 0.92 of
// the spec bandwidth).
const (
	MaxComputeFraction = 0.81
	MaxMemoryFraction  = 0.92
	// MinFraction is the floor of every fraction: a GEMM, attention or
	// copy kernel that reaches under 1% of its GPU's peak is not one a
	// fit of measurements gives, and a kernel-fit file's 1e-300 priced a
	// prompt at 10^150 seconds.
	MinFraction = 0.01
	// MaxExpertLayerS bounds an MoE layer's routing fixed time
	// (ExpertLayerS): a few dozen small kernels in a CUDA graph.
	MaxExpertLayerS = 500e-6
	// MaxExpertTileRows bounds ExpertTileRows (grouped GEMMs' tiles
	// are at most 256 rows).
	MaxExpertTileRows = 256
)

// Params are the kernel layer's physical constants, the same for every
// GPU (see the package comment for where each enters).
type Params struct {
	// GEMMCompute is the fraction of the dense bf16 peak large GEMMs
	// achieve; GEMMComputeFP8 that of the fp8 (or fp4) peak for GEMMs
	// with 8-bit or narrower weights.
	GEMMCompute    float64 `toml:"gemm_compute"`
	GEMMComputeFP8 float64 `toml:"gemm_compute_fp8"`
	// GEMMMemory is the fraction of the HBM bandwidth GEMMs (weights and
	// activations) and the element-wise kernels achieve.
	GEMMMemory float64 `toml:"gemm_memory"`
	// Blend is how much of the smaller of a GEMM's compute and memory
	// times shows where they are close, in [0, 1).
	Blend float64 `toml:"blend"`
	// GEMMLatencyS is the fixed time of one GEMM kernel in seconds.
	GEMMLatencyS float64 `toml:"gemm_latency_s"`
	// AttnCompute is the fraction of the bf16 peak flash attention
	// achieves on prompt tokens and decode attention on its FLOPs.
	AttnCompute float64 `toml:"attn_compute"`
	// KVMemory is the fraction of the HBM bandwidth decode attention
	// achieves reading the KV cache.
	KVMemory float64 `toml:"kv_memory"`
	// LayerLatencyS is the fixed time of one layer's small kernels
	// (norms, SiLU, residual adds, attention) in seconds.
	LayerLatencyS float64 `toml:"layer_latency_s"`
	// IterationS is the fixed time of one iteration (embedding, graph
	// launch) in seconds.
	IterationS float64 `toml:"iteration_s"`
	// ExpertCompute is the fraction of the dense bf16 peak the routed
	// experts' grouped GEMMs achieve, fitted on MoE iteration rows; 0
	// (absent) means not measured: they run at GEMMCompute, as dense
	// GEMMs of their shape. With 8-bit or narrower weights they run at
	// GEMMComputeFP8 × ExpertCompute / GEMMCompute (the grouped GEMMs'
	// ratio to the dense ones carried to the fp8 peak).
	ExpertCompute float64 `toml:"expert_compute,omitzero"`
	// ExpertLayerS is the fixed time in seconds of one MoE layer's
	// routing beyond its GEMMs (router top-k, the permutation of the
	// routed rows into expert order and back, the weighted sum), fitted
	// with ExpertCompute on MoE iteration rows; 0 (absent): not
	// measured. An engine's measured MoE kernel (WithExpertKernel)
	// replaces it, as it replaces ExpertCompute.
	ExpertLayerS float64 `toml:"expert_layer_s,omitzero"`
	// ExpertTileRows is the rows a grouped GEMM computes at least for
	// each expert it touches (its tile: an expert with fewer routed
	// rows costs a whole tile of tensor-core work), fitted with
	// ExpertCompute on MoE iteration rows; 0 (absent): not measured, no
	// padding. An engine's measured MoE kernel (WithExpertKernel)
	// replaces it.
	ExpertTileRows float64 `toml:"expert_tile_rows,omitzero"`
}

// ExpertFraction returns the compute fraction the routed experts' bf16
// GEMMs run at: ExpertCompute, or GEMMCompute when it is not measured.
func (p Params) ExpertFraction() float64 {
	if p.ExpertCompute == 0 {
		return p.GEMMCompute
	}
	return p.ExpertCompute
}

// experts returns p with the routed experts' compute fractions in place
// of the dense GEMMs' (p itself when ExpertCompute is not measured).
func (p Params) experts() Params {
	if p.ExpertCompute == 0 {
		return p
	}
	q := p
	q.GEMMCompute = p.ExpertCompute
	q.GEMMComputeFP8 = min(p.GEMMComputeFP8*p.ExpertCompute/p.GEMMCompute, MaxComputeFraction)
	return q
}

// Validate checks every fraction lies in (0, its ceiling] and every time
// is finite and non-negative.
func (p Params) Validate() error {
	for _, f := range []struct {
		name   string
		v, max float64
	}{{"gemm_compute", p.GEMMCompute, MaxComputeFraction}, {"gemm_compute_fp8", p.GEMMComputeFP8, MaxComputeFraction},
		{"gemm_memory", p.GEMMMemory, MaxMemoryFraction}, {"attn_compute", p.AttnCompute, MaxComputeFraction},
		{"kv_memory", p.KVMemory, MaxMemoryFraction}} {
		if !(f.v >= MinFraction && f.v <= f.max) {
			return fmt.Errorf("kernel: %s = %v: expected a fraction in [%v, %v]", f.name, f.v, MinFraction, f.max)
		}
	}
	if !(p.ExpertCompute == 0 || p.ExpertCompute >= MinFraction && p.ExpertCompute <= MaxComputeFraction) {
		return fmt.Errorf("kernel: expert_compute = %v: expected a fraction in [%v, %v], or 0 (absent: not measured, the dense gemm_compute)", p.ExpertCompute, MinFraction, MaxComputeFraction)
	}
	if !(p.ExpertTileRows >= 0 && p.ExpertTileRows <= MaxExpertTileRows) {
		return fmt.Errorf("kernel: expert_tile_rows = %v: expected rows in [0, %v] (0: absent, no padding)", p.ExpertTileRows, MaxExpertTileRows)
	}
	if !(p.Blend >= 0 && p.Blend < 1) {
		return fmt.Errorf("kernel: blend = %v: expected a number in [0, 1)", p.Blend)
	}
	for _, f := range []struct {
		name string
		v    float64
	}{{"gemm_latency_s", p.GEMMLatencyS}, {"layer_latency_s", p.LayerLatencyS}, {"iteration_s", p.IterationS}, {"expert_layer_s", p.ExpertLayerS}} {
		if !(f.v >= 0 && f.v <= 1) {
			return fmt.Errorf("kernel: %s = %v: expected seconds in [0, 1]", f.name, f.v)
		}
	}
	return nil
}

// blend returns max(c, m) + k·min(c, m)²/max(c, m): non-decreasing in c
// and m for k < 1, between max(c, m) and (1+k)·max(c, m).
func blend(c, m, k float64) float64 {
	hi, lo := c, m
	if lo > hi {
		hi, lo = lo, hi
	}
	if hi <= 0 {
		return 0
	}
	return hi + k*lo*lo/hi
}

// gemm is one GEMM's cost as a function of its M: compute a·M, memory
// b + d·M (seconds).
type gemm struct{ a, b, d float64 }

// GEMMTime returns the time in seconds of one GEMM of m×k by k×n with the
// weights (k×n) at precision w on GPU g, clock being the fraction of the
// full compute clock (1 normally).
func (p Params) GEMMTime(g hw.GPU, w arch.Precision, m, n, k float64, clock float64) float64 {
	ge := p.gemmOf(g, w, n, k)
	return blend(m*ge.a/clock, ge.b+m*ge.d, p.Blend) + p.GEMMLatencyS
}

// computeFraction is the GEMM compute fraction for weights at w on g.
func (p Params) computeFraction(g hw.GPU, w arch.Precision) float64 {
	if g.Tensor(w) != arch.BF16 {
		return p.GEMMComputeFP8
	}
	return p.GEMMCompute
}

func (p Params) gemmOf(g hw.GPU, w arch.Precision, n, k float64) gemm {
	flops := g.PeakFLOPs(w) * p.computeFraction(g, w)
	bw := g.MemoryBytesPerS() * p.GEMMMemory
	return gemm{a: 2 * n * k / flops, b: n * k * w.BytesPerValue() / bw, d: 2 * (n + k) / bw}
}

// group is one kind of layer (dense FFN or MoE), per GPU.
type group struct {
	layers float64
	gemms  [4]gemm
	n      int
	// routed experts: the two grouped GEMMs per expert (gate-up, down),
	// expected distinct experts E(1 − exp(T·logMiss)), k per token.
	expert              [2]gemm
	experts, logMiss, k float64
	// tile is the rows computed at least per touched expert.
	tile float64
	// ep is the expert parallelism (whole experts over ep GPUs; 0 or 1:
	// every expert sliced over the TP group) and z the expected maximum
	// of ep standard normals: the busiest GPU sets the layer's time.
	ep, z float64
	// elemS is the element-wise kernels' seconds per token.
	elemS float64
	// fixedS is the latencies per layer (GEMMs and small kernels), of
	// which smallS the small kernels' (LayerLatencyS, and an MoE layer's
	// routing, routeS: ExpertLayerS).
	fixedS, smallS, routeS float64
}

// routing sets the group's routed experts: e of them, k per token.
func (gr *group) routing(e, k float64) {
	gr.experts, gr.k = e, k
	gr.logMiss = math.Inf(-1)
	if k < e {
		gr.logMiss = math.Log1p(-k / e)
	}
}

// addRouted returns s, c and m with the routed experts' grouped GEMMs for
// t tokens added: their blended time (corner smoothing blendK), compute
// and memory seconds, the compute at 1/inv of the full clock; the FLOPs
// of the T·k routed tokens and the weights of the E(1 − (1 − k/E)^T)
// distinct experts touched, under expert parallelism the busiest GPU's.
// (The sums come in and go out by value: taking their addresses in Time,
// the hot path, kept them out of registers.)
func (gr *group) addRouted(t, inv, blendK, s, c, m float64) (float64, float64, float64) {
	p := -math.Expm1(t * gr.logMiss)
	touched := gr.experts * p
	routed := t * gr.k
	if gr.ep > 1 && t > 0 {
		// The busiest of ep GPUs, each holding experts/ep whole
		// experts, under uniform routing: its distinct experts
		// (binomial) and its routed tokens (multinomial), at the
		// mean plus z standard deviations.
		n := gr.experts / gr.ep
		md := n * p
		if md > 0 {
			touched *= min(n, md+gr.z*math.Sqrt(n*p*(1-p))) / md
		}
		mr := routed / gr.ep
		routed = gr.ep * (mr + gr.z*math.Sqrt(routed*(1/gr.ep)*(1-1/gr.ep)))
	}
	rows := routed
	if gr.tile > 0 {
		// Whole tiles per expert touched: E[Σ T·⌈r_e/T⌉] ≈ T/2 per
		// expert plus the larger of the rows and T/2 per expert.
		half := touched * gr.tile / 2
		rows = half + max(routed, half)
	}
	for j := range gr.expert {
		ge := &gr.expert[j]
		cj, mj := rows*ge.a*inv, touched*ge.b+routed*ge.d
		s += blend(cj, mj, blendK)
		c += cj
		m += mj
	}
	return s, c, m
}

// dsaLayerS is a sparse-attention (DSA) layer's indexer kernels' fixed
// time: the least latencies AIConfigurator measured of SGLang 0.5.14's
// deep_gemm.fp8_mqa_logits (3.6 µs) and fast_topk_transform_fused (9.8
// µs) on the B200, the same on the B300 and GB200.
const dsaLayerS = 13.4e-6

// Layer is the kernel layer of one model on one GPU at one TP share. It
// is immutable and safe for concurrent use.
type Layer struct {
	p      Params
	groups [2]group
	// attention over all layers per GPU: prompt (flash) compute seconds
	// per (query, key) pair, decode compute seconds per context token,
	// KV seconds per token read and per new token written, full and
	// windowed layers.
	pairFull, pairWin float64
	kvFull, kvWin     float64
	window            float64
	padded            bool // a prompt token attends to the whole window (arch.Arch.AttentionWindowPadded)
	head              gemm
	iterS             float64
	// gdn are the Gated DeltaNet layers' times over all of them per GPU,
	// on the GPU and its peers (gdnLayerTerms, those that can be the
	// least): a prompt or decode takes the least, as GDNTime.
	gdn []gdnTerms
}

// New precomputes the kernel layer of a (its layers as they are) on g at
// tensor parallelism tp with weights and KV cache at the given precisions.
func New(p Params, a arch.Arch, g hw.GPU, tp int, weights, kv arch.Precision) (*Layer, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	if tp < 1 {
		return nil, fmt.Errorf("kernel: tp = %d: expected ≥ 1", tp)
	}
	t := float64(tp)
	h := float64(a.Hidden)
	l := &Layer{p: p, iterS: p.IterationS, window: math.Inf(1)}
	attn := float64(a.AttentionParamsPerLayer())
	vdim := float64(a.HeadDimOrDefault())
	if a.IsMLA() {
		vdim = float64(a.VHeadDim)
	}
	oParams := min(float64(a.Heads)*vdim*h, attn/2)
	gated := 2.0 / 3
	if !a.GatedFFN {
		gated = 0.5
	}
	ffn := func(q Params, params float64) (in, out gemm) {
		// gate-up (K = hidden) and down (N = hidden), sharded over tp.
		return q.gemmOf(g, weights, params*gated/h/t, h), q.gemmOf(g, weights, h, params*(1-gated)/h/t)
	}
	bw := g.MemoryBytesPerS() * p.GEMMMemory
	// Element-wise bytes per token per layer: two RMSNorms (read and
	// write hidden), two residual adds (two reads, one write) on the full
	// hidden width, SiLU·mul (read gate and up, write one) on the FFN
	// width per GPU.
	elem := func(ffnWidth float64) float64 { return 2 * (10*h + 3*ffnWidth/t) / bw }
	// The attention's input projections (those each GPU holds whole
	// included) and its output projection, the same in every layer.
	attnIn, attnOut := p.gemmOf(g, weights, (a.AttentionParamsPerGPU(tp)-oParams/t)/h, h), p.gemmOf(g, weights, h, oParams/h/t)
	mk := func(layers, ffnParams, ffnWidth float64) group {
		gr := group{layers: layers}
		gr.gemms[0], gr.gemms[1] = attnIn, attnOut
		gr.n = 2
		if ffnParams > 0 {
			gr.gemms[2], gr.gemms[3] = ffn(p, ffnParams)
			gr.n = 4
		}
		gr.elemS = elem(ffnWidth)
		gr.fixedS = float64(gr.n)*p.GEMMLatencyS + p.LayerLatencyS
		gr.smallS = p.LayerLatencyS
		return gr
	}
	l.groups[0] = mk(float64(a.DenseLayers()), float64(a.DenseFFNParamsPerLayer()), float64(a.Intermediate))
	if a.IsMoE() {
		shared := float64(a.SharedParamsPerMoELayer())
		k, e := float64(a.ExpertsPerToken), float64(a.Experts)
		gr := mk(float64(a.MoELayers()), shared, k*float64(a.MoEIntermediate)+float64(a.SharedExperts)*float64(a.MoEIntermediate))
		gr.expert[0], gr.expert[1] = ffn(p.experts(), float64(a.ExpertParams()))
		gr.routing(e, k)
		gr.tile = p.ExpertTileRows
		gr.routeS = p.ExpertLayerS
		gr.fixedS += 2*p.GEMMLatencyS + gr.routeS
		gr.smallS += gr.routeS
		l.groups[1] = gr
	}
	flops := g.PeakFLOPs(arch.BF16) * p.AttnCompute
	full, win := a.AttentionFLOPsPerContextTokenPerGPU(tp)
	l.pairFull, l.pairWin = full/flops, win/flops
	kvF, kvW := a.KVBytesPerTokenPerGPU(kv, tp)
	kbw := g.MemoryBytesPerS() * p.KVMemory
	l.kvFull, l.kvWin = kvF/kbw, kvW/kbw
	if w := a.AttentionWindow(); w > 0 {
		l.window = float64(w)
	}
	// Sparse attention (DSA): the prompt kernel attends to IndexTopK
	// entries for every query, padded when fewer tokens precede it
	// (AIConfigurator's measurements of SGLang's flash_mla_sparse_fwd on
	// the B200: 0.37–0.50 µs a query from 32 to 16,384 tokens of
	// context).
	l.padded = a.AttentionWindowPadded()
	if a.IndexTopK > 0 {
		// Each layer runs the indexer's three projections and its logits
		// and top-k kernels (dsaLayerS).
		for i := range l.groups {
			l.groups[i].fixedS += 3*p.GEMMLatencyS + dsaLayerS
			l.groups[i].smallS += dsaLayerS
		}
	}
	l.head = p.gemmOf(g, arch.BF16, float64(a.Vocab)/t, h)
	if a.LinearValueHeads > 0 && a.LinearAttentionLayers > 0 {
		// Each GPU holds its share of the value heads (at least one),
		// each with its dk×dv state.
		n, hv := float64(a.LinearAttentionLayers), math.Ceil(float64(a.LinearValueHeads)/t)
		dk, dv := float64(a.LinearKeyHeadDim), float64(a.LinearValueHeadDim)
		l.gdn = gdnLayerTerms(g, n, hv, dk, dv)
	}
	return l, nil
}

// Breakdown is the kernel layer's time split into its terms, seconds.
type Breakdown struct {
	// GEMMS is the linear layers (projections, FFN, shared and routed
	// experts) with their launch latencies; AttentionS the prompt
	// tokens' flash attention (and the linear-attention layers' chunked
	// delta rule, GDN); KVReadS the decode attention over the KV cache
	// (and those layers' state updates); LayerS the element-wise kernels and the per-layer and
	// per-iteration small-kernel latencies (an MoE layer's routing
	// among them); HeadS the LM head.
	GEMMS, AttentionS, KVReadS, LayerS, HeadS float64
	// RoutingS is the MoE layers' routing time (ExpertLayerS), part of
	// LayerS.
	RoutingS float64
	// Terms are the roofline terms' compute and memory seconds (before
	// the blend and latencies): dense layers' GEMMs, MoE layers' GEMMs,
	// attention (prompt and decode), LM head, element-wise kernels.
	Terms [5][2]float64
}

// Total returns the sum of the terms.
func (b Breakdown) Total() float64 { return b.GEMMS + b.AttentionS + b.KVReadS + b.LayerS + b.HeadS }

// Time returns the seconds of one iteration with promptTokens prompt
// tokens of prompts prompts attending over pairs causal (query, key)
// pairs, and decodes decoding requests whose contexts add up to ctx; the
// compute terms run at clock (a fraction of the full clock in (0, 1]).
// It fills bd when not nil. It is non-decreasing in every argument.
func (l *Layer) Time(promptTokens, prompts int, pairs float64, decodes int, ctx float64, clock float64, bd *Breakdown) float64 {
	pt, d := float64(max(promptTokens, 0)), float64(max(decodes, 0))
	t := pt + d
	if t == 0 {
		return 0
	}
	inv := 1 / clock
	k := l.p.Blend
	seqs := float64(max(prompts, 0)) + d
	if pt > 0 && prompts <= 0 {
		seqs++
	}
	var gemmS, layerS float64
	for i := range l.groups {
		gr := &l.groups[i]
		if gr.layers == 0 {
			continue
		}
		var s, c, m float64
		for j := 0; j < gr.n; j++ {
			ge := &gr.gemms[j]
			cj, mj := t*ge.a*inv, ge.b+t*ge.d
			s += blend(cj, mj, k)
			c += cj
			m += mj
		}
		if gr.experts > 0 {
			s, c, m = gr.addRouted(t, inv, k, s, c, m)
		}
		gemmS += gr.layers * (s + gr.fixedS - gr.smallS)
		elem := gr.layers * t * gr.elemS
		layerS += elem + gr.layers*gr.smallS
		if bd != nil {
			bd.Terms[i] = [2]float64{gr.layers * c, gr.layers * m}
			bd.RoutingS += gr.layers * gr.routeS
			bd.Terms[4][1] += elem
		}
	}
	pairs, ctx, pairsWin, ctxWin := l.windowed(pt, d, pairs, ctx)
	var attnS, kvS, ac, am float64
	if pt > 0 {
		c := (pairs*l.pairFull + pairsWin*l.pairWin) * inv
		m := 2 * pt * (l.kvFull + l.kvWin)
		attnS = blend(c, m, k)
		ac, am = c, m
		if len(l.gdn) > 0 {
			gs, gc := l.gdnPrompt(pt, inv)
			attnS += gs
			ac += gc
		}
	}
	if d > 0 {
		c := (ctx*l.pairFull + ctxWin*l.pairWin) * inv
		m := (ctx+d)*l.kvFull + (ctxWin+d)*l.kvWin
		kvS = blend(c, m, k)
		ac += c
		am += m
		if len(l.gdn) > 0 {
			gs, gm := l.gdnDecode(d)
			kvS += gs
			am += gm
		}
	}
	hc, hm := seqs*l.head.a*inv, l.head.b+seqs*l.head.d
	headS := blend(hc, hm, k) + l.p.GEMMLatencyS
	layerS += l.iterS
	if bd != nil {
		bd.GEMMS, bd.AttentionS, bd.KVReadS, bd.LayerS, bd.HeadS = gemmS, attnS, kvS, layerS, headS
		bd.Terms[2] = [2]float64{ac, am}
		bd.Terms[3] = [2]float64{hc, hm}
	}
	return gemmS + attnS + kvS + layerS + headS
}

// windowed returns an iteration's attention pairs of pt prompt tokens
// and context of d decodes, both at least 0, and the same for the layers
// with a sliding window, capped at the window (a padded window: every
// prompt token attends to the whole window).
func (l *Layer) windowed(pt, d, pairs, ctx float64) (p, c, pWin, cWin float64) {
	p, c = max(pairs, 0), max(ctx, 0)
	if l.window > math.MaxFloat64 { // +Inf: no window (small enough to inline)
		return p, c, p, c
	}
	pWin = pt * l.window
	if !l.padded {
		pWin = min(p, pWin)
	}
	return p, c, pWin, min(c, d*l.window)
}

// gdnPrompt is the linear-attention (GDN) layers' prompt time of pt
// tokens by their fastest kernel: its seconds, and of them its compute.
func (l *Layer) gdnPrompt(pt, inv float64) (s, c float64) {
	s, c = l.gdn[0].prompt(pt, inv)
	for _, t := range l.gdn[1:] {
		if ts, tc := t.prompt(pt, inv); ts < s {
			s, c = ts, tc
		}
	}
	return s, c
}

// gdnDecode is the GDN layers' state update of d decodes by their fastest
// kernel: its seconds, and its memory seconds.
func (l *Layer) gdnDecode(d float64) (s, m float64) {
	gt, s := l.gdn[0], l.gdn[0].decode(d)
	for _, t := range l.gdn[1:] {
		if ts := t.decode(d); ts < s {
			gt, s = t, ts
		}
	}
	return s, d * gt.seqS
}

// Terms returns the roofline terms of the iteration Time(promptTokens,
// prompts, pairs, decodes, ctx, 1, bd) prices, exactly the bd.Terms that
// call fills, without pricing the iteration: no blend, latencies or
// breakdown. The power model reads only these, once per simulated run of
// iterations (analytic's TestBatchTermsMatchWork checks them to the bit).
func (l *Layer) Terms(promptTokens, prompts int, pairs float64, decodes int, ctx float64) [5][2]float64 {
	var out [5][2]float64
	pt, d := float64(max(promptTokens, 0)), float64(max(decodes, 0))
	t := pt + d
	if t == 0 {
		return out
	}
	const inv = 1.0
	seqs := float64(max(prompts, 0)) + d
	if pt > 0 && prompts <= 0 {
		seqs++
	}
	for i := range l.groups {
		gr := &l.groups[i]
		if gr.layers == 0 {
			continue
		}
		var c, m float64
		for j := 0; j < gr.n; j++ {
			ge := &gr.gemms[j]
			c += t * ge.a * inv
			m += ge.b + t*ge.d
		}
		if gr.experts > 0 {
			_, c, m = gr.addRouted(t, inv, 0, 0, c, m)
		}
		out[i] = [2]float64{gr.layers * c, gr.layers * m}
		out[4][1] += gr.layers * t * gr.elemS
	}
	pairs, ctx, pairsWin, ctxWin := l.windowed(pt, d, pairs, ctx)
	var ac, am float64
	if pt > 0 {
		ac = (pairs*l.pairFull + pairsWin*l.pairWin) * inv
		am = 2 * pt * (l.kvFull + l.kvWin)
		if len(l.gdn) > 0 {
			_, gc := l.gdnPrompt(pt, inv)
			ac += gc
		}
	}
	if d > 0 {
		ac += (ctx*l.pairFull + ctxWin*l.pairWin) * inv
		am += (ctx+d)*l.kvFull + (ctxWin+d)*l.kvWin
		if len(l.gdn) > 0 {
			_, gm := l.gdnDecode(d)
			am += gm
		}
	}
	out[2] = [2]float64{ac, am}
	out[3] = [2]float64{seqs * l.head.a * inv, l.head.b + seqs*l.head.d}
	return out
}

// expectedMaxNormal is the expected maximum of n independent standard
// normals (Blom's approximation of the top order statistic).
func expectedMaxNormal(n int) float64 {
	if n < 2 {
		return 0
	}
	q := (float64(n) - 0.375) / (float64(n) + 0.25)
	return math.Sqrt2 * math.Erfinv(2*q-1)
}

// WithExpertParallel is l with its routed experts spread whole over ep
// GPUs of the TP group instead of sliced over it: the same expected bytes
// and FLOPs per GPU, but each MoE layer waits for its busiest GPU.
func (l *Layer) WithExpertParallel(ep int) *Layer {
	out := *l
	if ep > 1 && out.groups[1].experts > 0 {
		out.groups[1].ep, out.groups[1].z = float64(ep), expectedMaxNormal(ep)
	}
	return &out
}
