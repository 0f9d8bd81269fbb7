package measured

import (
	"fmt"
	"math"

	"splitplan/evaluator/perf/arch"
)

// Efficiency is the set of fitted factors of the roofline iteration model:
// the fractions of peak tensor throughput, memory bandwidth and link
// bandwidth achieved, and a fixed time per iteration. It mirrors
// analytic.Efficiency (see doc.go for why this package carries its own
// copy).
type Efficiency struct {
	Compute, Memory, Comm float64
	OverheadS             float64
}

// DefaultEfficiency is the starting point of every fit and the answer when
// nothing is calibrated: typical achieved fractions of peak.
var DefaultEfficiency = Efficiency{Compute: 0.5, Memory: 0.7, Comm: 0.6, OverheadS: 0.004}

// gpuSpec is one GPU's spec sheet (peak figures).
type gpuSpec struct {
	MemoryGiB                        float64
	MemoryBWTBs                      float64
	BF16TFLOPS, FP8TFLOPS, FP4TFLOPS float64
	GPUsPerNode                      int
	IntraNodeGBs, InterNodeGBs       float64
}

// gpuSpecs are NVIDIA spec-sheet peaks (dense tensor throughput), the same
// figures AIConfigurator's systems/*.yaml files hold. They stand in for
// package hw until it is available on this branch.
var gpuSpecs = map[string]gpuSpec{
	"a100_sxm": {80, 2.039, 312, 0, 0, 8, 300, 25},
	"h100_sxm": {80, 3.35, 989, 1978, 0, 8, 450, 50},
	"h200_sxm": {141, 4.8, 989, 1978, 0, 8, 450, 50},
	"b200_sxm": {180, 7.7, 2250, 4500, 9000, 8, 900, 100},
	"b300_sxm": {268.6, 7.75, 2250, 4500, 14000, 8, 900, 100},
	"gb200":    {185, 8.0, 2500, 5000, 10000, 4, 900, 900},
	"gb300":    {277.5, 8.0, 2500, 5000, 15000, 4, 900, 900},
}

// peakTFLOPS returns the dense peak at a compute precision, falling back
// to the next wider precision the GPU supports.
func (g gpuSpec) peakTFLOPS(p arch.Precision) float64 {
	switch p.Compute() {
	case arch.FP4:
		if g.FP4TFLOPS > 0 {
			return g.FP4TFLOPS
		}
		fallthrough
	case arch.FP8:
		if g.FP8TFLOPS > 0 {
			return g.FP8TFLOPS
		}
	}
	return g.BF16TFLOPS
}

// workerShape is one engine instance's layout.
type workerShape struct {
	TP, DP, EP int // attention TP, attention DP, expert parallel degree
}

// GPUs returns the GPUs of one instance: TP × DP.
func (w workerShape) GPUs() int { return w.TP * w.DP }

// iterModel is the roofline iteration-time model of one instance: per
// iteration, max(compute, memory) plus tensor-parallel all-reduces,
// expert-parallel all-to-alls, and a fixed overhead. Work is that of one
// attention-DP rank; MoE layers see the tokens of all DP ranks, spread over
// all the instance's GPUs (see doc.go).
type iterModel struct {
	a      arch.Arch
	g      gpuSpec
	w      workerShape
	weight arch.Precision
	kv     arch.Precision
	// Derived per-GPU constants.
	denseBytesPerGPU  float64 // weights every iteration reads
	expertBytes       float64 // one expert's bytes (one layer), whole
	moeLayers         float64
	linFLOPsPerToken  float64
	attnFLOPsPerCtx   float64 // attention FLOPs per query token per context token (full layers)
	attnFLOPsWindowed float64
	kvBytesPerCtx     float64 // KV bytes per context token read, per GPU (full layers)
	kvBytesWindowed   float64
	linkGBs           float64
}

func newIterModel(a arch.Arch, g gpuSpec, w workerShape, weight, kv arch.Precision) (*iterModel, error) {
	if w.TP < 1 || w.DP < 1 || w.EP < 1 {
		return nil, fmt.Errorf("worker layout %+v: expected positive degrees", w)
	}
	m := &iterModel{a: a, g: g, w: w, weight: weight, kv: kv}
	bpv := weight.BytesPerValue()
	emb := float64(a.EmbeddingParams()) * 2
	if !a.TieWordEmbeddings {
		emb *= 2
	}
	routed := 0.0
	if a.IsMoE() {
		m.moeLayers = float64(a.MoELayers())
		m.expertBytes = float64(a.ExpertParams()) * bpv
		routed = m.moeLayers * float64(a.Experts) * m.expertBytes
	}
	total := float64(a.WeightBytes(weight))
	// Dense part (attention, dense FFNs, shared experts, embeddings) split
	// over TP; experts are accounted per iteration by touched experts.
	m.denseBytesPerGPU = (total - routed) / float64(w.TP)
	_ = emb
	m.linFLOPsPerToken = a.LinearFLOPsPerToken()
	m.attnFLOPsPerCtx, m.attnFLOPsWindowed = a.AttentionFLOPsPerContextToken()
	m.kvBytesPerCtx, m.kvBytesWindowed = a.KVBytesPerTokenPerGPU(kv, w.TP)
	if w.GPUs() <= g.GPUsPerNode {
		m.linkGBs = g.IntraNodeGBs
	} else {
		m.linkGBs = g.InterNodeGBs
	}
	return m, nil
}

// windowed caps a context at the sliding window.
func (m *iterModel) windowed(ctx float64) float64 {
	if m.a.SlidingWindow > 0 {
		return math.Min(ctx, float64(m.a.SlidingWindow))
	}
	return ctx
}

// seconds returns one iteration's time for one DP rank's work: the
// prompt pieces of s (prompt length isl) and its decodes.
func (m *iterModel) seconds(s *step, isl int, eff Efficiency) float64 {
	tokens := float64(s.PromptTokens(isl) + s.Decodes)
	if tokens <= 0 {
		return 0
	}
	// Attention work: query tokens × context tokens attended (causal).
	var attnCtx, attnWin float64
	piece := func(chunk, prior float64, n float64) {
		if chunk <= 0 || n <= 0 {
			return
		}
		attnCtx += n * chunk * (prior + chunk/2)
		attnWin += n * chunk * m.windowed(prior+chunk/2)
	}
	piece(float64(s.HeadTokens), float64(s.HeadPrior), 1)
	piece(float64(isl), 0, float64(s.Whole))
	piece(float64(s.TailTokens), 0, 1)
	ctx := float64(s.ContextTokens)
	attnCtx += ctx
	if s.Decodes > 0 {
		attnWin += float64(s.Decodes) * m.windowed(ctx/float64(s.Decodes))
	}
	tp := float64(m.w.TP)
	flops := (tokens*m.linFLOPsPerToken + attnCtx*m.attnFLOPsPerCtx + attnWin*m.attnFLOPsWindowed) / tp
	computeS := flops / (m.g.peakTFLOPS(m.weight) * 1e12 * eff.Compute)
	// Memory: dense weights, touched experts, KV cache read and written.
	bytes := m.denseBytesPerGPU
	if m.moeLayers > 0 {
		e := float64(m.a.Experts)
		k := float64(m.a.ExpertsPerToken)
		moeTokens := tokens * float64(m.w.DP)
		touched := e * (1 - math.Pow(1-k/e, moeTokens))
		bytes += m.moeLayers * touched * m.expertBytes / float64(m.w.GPUs())
	}
	kvRead := ctx + float64(s.HeadPrior) + float64(s.PromptTokens(isl))
	bytes += kvRead * m.kvBytesPerCtx
	if m.kvBytesWindowed > 0 {
		win := float64(s.Decodes)*m.windowed(ctx/math.Max(1, float64(s.Decodes))) + m.windowed(float64(s.HeadPrior)) + float64(s.PromptTokens(isl))
		bytes += win * m.kvBytesWindowed
	}
	memoryS := bytes / (m.g.MemoryBWTBs * 1e12 * eff.Memory)
	// Communication: two all-reduces of the activations per layer over TP
	// (ring: 2(t-1)/t of the bytes), two all-to-alls per MoE layer over EP.
	var commBytes float64
	if m.w.TP > 1 {
		commBytes += 2 * float64(m.a.Layers) * tokens * float64(m.a.Hidden) * 2 * 2 * (tp - 1) / tp
	}
	if m.w.EP > 1 && m.moeLayers > 0 {
		ep := float64(m.w.EP)
		commBytes += 2 * m.moeLayers * tokens * float64(m.a.ExpertsPerToken) * float64(m.a.Hidden) * (ep - 1) / ep
	}
	commS := commBytes / (m.linkGBs * 1e9 * eff.Comm)
	return math.Max(computeS, memoryS) + commS + eff.OverheadS
}
