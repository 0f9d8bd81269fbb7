// Package memory is splitplan's one model of a GPU's memory under a
// serving engine: how much of each GPU of a tensor-parallel group is left
// for the KV cache once the engine's share of the memory, the weights at
// the served precision and a reserve for activations, CUDA graphs and
// communication buffers are taken, and so how many tokens of KV cache a
// model replica holds. The catalog, the GPU/TP choices of a search, the
// simulator and the analytic performance model all ask it (see
// docs/model.md, "One memory model").
//
// Per GPU of a tp-way group:
//
//	usable   = HBM × utilization − reserve
//	KV bytes = usable − weights / tp − recurrent state × ProfiledSequences
//	tokens   = ⌊KV bytes / (KV bytes per token per GPU)⌋
//
// utilization is the engine's gpu_memory_utilization (vLLM's default 0.9:
// the engine never allocates beyond that share of the device, CUDA
// context included). The reserve is what vLLM measures before it sizes the
// cache: it profiles one forward pass of max_num_batched_tokens tokens and
// keeps the peak activation memory, and it captures CUDA graphs and
// allocates NCCL buffers outside the KV pool. KV bytes per token per GPU
// keep a whole MLA latent on every rank and at least one key/value head
// per rank (heads replicated when kv_heads < tp), as vLLM and SGLang do.
package memory

import (
	"errors"
	"fmt"
	"math"

	"splitplan/arch"
	"splitplan/hw"
)

// GiB is 2^30 bytes.
const GiB = 1 << 30

// DefaultUtilization is the share of each GPU's memory the engine may use:
// vLLM's default gpu_memory_utilization.
const DefaultUtilization = 0.9

// DefaultMaxBatchedTokens is the batch-token limit the activation reserve
// is sized for: vLLM's default max_num_batched_tokens for its OpenAI
// server on GPUs of 70 GiB and more (V1 engine, chunked prefill), the
// tokens of the forward pass it profiles before sizing the KV cache.
const DefaultMaxBatchedTokens = 8192

// ProfiledSequences is the sequences whose logits the profiling pass
// samples (vLLM's default max_num_seqs, 256).
const ProfiledSequences = 256

// GraphBytes is the memory one GPU keeps outside the KV pool for captured
// CUDA graphs (vLLM logs 0.3-1 GiB for its default capture sizes on 8B-70B
// models); CommBytes the NCCL and custom all-reduce buffers of a GPU in a
// tensor-parallel group (a few hundred MiB). Both are assumptions of this
// model, stated in docs/model.md ("One memory model").
const (
	GraphBytes = 0.75 * GiB
	CommBytes  = 0.5 * GiB
)

// Settings are the serving engine's memory settings.
type Settings struct {
	// Utilization is the share of each GPU's memory the engine may use, in
	// (0, 1]; 0 means DefaultUtilization.
	Utilization float64
	// MaxBatchedTokens is the batch-token limit the activation reserve is
	// sized for; 0 means DefaultMaxBatchedTokens.
	MaxBatchedTokens int
	// FreeFraction, when positive, sizes the cache as TensorRT-LLM does:
	// that fraction of the memory left free once the weights are loaded
	// and the reserve taken (its kv_cache_config.free_gpu_memory_fraction,
	// default 0.9); Utilization is then ignored. vLLM and SGLang cap the
	// weights and the cache together at a share of the whole device
	// (Utilization; SGLang's mem_fraction_static).
	FreeFraction float64
	// StaticFraction, when positive, sizes the cache as SGLang does: the
	// weights and the cache within that share of the device (its
	// mem_fraction_static), activations, CUDA graphs and communication
	// buffers in the rest; Utilization is then ignored.
	StaticFraction float64
}

// DefaultFreeFraction is TensorRT-LLM's default free_gpu_memory_fraction.
const DefaultFreeFraction = 0.9

// Validate checks the settings, naming the bad one.
func (s Settings) Validate() error {
	if s.Utilization < 0 || s.Utilization > 1 || math.IsNaN(s.Utilization) {
		return fmt.Errorf("GPU memory utilization must be a fraction in (0, 1], got %v", s.Utilization)
	}
	if s.MaxBatchedTokens < 0 {
		return fmt.Errorf("max batched tokens must be positive, got %d", s.MaxBatchedTokens)
	}
	if s.FreeFraction < 0 || s.FreeFraction > 1 || math.IsNaN(s.FreeFraction) {
		return fmt.Errorf("free GPU memory fraction must be a fraction in (0, 1], got %v", s.FreeFraction)
	}
	if s.StaticFraction < 0 || s.StaticFraction > 1 || math.IsNaN(s.StaticFraction) {
		return fmt.Errorf("static GPU memory fraction must be a fraction in (0, 1], got %v", s.StaticFraction)
	}
	return nil
}

// withDefaults fills the zero settings.
func (s Settings) withDefaults() Settings {
	if s.Utilization == 0 {
		s.Utilization = DefaultUtilization
	}
	if s.MaxBatchedTokens == 0 {
		s.MaxBatchedTokens = DefaultMaxBatchedTokens
	}
	return s
}

// Replica is what the model needs to know about one model replica: its
// group of GPUs and what the model it serves occupies.
type Replica struct {
	// Model and GPU name the model and the GPU in messages.
	Model, GPU string
	// HBMBytes is one GPU's memory in bytes.
	HBMBytes float64
	// TP is the tensor-parallel degree: the GPUs of the replica.
	TP int
	// WeightBytes is the whole model's weights at the served precision.
	WeightBytes float64
	// ReplicatedWeightBytes is what each GPU of the group holds beyond
	// its WeightBytes/TP share: the projections every GPU holds whole
	// (arch.Arch.ReplicatedWeightBytes).
	ReplicatedWeightBytes float64
	// KVBytesPerTokenPerGPU is the KV cache one token of context adds to
	// each GPU of the group (replicated latents and heads included).
	KVBytesPerTokenPerGPU float64
	// ActivationBytesPerToken is the peak activation memory per batched
	// token on one GPU during a forward pass.
	ActivationBytesPerToken float64
	// LogitBytesPerSequence is the memory of one sequence's logits (fp32
	// over the vocabulary) in the profiled sampling step.
	LogitBytesPerSequence float64
	// StateBytesPerSequence is one running sequence's recurrent state on
	// each GPU of the group (linear-attention layers:
	// arch.Arch.RecurrentStateBytesPerGPU), held apart from the per-token
	// cache for up to ProfiledSequences sequences.
	StateBytesPerSequence float64
}

// Budget is one GPU's memory split, in bytes, and the replica's KV tokens.
type Budget struct {
	// HBM is the GPU's memory; Usable its share the engine may use after
	// the reserve (HBM × utilization − Reserve).
	HBM, Usable float64
	// Weights is the GPU's share of the weights; Reserve the activation,
	// CUDA-graph and communication reserve; State the recurrent states of
	// ProfiledSequences running sequences (linear-attention layers); KV
	// what is left for the cache.
	Weights, Reserve, State, KV float64
	// KVBytesPerToken is the KV cache of one token on one GPU.
	KVBytesPerToken float64
	// Tokens is the KV-cache tokens the replica holds (2^62 for a model
	// with no per-token cache).
	Tokens int64
}

// WeightsDoNotFitError says a replica's weights do not fit in the memory
// the engine may use, with the sizes.
type WeightsDoNotFitError struct {
	// Model and GPU name the model and the GPU; TP the replica's GPUs.
	Model, GPU string
	TP         int
	// WeightsGiB is the weights per GPU; UsableGiB the memory the engine
	// may use per GPU after the reserve; Utilization the engine's share.
	WeightsGiB, UsableGiB, Utilization float64
	// StateGiB is the recurrent states held beside the weights per GPU
	// (Budget.State; 0 for a model without linear-attention layers).
	StateGiB float64
}

func (e *WeightsDoNotFitError) Error() string {
	return fmt.Sprintf("%s does not fit on %s·tp%d: %s", e.Model, e.GPU, e.TP, e.Sizes())
}

// Sizes is the error's sizes in words: the weights per GPU against the
// memory the engine may use per GPU.
func (e *WeightsDoNotFitError) Sizes() string {
	state := ""
	if e.StateGiB > 0 {
		state = fmt.Sprintf(" and the recurrent states of %d sequences %.1f GiB", ProfiledSequences, e.StateGiB)
	}
	return fmt.Sprintf("its weights need %.1f GiB per GPU%s, the engine may use %.1f GiB per GPU (%.0f%% of its memory less the activation, CUDA-graph and communication reserve)",
		e.WeightsGiB, state, e.UsableGiB, 100*e.Utilization)
}

// ErrNoFit matches every WeightsDoNotFitError with errors.Is.
var ErrNoFit = errors.New("weights do not fit")

// Is makes errors.Is(err, ErrNoFit) true.
func (e *WeightsDoNotFitError) Is(target error) bool { return target == ErrNoFit }

// Plan splits one GPU's memory of replica r under settings s. When the
// weights leave no room for the cache it returns the budget (Tokens 0) and
// a *WeightsDoNotFitError.
func Plan(r Replica, s Settings) (Budget, error) {
	if err := s.Validate(); err != nil {
		return Budget{}, err
	}
	s = s.withDefaults()
	tp := max(r.TP, 1)
	b := Budget{HBM: r.HBMBytes, Weights: r.WeightBytes/float64(tp) + r.ReplicatedWeightBytes, KVBytesPerToken: r.KVBytesPerTokenPerGPU}
	b.Reserve = float64(s.MaxBatchedTokens)*r.ActivationBytesPerToken +
		float64(min(s.MaxBatchedTokens, ProfiledSequences))*r.LogitBytesPerSequence + GraphBytes
	if tp > 1 {
		b.Reserve += CommBytes
	}
	util := s.Utilization
	switch {
	case s.StaticFraction > 0:
		util = s.StaticFraction
		b.Usable = r.HBMBytes * util // (the reserve is outside it)
	case s.FreeFraction > 0:
		util = 1
		b.Usable = r.HBMBytes - b.Reserve
	default:
		b.Usable = r.HBMBytes*util - b.Reserve
	}
	b.State = float64(ProfiledSequences) * r.StateBytesPerSequence
	b.KV = b.Usable - b.Weights - b.State
	if !(b.KV > 0) {
		b.KV = 0
		return b, &WeightsDoNotFitError{Model: r.Model, GPU: r.GPU, TP: tp,
			WeightsGiB: b.Weights / GiB, UsableGiB: max(b.Usable, 0) / GiB, Utilization: util, StateGiB: b.State / GiB}
	}
	if s.FreeFraction > 0 {
		b.KV *= s.FreeFraction
	}
	if r.KVBytesPerTokenPerGPU <= 0 {
		b.Tokens = 1 << 62
		return b, nil
	}
	b.Tokens = int64(math.Min(math.Floor(b.KV/r.KVBytesPerTokenPerGPU), 1<<62))
	return b, nil
}

// ActivationBytesPerToken is the peak activation memory of one batched
// token on one GPU of a tp-way group during a forward pass at 16-bit
// activations: the residual stream and its normalized copy (2 × hidden,
// whole on every rank), and the larger of the attention projections'
// output (query, key and value heads, or MLA's query and latent, split
// over the ranks) and the FFN's up/gate output (2 × intermediate for a
// gated FFN, split over the ranks; for an MoE layer that of its routed and
// shared experts per token). Only one layer's activations are live at a
// time in inference.
func ActivationBytesPerToken(a arch.Arch, tp int) float64 {
	tp = max(tp, 1)
	h := float64(a.Hidden)
	var attn float64
	if a.IsMLA() {
		attn = float64(a.Heads)*float64(a.QKNopeHeadDim+a.QKRopeHeadDim+a.VHeadDim)/float64(tp) + float64(a.KVLoraRank+a.QKRopeHeadDim)
	} else {
		attn = float64(a.Heads+2*a.KVHeads) * float64(a.HeadDimOrDefault()) / float64(tp)
	}
	up := 1.0
	if a.GatedFFN {
		up = 2
	}
	ffn := up * float64(a.Intermediate)
	if a.IsMoE() {
		ffn = max(ffn, up*float64(a.MoEIntermediate)*float64(a.ExpertsPerToken+a.SharedExperts))
	}
	return 2 * (2*h + max(attn, ffn/float64(tp)))
}

// LogitBytesPerSequence is one sequence's fp32 logits over the vocabulary.
func LogitBytesPerSequence(a arch.Arch) float64 { return 4 * float64(a.Vocab) }

// ForArch is the replica of architecture a on tp GPUs g, its weights at
// precision weights and its cache at kv.
func ForArch(a arch.Arch, g hw.GPU, tp int, weights, kv arch.Precision) Replica {
	r := ForShape(a, tp, weights, kv)
	r.GPU, r.HBMBytes = g.Name, g.MemoryBytes()
	return r
}

// ForShape is the replica of architecture a on tp GPUs, its weights at
// precision weights and its cache at kv, without a GPU (GPU and HBMBytes
// unset): what a's shape alone decides.
func ForShape(a arch.Arch, tp int, weights, kv arch.Precision) Replica {
	full, win := a.KVBytesPerTokenPerGPU(kv, tp)
	return Replica{
		Model: a.Name, TP: max(tp, 1),
		WeightBytes: float64(a.WeightBytes(weights)), ReplicatedWeightBytes: a.ReplicatedWeightBytes(weights, tp), KVBytesPerTokenPerGPU: full + win,
		ActivationBytesPerToken: ActivationBytesPerToken(a, tp), LogitBytesPerSequence: LogitBytesPerSequence(a),
		StateBytesPerSequence: a.RecurrentStateBytesPerGPU(tp),
	}
}
