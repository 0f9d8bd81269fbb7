package analytic

import (
	"fmt"
	"math"

	"splitplan/arch"
	"splitplan/evaluator/perf"
	"splitplan/evaluator/perf/kernel"
	"splitplan/hw"
	"splitplan/memory"
)

// Efficiency holds the fitted factors that turn spec-sheet peaks into
// achieved rates, and the fixed costs the roofline does not see. Fit fits
// five of them (Compute, Memory, Comm, OverheadS, SequenceOverheadS);
// ScoreBytes is set by hand for engines without fused attention, and
// FlatLatency, ExpertCompute and LayerOverheadS are fitted by package
// measured on serving benchmarks (the SplitwiseSim profiles Fit reads are
// of dense models, taken as ring all-reduces, with the per-layer cost
// folded into OverheadS).
type Efficiency struct {
	// Kernels selects the physics of issue 28: the GPU's share of an
	// iteration is the kernel layer (package kernel, fitted on the H100
	// kernel measurements and carried to every GPU by its spec sheet),
	// and the all-reduces run at the fixed NCCLEfficiency of the link
	// with a TP-independent latency (KernelLatencySteps). Compute,
	// ExpertCompute, Memory, Comm, FlatLatency, CommLarge,
	// LargeMessageMiB and ScoreBytes are then ignored; the engine terms
	// (OverheadS, LayerOverheadS, PromptOverheadS, SequenceOverheadS)
	// are added on top. False is the roofline these fields define (the
	// SplitwiseSim profile fits).
	Kernels bool `toml:"kernels"`
	// Compute is the fraction of the peak tensor-core throughput the
	// matrix multiplications and attention achieve, in (0, 1].
	Compute float64 `toml:"compute"`
	// ExpertCompute is the fraction of the peak tensor-core throughput the
	// routed experts' GEMMs achieve, in [0, 1]; 0, the zero value, means
	// Compute. Grouped GEMMs over many experts with a few tokens each run
	// far below the dense GEMMs' rate (fitted on the serving benchmarks:
	// a single efficiency for both drove it to 0.07–0.15 on the MoE pairs
	// while the dense models' prompts need several times that).
	ExpertCompute float64 `toml:"expert_compute"`
	// Memory is the fraction of the peak HBM bandwidth achieved, in (0, 1].
	Memory float64 `toml:"memory"`
	// Comm is the fraction of the link bandwidth the all-reduces achieve
	// (it also divides the per-step link latency), in (0, 1].
	Comm float64 `toml:"comm"`
	// FlatLatency, in [0, 1], is how much of a ring all-reduce's latency
	// growth with TP the all-reduces avoid: an all-reduce over TP ≥ 2
	// GPUs pays LatencySteps(TP, FlatLatency) = 2 + (1 − FlatLatency) ×
	// 2(TP − 2) latency steps of RingStepBytes each. 0, the zero value,
	// is a ring (2(TP − 1) steps); 1 a latency independent of TP, as
	// NCCL's NVLS and the engines' one-shot custom all-reduces give small
	// messages.
	FlatLatency float64 `toml:"flat_latency"`
	// CommLarge, in [0, 1], is the fraction of the link bandwidth the
	// bytes of an all-reduce beyond LargeMessageMiB achieve; 0, the zero
	// value, means Comm (one rate at every size). Fitted on the
	// SplitwiseSim profiles, whose prompt times grow faster than linearly
	// once a layer's activations pass some tens of MiB — more so at
	// higher TP, as an all-reduce's share of the layer grows — it comes
	// out far below NCCL's large-message bandwidth: it stands for what
	// grows past that size (the engine's all-reduce switching algorithm,
	// activations spilling out of the L2 cache), not for the link alone.
	CommLarge float64 `toml:"comm_large"`
	// LargeMessageMiB is the all-reduce size in MiB from which CommLarge
	// applies (0: never). The time stays continuous across it.
	LargeMessageMiB float64 `toml:"large_message_mib"`
	// ScoreBytes is the HBM traffic in bytes per attention score (one
	// query-key pair of one head in one layer) of a prompt: 0 for fused
	// (flash) attention, which keeps the scores on chip; an attention that
	// writes the scores, masks them, takes the softmax and reads them back
	// moves some 10–30 bytes per score.
	ScoreBytes float64 `toml:"score_bytes"`
	// OverheadS is a fixed cost per iteration in seconds (scheduling,
	// kernel launches, synchronisation), independent of the batch.
	OverheadS float64 `toml:"overhead_s"`
	// LayerOverheadS is a fixed cost in seconds per layer per iteration:
	// the launch and ramp of the layer's many small kernels (norms,
	// rotary embedding, routing, all-reduce set-up), which a deeper model
	// pays more of.
	LayerOverheadS float64 `toml:"layer_overhead_s"`
	// PromptOverheadS is a fixed cost in seconds of an iteration that
	// carries prompt tokens, on top of OverheadS: engines replay a
	// captured CUDA graph for decode-only iterations but launch a
	// prompt's kernels one by one from the host.
	PromptOverheadS float64 `toml:"prompt_overhead_s"`
	// SequenceOverheadS is a cost in seconds per sequence of the
	// iteration (each decoding request and each prompt): sampling,
	// detokenisation and bookkeeping, mostly on the host.
	SequenceOverheadS float64 `toml:"sequence_overhead_s"`
}

// DefaultEfficiency is a plausible starting point for an unfitted GPU:
// 60% of peak compute, 80% of peak memory and link bandwidth, fused
// attention, 5 ms per iteration and 50 µs per sequence.
var DefaultEfficiency = Efficiency{Compute: 0.6, Memory: 0.8, Comm: 0.8, OverheadS: 5e-3, SequenceOverheadS: 50e-6}

// Validate checks the fractions lie in (0, 1] and the overheads are
// finite and non-negative.
func (e Efficiency) Validate() error {
	fractions := []struct {
		name string
		v    float64
	}{{"compute", e.Compute}, {"memory", e.Memory}, {"comm", e.Comm}}
	if e.Kernels {
		fractions = nil
	}
	for _, f := range fractions {
		if !(f.v > 0 && f.v <= 1) {
			return fmt.Errorf("analytic: efficiency %s = %v: expected a fraction in (0, 1]", f.name, f.v)
		}
	}
	for _, f := range []struct {
		name string
		v    float64
	}{{"overhead_s", e.OverheadS}, {"layer_overhead_s", e.LayerOverheadS}, {"sequence_overhead_s", e.SequenceOverheadS},
		{"prompt_overhead_s", e.PromptOverheadS}, {"score_bytes", e.ScoreBytes}, {"large_message_mib", e.LargeMessageMiB}} {
		if !(f.v >= 0) || math.IsInf(f.v, 0) || f.v > 3600 {
			return fmt.Errorf("analytic: efficiency %s = %v: expected a non-negative number up to 3600", f.name, f.v)
		}
	}
	if !(e.ExpertCompute >= 0 && e.ExpertCompute <= 1) {
		return fmt.Errorf("analytic: efficiency expert_compute = %v: expected a fraction in [0, 1] (0: as compute)", e.ExpertCompute)
	}
	if !(e.CommLarge >= 0 && e.CommLarge <= 1) {
		return fmt.Errorf("analytic: efficiency comm_large = %v: expected a fraction in [0, 1] (0: as comm)", e.CommLarge)
	}
	if !(e.FlatLatency >= 0 && e.FlatLatency <= 1) {
		return fmt.Errorf("analytic: efficiency flat_latency = %v: expected a fraction in [0, 1]", e.FlatLatency)
	}
	return nil
}

// LinkFraction returns the fraction of a link's bandwidth transfers
// achieve: NCCLEfficiency under the kernel physics, Comm otherwise.
func (e Efficiency) LinkFraction() float64 {
	if e.Kernels {
		return NCCLEfficiency
	}
	return e.Comm
}

// CarriedTo returns the efficiencies fitted on GPU from as they apply to
// GPU to: the fractions unchanged, and the GPU-side fixed costs (OverheadS
// and LayerOverheadS: launches and the many small, memory-latency-bound
// kernels of a layer) scaled by from's memory bandwidth over to's; the
// host-side ones (SequenceOverheadS, PromptOverheadS) unchanged. Carried
// from the A100 profile to the H100 this takes the decode error from 14%
// to 7% (docs/model.md); the memory bandwidth is chosen as the
// generation's proxy because every spec sheet has it (the NVLink
// bandwidth carried decode as well, 5%, but is missing or a PCIe figure
// on some GPUs).
func (e Efficiency) CarriedTo(from, to hw.GPU) Efficiency {
	if from.MemoryBWTBs > 0 && to.MemoryBWTBs > 0 {
		r := from.MemoryBWTBs / to.MemoryBWTBs
		e.OverheadS *= r
		e.LayerOverheadS *= r
	}
	return e
}

// Config is one model deployed on one GPU type at one parallelism.
type Config struct {
	// Arch is the model architecture; GPU the accelerator.
	Arch arch.Arch
	GPU  hw.GPU
	// TP is the tensor parallelism (GPUs the model is split over, ≥ 1).
	TP int
	// EP is the expert parallelism inside the TP group (0 or 1: experts
	// are split by tensor slicing; otherwise a divisor of TP: whole
	// experts are spread over EP GPUs). The expected expert bytes each
	// GPU reads are the same either way, but under the kernel physics an
	// MoE layer of EP > 1 waits for its busiest GPU
	// (kernel.Layer.WithExpertParallel); the all-to-all of expert
	// parallelism is costed as the all-reduce it replaces.
	EP int
	// DP is the attention data parallelism (0 or 1: none): DP ranks of TP
	// GPUs each run attention and the dense layers on their own tokens,
	// in lockstep, while the MoE layers spread every expert over the TP ×
	// DP GPUs. The model is then one rank's, of DPView's architecture;
	// the MoE layers' all-to-all over the TP × DP GPUs is not costed (its
	// bandwidth, or its bandwidth and a latency, charged on top of the
	// rank's all-reduces made the fit on the measured benchmarks no
	// better or worse). DP must divide the expert width of an MoE model; it
	// changes nothing for a dense one.
	DP int
	// Weights is the precision of the weights (the embeddings stay at
	// bf16, see arch.Arch.WeightBytes), KV that of the KV cache.
	Weights, KV arch.Precision
	// Eff are the efficiencies.
	Eff Efficiency
	// Kernel is the kernel layer's constants when Eff.Kernels is set:
	// nil means kernel.Default (fitted on the H100 and carried by the
	// spec sheet); a GPU's own fit (perf fit --kernels) makes it
	// measured.
	Kernel *kernel.Params
	// MoE is how the serving engine runs the routed experts
	// (kernel.EnginePath): where its kernel is measured its constants
	// replace the kernel layer's own, and its fixed time per MoE layer,
	// where positive, the layer's routing time
	// (kernel.Params.WithMoEPath); the zero MoEPath keeps them.
	MoE kernel.MoEPath
	// Memory is how the serving engine sizes its KV cache
	// (KVCapacityTokens): zero keeps DefaultReserveFraction of the device
	// free, as vLLM's default does; a run's own settings (SGLang's static
	// share, TensorRT-LLM's share of the free memory) are refused with
	// memory's error when the weights do not fit them.
	Memory memory.Settings
}

// NCCLEfficiency is the fraction of the link's one-direction bandwidth a
// large all-reduce's bus bandwidth reaches under the kernel physics
// (NCCL's ring and NVLS all-reduces reach some 75-85% of NVLink's; a
// physical constant, not fitted on serving rows).
const NCCLEfficiency = 0.8

// KernelLatencySteps is the latency of one all-reduce under the kernel
// physics, in RingStepBytes steps: 2, independent of TP (the one-shot
// and NVLS all-reduces engines use for decode-sized messages).
const KernelLatencySteps = 2

// RingStepBytes sets the latency of one step of a ring all-reduce as the
// time the link takes to move this many bytes: 1.5 MB is 5 µs on an A100's
// 300 GB/s NVLink (NCCL's small-message all-reduce costs a few
// microseconds per hop), 3.3 µs on an H100's and 47 µs over PCIe at 32
// GB/s. Tying the latency to the link's generation (faster links have
// lower latency) is an assumption, chosen because it carried the A100
// fit's per-layer fixed costs to the H100 better than a latency fixed in
// seconds; Efficiency.Comm divides it too.
const RingStepBytes = 1.5e6

// DPView returns the architecture one of dp attention-DP ranks computes:
// each rank runs attention and the dense layers on its own tokens, but its
// MoE layers hold 1/dp of every expert (experts over TP × dp GPUs) and
// process the tokens of all dp ranks. With T tokens per rank, the experts
// touched are E(1 − (1 − k/E)^(dp·T)); a rank's view with k' = E(1 − (1 −
// k/E)^dp) experts per token (rounded, at least k) and experts 1/dp as
// wide touches the same experts from its own T tokens and reads 1/dp of
// their bytes. Shared experts keep their full width (SharedExperts × dp
// narrow ones). The routed-expert FLOPs per token become k'/dp
// expert-widths instead of k (k' ≤ dp·k: up to 10% fewer for DeepSeek at
// dp 8), an approximation. A dense model, or dp ≤ 1, is returned as is;
// dp not dividing the expert width is an error.
func DPView(a arch.Arch, dp int) (arch.Arch, error) {
	if dp <= 1 || !a.IsMoE() {
		return a, nil
	}
	if a.MoEIntermediate%dp != 0 {
		return arch.Arch{}, fmt.Errorf("attention dp %d does not divide the expert width %d of %s", dp, a.MoEIntermediate, a.Name)
	}
	e, k := float64(a.Experts), float64(a.ExpertsPerToken)
	kp := int(math.Round(e * -math.Expm1(float64(dp)*math.Log1p(-k/e))))
	a.ExpertsPerToken = min(a.Experts, max(a.ExpertsPerToken, kp))
	a.MoEIntermediate /= dp
	a.SharedExperts *= dp
	return a, nil
}

// LatencySteps returns the latency steps of one all-reduce over tp GPUs:
// 0 for tp ≤ 1, else 2 + (1 − flat) × 2(tp − 2), from a ring's 2(tp − 1)
// (flat 0) to a TP-independent 2 (flat 1). It is non-decreasing in tp.
func LatencySteps(tp int, flat float64) float64 {
	if tp <= 1 {
		return 0
	}
	return 2 + (1-flat)*2*float64(tp-2)
}

// activationBytes is the width of an activation value on the links (bf16).
const activationBytes = 2

// layerGroup is the precomputed cost of one kind of layer (dense-FFN or
// MoE), per GPU. Times are seconds; "per token" means per token processed
// in the iteration.
type layerGroup struct {
	layers float64
	// gemmSPerToken is the compute time of the linear layers per token;
	// weightS the time to read the weights every token uses (attention,
	// dense FFN, shared experts, router).
	gemmSPerToken, weightS float64
	// expertS is the time to read one routed expert's slice; experts and
	// logMiss = ln(1 − k/E) give the expected distinct experts T tokens
	// touch, experts × (1 − exp(T × logMiss)).
	expertS, experts, logMiss float64
}

// Model is the analytic iteration-time model of one Config. It is
// immutable and safe for concurrent use.
type Model struct {
	cfg    Config
	groups [2]layerGroup
	// attention, per GPU, summed over layers: compute seconds per
	// (query, key) pair in full and windowed layers; memory seconds per
	// cached token read or written in full and windowed layers.
	attnSPerPairFull, attnSPerPairWin float64
	// scoreSPerPair is the memory time of a prompt's materialised scores
	// per (query, key) pair over all full and windowed layers.
	scoreSPerPairFull, scoreSPerPairWin float64
	kvSPerTokenFull, kvSPerTokenWin     float64
	window                              float64
	// padded: a prompt token's windowed attention always covers the
	// whole window (arch.Arch.AttentionWindowPadded).
	padded bool
	// all-reduces over all layers: seconds per token and fixed seconds.
	commSPerToken, commS float64
	// Beyond largeTokens tokens an all-reduce's bytes cost
	// commLargeSPerToken per token instead (CommLarge; +Inf: never).
	largeTokens, commLargeSPerToken float64
	// output head: compute seconds per sequence (one set of logits each)
	// and the time to read its weights.
	headSPerSeq, headWeightS float64
	overheadS, seqOverheadS  float64
	promptOverheadS          float64
	// capacity is the KV-cache tokens that fit (KVCapacityTokens).
	capacity int64
	// kl is the kernel layer (Efficiency.Kernels), nil for the roofline.
	kl *kernel.Layer
}

// New validates cfg and precomputes the model's constants. It fails when
// the GPU, architecture or efficiencies are invalid, TP < 1, EP does not
// divide TP, or the weights do not fit: WeightBytes/TP must not exceed the
// GPU's memory.
func New(cfg Config) (*Model, error) {
	a, g := cfg.Arch, cfg.GPU
	if err := a.Validate(); err != nil {
		return nil, fmt.Errorf("analytic: %w", err)
	}
	if err := g.Validate(); err != nil {
		return nil, fmt.Errorf("analytic: %w", err)
	}
	if err := cfg.Eff.Validate(); err != nil {
		return nil, err
	}
	if cfg.TP < 1 || cfg.TP > 1<<12 {
		return nil, fmt.Errorf("analytic: %s on %s: tp = %d: expected a positive integer up to 4096", a.Name, g.Name, cfg.TP)
	}
	if cfg.EP == 0 {
		cfg.EP = 1
	}
	if cfg.EP < 1 || cfg.TP%cfg.EP != 0 {
		return nil, fmt.Errorf("analytic: %s on %s: ep = %d: expected a divisor of tp (%d)", a.Name, g.Name, cfg.EP, cfg.TP)
	}
	if cfg.DP == 0 {
		cfg.DP = 1
	}
	if cfg.DP < 1 || cfg.DP > 1<<12 {
		return nil, fmt.Errorf("analytic: %s on %s: dp = %d: expected a positive integer up to 4096", a.Name, g.Name, cfg.DP)
	}
	a, err := DPView(a, cfg.DP)
	if err != nil {
		return nil, fmt.Errorf("analytic: %w", err)
	}
	if !cfg.Weights.Valid() || !cfg.KV.Valid() {
		return nil, fmt.Errorf("analytic: %s: invalid precision (weights %v, kv %v)", a.Name, cfg.Weights, cfg.KV)
	}
	tp := float64(cfg.TP)
	perGPU := a.WeightBytesPerGPU(cfg.Weights, cfg.TP)
	if perGPU > g.MemoryBytes() {
		return nil, fmt.Errorf("analytic: %s at %v on %s with tp %d: the weights need %.1f GiB per GPU, more than its %.0f GiB",
			a.Name, cfg.Weights, g.Name, cfg.TP, perGPU/(1<<30), g.MemoryGiB)
	}
	e := cfg.Eff
	flops := g.PeakFLOPs(cfg.Weights) * e.Compute
	expertFlops := flops
	if e.ExpertCompute > 0 {
		expertFlops = g.PeakFLOPs(cfg.Weights) * e.ExpertCompute
	}
	bw := g.MemoryBytesPerS() * e.Memory
	wb := cfg.Weights.BytesPerValue()
	m := &Model{cfg: cfg, overheadS: e.OverheadS + e.LayerOverheadS*float64(a.Layers), seqOverheadS: e.SequenceOverheadS,
		promptOverheadS: e.PromptOverheadS, largeTokens: math.Inf(1)}

	if e.Kernels {
		kp := kernel.Default
		if cfg.Kernel != nil {
			kp = *cfg.Kernel
		}
		kp = kp.WithMoEPath(cfg.MoE)
		if m.kl, err = kernel.New(kp, a, g, cfg.TP, cfg.Weights, cfg.KV); err != nil {
			return nil, fmt.Errorf("analytic: %s on %s: %w", a.Name, g.Name, err)
		}
		if cfg.EP > 1 {
			m.kl = m.kl.WithExpertParallel(cfg.EP)
		}
		if cfg.TP > 1 {
			link := tpLinkGBs(g, cfg.TP) * (1e9 * NCCLEfficiency)
			m.commSPerToken = 2 * float64(a.Layers) * 2 * (tp - 1) / tp * float64(a.Hidden) * activationBytes / link
			m.commS = 2 * float64(a.Layers) * KernelLatencySteps * RingStepBytes / link
		}
		if m.capacity, err = capacity(a, g, cfg); err != nil {
			return nil, err
		}
		return m, nil
	}
	// The attention projections each GPU holds (some whole on every GPU).
	attn := a.AttentionParamsPerGPU(cfg.TP)
	// Dense-FFN layers.
	dense := attn + float64(a.DenseFFNParamsPerLayer())/tp
	m.groups[0] = layerGroup{
		layers:        float64(a.DenseLayers()),
		gemmSPerToken: 2 * dense / flops,
		weightS:       dense * wb / bw,
	}
	// MoE layers.
	if a.IsMoE() {
		shared := attn + float64(a.SharedParamsPerMoELayer())/tp
		k, n := float64(a.ExpertsPerToken), float64(a.Experts)
		miss := math.Inf(-1)
		if k < n {
			miss = math.Log1p(-k / n)
		}
		m.groups[1] = layerGroup{
			layers:        float64(a.MoELayers()),
			gemmSPerToken: 2*shared/flops + 2*k*float64(a.ExpertParams())/tp/expertFlops,
			weightS:       shared * wb / bw,
			expertS:       float64(a.ExpertParams()) * wb / tp / bw,
			experts:       n,
			logMiss:       miss,
		}
	}
	full, win := a.AttentionFLOPsPerContextTokenPerGPU(cfg.TP)
	m.attnSPerPairFull, m.attnSPerPairWin = full/flops, win/flops
	if e.ScoreBytes > 0 {
		headsPerGPU := math.Ceil(float64(a.Heads) / tp)
		fullLayers, winLayers := a.AttentionLayers()
		m.scoreSPerPairFull = float64(fullLayers) * headsPerGPU * e.ScoreBytes / bw
		m.scoreSPerPairWin = float64(winLayers) * headsPerGPU * e.ScoreBytes / bw
	}
	kvFull, kvWin := a.KVBytesPerTokenPerGPU(cfg.KV, cfg.TP)
	m.kvSPerTokenFull, m.kvSPerTokenWin = kvFull/bw, kvWin/bw
	m.window = math.Inf(1)
	if w := a.AttentionWindow(); w > 0 {
		m.window = float64(w)
	}
	m.padded = a.AttentionWindowPadded()
	if cfg.TP > 1 {
		link := tpLinkGBs(g, cfg.TP) * (1e9 * e.Comm)
		perAR := 2 * (tp - 1) / tp * float64(a.Hidden) * activationBytes / link
		m.commSPerToken = 2 * float64(a.Layers) * perAR
		m.commS = 2 * float64(a.Layers) * LatencySteps(cfg.TP, e.FlatLatency) * RingStepBytes / link
		if e.CommLarge > 0 && e.LargeMessageMiB > 0 {
			m.largeTokens = e.LargeMessageMiB * (1 << 20) / (float64(a.Hidden) * activationBytes)
			m.commLargeSPerToken = m.commSPerToken * e.Comm / e.CommLarge
		}
	}
	head := float64(a.EmbeddingParams())
	m.headSPerSeq = 2 * head / tp / flops
	m.headWeightS = head * 2 / tp / bw // the head is kept at bf16
	if m.capacity, err = capacity(a, g, cfg); err != nil {
		return nil, err
	}
	return m, nil
}

// tpLinkGBs is the link bandwidth in GB/s of a TP group of tp GPUs g: the
// node's (NVLink) inside a node, the slower inter-node link when tp spans
// nodes.
func tpLinkGBs(g hw.GPU, tp int) float64 {
	if tp > g.GPUsPerNode {
		return min(g.IntraNodeGBs, g.InterNodeGBs)
	}
	return g.IntraNodeGBs
}

// Config returns the model's configuration (EP and DP normalised to ≥ 1).
func (m *Model) Config() Config { return m.cfg }

// Batch describes one iteration's work.
type Batch struct {
	// PromptTokens is the prompt tokens processed (whole prompts or
	// chunks of them) and Prompts how many prompts they belong to.
	PromptTokens, Prompts int
	// PromptAttnPairs is the (query, key) pairs the prompt tokens attend
	// over, causal: a whole prompt of L tokens has L(L+1)/2, a chunk of c
	// tokens after p already-processed ones c·p + c(c+1)/2 (AttnPairs).
	PromptAttnPairs float64
	// Decodes is the decoding requests, each producing one token, and
	// DecodeContextTokens the sum of their contexts.
	Decodes             int
	DecodeContextTokens int64
}

// AttnPairs returns the causal attention pairs of a chunk of chunk tokens
// after prior tokens of the same prompt: chunk·prior + chunk(chunk+1)/2.
func AttnPairs(chunk, prior int) float64 {
	c, p := float64(max(chunk, 0)), float64(max(prior, 0))
	return c*p + c*(c+1)/2
}

// BatchTime returns the duration in seconds of an iteration doing b's
// work (0 for no work). Per GPU of the TP group, for each kind of layer
// (dense-FFN, MoE) times its count:
//
//	max(T × gemm FLOPs per token / (peak × Compute),
//	    (weights every token uses + expected distinct experts touched ×
//	     expert bytes) / (bandwidth × Memory))
//
// with T = PromptTokens + Decodes and the distinct experts of T tokens
// E × (1 − (1 − k/E)^T) (the routed experts' FLOPs at peak × ExpertCompute
// when it is set); plus, over all layers, the attention
// max(attention FLOPs / (peak × Compute), KV bytes / (bandwidth ×
// Memory)) where the FLOPs cover the prompt pairs and the decode contexts
// (windowed layers capped at the window) and the bytes the decode
// contexts read, every new token written (a prompt token's KV written
// and read back once) and the prompt's scores (ScoreBytes per pair, head
// and layer); plus the all-reduces, 2 per layer: (2(TP−1)/TP × T ×
// hidden × 2 B + LatencySteps(TP, FlatLatency) × RingStepBytes) / (link ×
// Comm), the link being
// NVLink inside a node and the inter-node link when TP exceeds a node;
// the bytes of each all-reduce beyond LargeMessageMiB moving at link ×
// CommLarge instead when both are set;
// plus the output head max(sequences × 2 ×
// vocab × hidden / (peak × Compute), its bf16 weights / (bandwidth ×
// Memory)) (logits only for each sequence's last token); plus OverheadS +
// layers × LayerOverheadS + sequences × SequenceOverheadS, sequences =
// Prompts + Decodes, and PromptOverheadS when there are prompt tokens.
//
// Every term is non-decreasing in every field of b, so more work never
// takes less time.
func (m *Model) BatchTime(b Batch) float64 { return m.batchTime(b, 1, nil) }

// Work is how an iteration's time splits between the GPU's compute units
// and its memory, per GPU of the TP group, in seconds at the fitted
// achieved rates (Efficiency).
type Work struct {
	// ComputeS is the time the roofline terms (linear layers, attention,
	// output head) spend computing, and MemoryS the time they spend
	// reading and writing HBM, each summed over the terms without the max
	// that BatchTime takes; a term is compute-bound when its compute time
	// is the larger.
	ComputeS, MemoryS float64
	// ComputeBoundS and MemoryBoundS split the roofline part of BatchTime
	// (the sum over the terms of max(compute, memory)) by which side each
	// term is bound on; OtherS is the rest (all-reduces up to the
	// large-message size, and overheads),
	// which the GPU's clock does not set. ComputeBoundS + MemoryBoundS +
	// OtherS is BatchTime before its MinSeconds floor.
	ComputeBoundS, MemoryBoundS, OtherS float64
	// Terms are the roofline terms themselves, each with its compute and
	// memory time: the dense-FFN layers, the MoE layers, the attention
	// and the output head, in that order, those of no layers left out
	// (zero), and the all-reduces' bytes past Efficiency.LargeMessageMiB
	// (memory only; zero below it); ComputeS and MemoryS are their sums.
	Terms [5]Term
	n     int
}

// Term is one roofline term of an iteration: its compute and memory times
// in seconds (the term takes the larger).
type Term struct {
	ComputeS, MemoryS float64
}

// BatchWork returns the compute and memory split of b's iteration (the
// zero Work for no work).
func (m *Model) BatchWork(b Batch) Work {
	var w Work
	m.batchTime(b, 1, &w)
	return w
}

// BatchTerms returns BatchWork(b).Terms, the roofline terms alone: under
// the kernel layer without pricing the iteration (kernel.Layer.Terms), so
// the power model, which reads only the terms, pays for no more
// (TestBatchTermsMatchWork).
func (m *Model) BatchTerms(b Batch) [5]Term {
	if m.kl == nil {
		return m.BatchWork(b).Terms
	}
	var out [5]Term
	kt := m.kl.Terms(b.PromptTokens, b.Prompts, b.PromptAttnPairs, b.Decodes, float64(max(b.DecodeContextTokens, 0)))
	for i, tm := range kt {
		out[i] = Term{ComputeS: tm[0], MemoryS: tm[1]}
	}
	return out
}

// BatchTimeAtClock returns the duration in seconds of b's iteration when
// the GPU's compute runs at clock, a fraction in (0, 1] of its full clock
// (a power cap lowers it): every roofline term takes max(compute/clock,
// memory), HBM, link and host times being unchanged. clock = 1 gives
// BatchTime exactly; clock outside (0, 1] is taken as 1.
func (m *Model) BatchTimeAtClock(b Batch, clock float64) float64 {
	if !(clock > 0 && clock <= 1) {
		clock = 1
	}
	return m.batchTime(b, clock, nil)
}

// batchTime is BatchTime with the compute times divided by clock, filling
// w when it is not nil.
func (m *Model) batchTime(b Batch, clock float64, w *Work) float64 {
	p, d := max(b.PromptTokens, 0), max(b.Decodes, 0)
	t := float64(p) + float64(d)
	if t == 0 {
		return 0
	}
	inv := 1 / clock
	seqs := float64(max(b.Prompts, 0) + d)
	if p > 0 && b.Prompts <= 0 {
		seqs++
	}
	pairs := max(b.PromptAttnPairs, 0)
	ctx := float64(max(b.DecodeContextTokens, 0))
	if m.kl != nil {
		return m.kernelTime(b, p, d, t, seqs, pairs, ctx, clock, w)
	}
	var s float64
	for i := range m.groups {
		gr := &m.groups[i]
		if gr.layers == 0 {
			continue
		}
		mem := gr.weightS
		if gr.experts > 0 {
			mem += gr.expertS * gr.experts * -math.Expm1(t*gr.logMiss)
		}
		comp := t * gr.gemmSPerToken * inv
		s += gr.layers * max(comp, mem)
		w.add(gr.layers*comp, gr.layers*mem)
	}
	pairsWin, ctxWin := pairs, ctx
	if !math.IsInf(m.window, 1) {
		pairsWin = float64(p) * m.window
		if !m.padded {
			pairsWin = min(pairs, pairsWin)
		}
		ctxWin = min(ctx, float64(d)*m.window)
	}
	attnC := ((pairs+ctx)*m.attnSPerPairFull + (pairsWin+ctxWin)*m.attnSPerPairWin) * inv
	newTokens := 2*float64(p) + float64(d)
	attnM := (ctx+newTokens)*m.kvSPerTokenFull + (ctxWin+newTokens)*m.kvSPerTokenWin +
		pairs*m.scoreSPerPairFull + pairsWin*m.scoreSPerPairWin
	s += max(attnC, attnM)
	w.add(attnC, attnM)
	other := min(t, m.largeTokens)*m.commSPerToken + m.commS
	if t > m.largeTokens {
		// The all-reduces' bytes past the large-message size: counted as
		// HBM-side work (a fifth roofline term, memory only), since what
		// it stands for (activations spilled out of the L2 cache, the
		// engine's copy-based all-reduce) keeps the memory busy.
		large := (t - m.largeTokens) * m.commLargeSPerToken
		s += large
		w.add(0, large)
	}
	headC := seqs * m.headSPerSeq * inv
	s += other
	s += max(headC, m.headWeightS)
	w.add(headC, m.headWeightS)
	fixed := m.overheadS + seqs*m.seqOverheadS
	if p > 0 {
		fixed += m.promptOverheadS
	}
	s += fixed
	if w != nil {
		w.OtherS = other + fixed
	}
	return max(s, perf.MinSeconds)
}

// add adds one roofline term of compute time c and memory time m to w
// (nothing when w is nil).
func (w *Work) add(c, m float64) {
	if w == nil {
		return
	}
	w.ComputeS += c
	w.MemoryS += m
	if w.n < len(w.Terms) {
		w.Terms[w.n] = Term{ComputeS: c, MemoryS: m}
		w.n++
	}
	if c >= m {
		w.ComputeBoundS += c
	} else {
		w.MemoryBoundS += m
	}
}

// Iteration returns the duration in seconds of an iteration with
// promptTokens prompt tokens attending over promptAttnPairs (query, key)
// pairs (see Batch) and decodes decoding requests whose contexts add up
// to decodeContext, counting the prompt tokens as one prompt (BatchTime
// takes the number of prompts).
func (m *Model) Iteration(promptTokens int, promptAttnPairs float64, decodes int, decodeContext int64) float64 {
	prompts := 0
	if promptTokens > 0 {
		prompts = 1
	}
	return m.BatchTime(Batch{PromptTokens: promptTokens, Prompts: prompts, PromptAttnPairs: promptAttnPairs,
		Decodes: decodes, DecodeContextTokens: decodeContext})
}

// PromptChunkTime returns the duration in seconds of a prompt-only
// iteration processing chunk tokens of one prompt whose first prior
// tokens were processed before (chunked prefill).
func (m *Model) PromptChunkTime(chunk, prior int) float64 {
	return m.Iteration(chunk, AttnPairs(chunk, prior), 0, 0)
}

// PromptTime implements perf.IterationModel. The call does not say how the
// tokens split into prompts; they are taken as one prompt of that length,
// which maximises the attention work (Σ L² ≤ (Σ L)²) and counts one
// sequence's overhead. extrapolated is always false: the model is
// physical, defined everywhere (whether it was calibrated in that range
// is the caller's knowledge).
func (m *Model) PromptTime(tokens int) (float64, bool) {
	if tokens <= 0 {
		return 0, false
	}
	return m.Iteration(tokens, AttnPairs(tokens, 0), 0, 0), false
}

// DecodeTime implements perf.IterationModel: batch decoding requests with
// contexts adding up to contextTokens (at least one token each; a
// non-positive contextTokens, "unknown", counts as one token each).
func (m *Model) DecodeTime(batch int, contextTokens int64) (float64, bool) {
	if batch <= 0 {
		return 0, false
	}
	return m.Iteration(0, 0, batch, max(contextTokens, int64(batch))), false
}

// MixedTime implements perf.IterationModel: the prompt tokens as one
// prompt (see PromptTime) together with the decodes (see DecodeTime).
func (m *Model) MixedTime(promptTokens, decodes int, contextTokens int64) (float64, bool) {
	p := max(promptTokens, 0)
	d := max(decodes, 0)
	if p+d == 0 {
		return 0, false
	}
	ctx := int64(0)
	if d > 0 {
		ctx = max(contextTokens, int64(d))
	}
	return m.Iteration(p, AttnPairs(p, 0), d, ctx), false
}

var _ perf.IterationModel = (*Model)(nil)

// kernelTime is batchTime under the kernel physics: the kernel layer, the
// all-reduces and the engine terms.
func (m *Model) kernelTime(b Batch, p, d int, t, seqs, pairs, ctx, clock float64, w *Work) float64 {
	var bd *kernel.Breakdown
	var kb kernel.Breakdown
	if w != nil {
		bd = &kb
	}
	s := m.kl.Time(p, b.Prompts, pairs, d, ctx, clock, bd)
	comm := t*m.commSPerToken + m.commS
	fixed := m.overheadS + seqs*m.seqOverheadS
	if p > 0 {
		fixed += m.promptOverheadS
	}
	s += comm + fixed
	if w != nil {
		for _, tm := range kb.Terms {
			w.add(tm[0], tm[1])
		}
		w.OtherS = s - w.ComputeBoundS - w.MemoryBoundS
	}
	return max(s, perf.MinSeconds)
}

// Breakdown is an iteration's time by layer: the kernel layer's terms,
// the all-reduces and the engine terms, in seconds.
type Breakdown struct {
	// Kernel is the kernel layer's terms (zero for the roofline model).
	Kernel kernel.Breakdown
	// CommS is the all-reduces; EngineS the engine terms (per
	// iteration, per layer, per prompt iteration, per sequence).
	CommS, EngineS float64
	// TotalS is BatchTime.
	TotalS float64
}

// Breakdown returns b's iteration split into its layers. Under the
// roofline model (Efficiency.Kernels false) the GPU's part is not split
// and Kernel.GEMMS holds it.
func (m *Model) Breakdown(b Batch) Breakdown {
	var out Breakdown
	out.TotalS = m.BatchTime(b)
	p, d := max(b.PromptTokens, 0), max(b.Decodes, 0)
	t := float64(p) + float64(d)
	if t == 0 {
		return Breakdown{}
	}
	seqs := float64(max(b.Prompts, 0) + d)
	if p > 0 && b.Prompts <= 0 {
		seqs++
	}
	out.EngineS = m.overheadS + seqs*m.seqOverheadS
	if p > 0 {
		out.EngineS += m.promptOverheadS
	}
	if m.kl == nil {
		out.CommS = min(t, m.largeTokens)*m.commSPerToken + m.commS
		out.Kernel.GEMMS = out.TotalS - out.CommS - out.EngineS
		return out
	}
	out.CommS = t*m.commSPerToken + m.commS
	m.kl.Time(p, b.Prompts, max(b.PromptAttnPairs, 0), d, float64(max(b.DecodeContextTokens, 0)), 1, &out.Kernel)
	return out
}

// capacity returns the KV-cache tokens of the model's TP group (a is the
// rank's view of the architecture) under cfg.Memory.
func capacity(a arch.Arch, g hw.GPU, cfg Config) (int64, error) {
	if cfg.Memory == (memory.Settings{}) {
		return KVCapacityTokens(a, g, cfg.TP, cfg.Weights, cfg.KV, DefaultReserveFraction), nil
	}
	b, err := memory.Plan(memory.ForArch(a, g, cfg.TP, cfg.Weights, cfg.KV), cfg.Memory)
	if err != nil {
		return 0, fmt.Errorf("analytic: %w", err)
	}
	return b.Tokens, nil
}
