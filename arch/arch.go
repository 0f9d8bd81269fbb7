package arch

import (
	"fmt"
	"math"
)

// Arch is a decoder-only transformer's architecture, as the fields of its
// Hugging Face config.json give it. Sizes are counts (layers, heads,
// experts) or widths in values (hidden, intermediate, head dimensions).
// Zero means "not present" for the optional fields (experts, MLA ranks,
// sliding window).
type Arch struct {
	// Name is the short name, e.g. "llama3.1-70b"; HFName the Hugging
	// Face path the figures were transcribed from, e.g.
	// "meta-llama/Llama-3.1-70B" (may be empty).
	Name   string `toml:"name"`
	HFName string `toml:"hf_name"`

	// Layers is the number of transformer blocks; Hidden the model width.
	Layers int `toml:"layers"`
	Hidden int `toml:"hidden"`
	// Heads and KVHeads are the query and key/value heads (KVHeads ==
	// Heads is multi-head attention, fewer is grouped-query attention);
	// HeadDim the width of a head (0 means Hidden/Heads).
	Heads   int `toml:"heads"`
	KVHeads int `toml:"kv_heads"`
	HeadDim int `toml:"head_dim"`
	// Intermediate is the dense feed-forward width (used by dense models
	// and by the FirstDenseLayers of a mixture-of-experts model).
	Intermediate int `toml:"intermediate"`
	// GatedFFN is true for gated feed-forward blocks (SwiGLU: gate, up and
	// down matrices) and false for two-matrix ones (BLOOM's GELU FFN).
	GatedFFN bool `toml:"gated_ffn"`
	// Vocab is the vocabulary size.
	Vocab int `toml:"vocab"`
	// TieWordEmbeddings is true when the output head shares the input
	// embedding's matrix.
	TieWordEmbeddings bool `toml:"tie_word_embeddings"`

	// Experts is the number of routed experts per MoE layer (0 for a dense
	// model), ExpertsPerToken how many a token is routed to,
	// MoEIntermediate the width of one expert's FFN, SharedExperts the
	// experts every token goes through (each MoEIntermediate wide), and
	// FirstDenseLayers the leading layers that use a dense FFN instead.
	Experts          int `toml:"experts"`
	ExpertsPerToken  int `toml:"experts_per_token"`
	MoEIntermediate  int `toml:"moe_intermediate"`
	SharedExperts    int `toml:"shared_experts"`
	FirstDenseLayers int `toml:"first_dense_layers"`

	// KVLoraRank > 0 selects multi-head latent attention (DeepSeek-V3):
	// the cache holds a KVLoraRank-wide latent plus a QKRopeHeadDim-wide
	// rotary key per token and layer. QLoraRank is the query's low-rank
	// width (0: full-rank query), QKNopeHeadDim the non-rotary query/key
	// head width and VHeadDim the value head width.
	KVLoraRank    int `toml:"kv_lora_rank"`
	QLoraRank     int `toml:"q_lora_rank"`
	QKRopeHeadDim int `toml:"qk_rope_head_dim"`
	QKNopeHeadDim int `toml:"qk_nope_head_dim"`
	VHeadDim      int `toml:"v_head_dim"`

	// SlidingWindow is the attention window in tokens of the
	// SlidingWindowLayers layers that use one (0: no window). A layer with
	// a window attends to, and caches, at most SlidingWindow tokens.
	SlidingWindow       int `toml:"sliding_window"`
	SlidingWindowLayers int `toml:"sliding_window_layers"`
	// LinearAttentionLayers are layers whose attention keeps a fixed-size
	// recurrent state instead of a KV cache (Qwen3.5's Gated DeltaNet
	// layers). They cache nothing per token and their attention cost does
	// not grow with the context; their parameters are approximated by
	// those of a full attention layer.
	LinearAttentionLayers int `toml:"linear_attention_layers"`
	// LinearKeyHeads and LinearValueHeads are a linear-attention layer's
	// key and value heads (Gated DeltaNet: one dk×dv state per value
	// head), of widths LinearKeyHeadDim and LinearValueHeadDim; 0 (not
	// given): the layers' own kernels are not priced, only their
	// projections.
	LinearKeyHeads     int `toml:"linear_key_heads,omitzero"`
	LinearValueHeads   int `toml:"linear_value_heads,omitzero"`
	LinearKeyHeadDim   int `toml:"linear_key_head_dim,omitzero"`
	LinearValueHeadDim int `toml:"linear_value_head_dim,omitzero"`

	// IndexTopK selects DeepSeek sparse attention (DSA: GLM-5,
	// DeepSeek-V3.2) on every latent-attention layer: a lightning indexer
	// of IndexHeads heads of width IndexHeadDim scores every cached token
	// for each query (in fp8), and the query attends to the IndexTopK
	// best. The cache still holds every token: the latent and the
	// indexer's key (IndexHeadDim fp8 values and a 4-byte scale). 0: dense
	// attention.
	IndexTopK    int `toml:"index_topk,omitzero"`
	IndexHeads   int `toml:"index_heads,omitzero"`
	IndexHeadDim int `toml:"index_head_dim,omitzero"`

	// MXFP4 reports that the model's own FP4 checkpoint is MXFP4 (blocks
	// of 32 values with a power-of-two scale; config.json's
	// quantization_config.quant_method "mxfp4", as gpt-oss ships), not
	// NVFP4. The bytes are the same to within the scales (Precision FP4
	// counts NVFP4's), but the engines run the two through different MoE
	// kernels (TensorRT-LLM on Blackwell: MXFP4 weights with MXFP8
	// activations, at the fp8 rate; kernel.ExpertKernel).
	MXFP4 bool `toml:"mxfp4"`

	// FP8Checkpoint reports that the model's own checkpoint holds FP8
	// weights (config.json's quantization_config.quant_method "fp8", as
	// DeepSeek's and Qwen's -FP8 checkpoints ship): it is served at FP8
	// unless a plan says otherwise (costpower.ServedPrecision).
	FP8Checkpoint bool `toml:"fp8_checkpoint,omitzero"`
}

// Bounds on an Arch's sizes, far above any real model, that keep every
// derived count exact in float64 and int64.
const (
	maxLayers = 1 << 14
	maxWidth  = 1 << 20
	maxVocab  = 1 << 24
	maxCount  = 1 << 16
	// maxParams bounds TotalParams (a quadrillion).
	maxParams = 1e15
)

// Validate checks a's sizes: layers, hidden, heads and vocab positive,
// key/value heads between 1 and heads (dividing heads), experts per token
// between 1 and experts for an MoE model, dense layers fewer than layers,
// the FFN widths present where used, MLA dimensions complete, windows
// and special layers within the layer count, everything within bounds.
func (a Arch) Validate() error {
	bad := func(field string, want string, got int) error {
		return fmt.Errorf("arch: %s: %s: expected %s, got %d", a.Name, field, want, got)
	}
	type bound struct {
		field    string
		v, lo, h int
	}
	for _, b := range []bound{
		{"layers", a.Layers, 1, maxLayers},
		{"hidden", a.Hidden, 1, maxWidth},
		{"heads", a.Heads, 1, maxCount},
		{"kv_heads", a.KVHeads, 1, a.Heads},
		{"head_dim", a.HeadDim, 0, maxWidth},
		{"intermediate", a.Intermediate, 0, maxWidth},
		{"vocab", a.Vocab, 1, maxVocab},
		{"experts", a.Experts, 0, maxCount},
		{"moe_intermediate", a.MoEIntermediate, 0, maxWidth},
		{"shared_experts", a.SharedExperts, 0, maxCount},
		{"first_dense_layers", a.FirstDenseLayers, 0, a.Layers},
		{"kv_lora_rank", a.KVLoraRank, 0, maxWidth},
		{"q_lora_rank", a.QLoraRank, 0, maxWidth},
		{"qk_rope_head_dim", a.QKRopeHeadDim, 0, maxWidth},
		{"qk_nope_head_dim", a.QKNopeHeadDim, 0, maxWidth},
		{"v_head_dim", a.VHeadDim, 0, maxWidth},
		{"sliding_window", a.SlidingWindow, 0, math.MaxInt32},
		{"sliding_window_layers", a.SlidingWindowLayers, 0, a.Layers},
		{"linear_attention_layers", a.LinearAttentionLayers, 0, a.Layers - a.SlidingWindowLayers},
		{"linear_key_heads", a.LinearKeyHeads, 0, maxCount},
		{"linear_value_heads", a.LinearValueHeads, 0, maxCount},
		{"linear_key_head_dim", a.LinearKeyHeadDim, 0, maxWidth},
		{"linear_value_head_dim", a.LinearValueHeadDim, 0, maxWidth},
		{"index_topk", a.IndexTopK, 0, math.MaxInt32},
		{"index_heads", a.IndexHeads, 0, maxCount},
		{"index_head_dim", a.IndexHeadDim, 0, maxWidth},
	} {
		if b.v < b.lo || b.v > b.h {
			return bad(b.field, fmt.Sprintf("an integer in [%d, %d]", b.lo, b.h), b.v)
		}
	}
	if a.Heads%a.KVHeads != 0 {
		return bad("kv_heads", fmt.Sprintf("a divisor of heads (%d)", a.Heads), a.KVHeads)
	}
	if a.HeadDim == 0 && a.KVLoraRank == 0 && a.Hidden%a.Heads != 0 {
		return bad("head_dim", fmt.Sprintf("a value, since hidden (%d) is not a multiple of heads (%d)", a.Hidden, a.Heads), 0)
	}
	if a.Experts > 0 {
		if a.ExpertsPerToken < 1 || a.ExpertsPerToken > a.Experts {
			return bad("experts_per_token", fmt.Sprintf("an integer in [1, experts = %d]", a.Experts), a.ExpertsPerToken)
		}
		if a.MoEIntermediate < 1 {
			return bad("moe_intermediate", "a positive expert FFN width for an MoE model", a.MoEIntermediate)
		}
		if a.FirstDenseLayers >= a.Layers {
			return bad("first_dense_layers", fmt.Sprintf("fewer than layers (%d) for an MoE model", a.Layers), a.FirstDenseLayers)
		}
	} else if a.ExpertsPerToken != 0 || a.SharedExperts != 0 || a.FirstDenseLayers != 0 {
		return bad("experts", "a positive count when experts_per_token, shared_experts or first_dense_layers is set", a.Experts)
	}
	if a.DenseLayers() > 0 && a.Intermediate < 1 {
		return bad("intermediate", "a positive dense FFN width", a.Intermediate)
	}
	if a.KVLoraRank > 0 && (a.QKRopeHeadDim < 1 || a.QKNopeHeadDim < 1 || a.VHeadDim < 1) {
		return fmt.Errorf("arch: %s: kv_lora_rank %d selects latent attention: expected positive qk_rope_head_dim, qk_nope_head_dim and v_head_dim, got %d, %d, %d",
			a.Name, a.KVLoraRank, a.QKRopeHeadDim, a.QKNopeHeadDim, a.VHeadDim)
	}
	if a.LinearValueHeads > 0 && (a.LinearAttentionLayers < 1 || a.LinearKeyHeads < 1 || a.LinearKeyHeadDim < 1 || a.LinearValueHeadDim < 1) {
		return fmt.Errorf("arch: %s: linear_value_heads %d prices the linear-attention layers' kernels: expected positive linear_attention_layers, linear_key_heads, linear_key_head_dim and linear_value_head_dim, got %d, %d, %d, %d",
			a.Name, a.LinearValueHeads, a.LinearAttentionLayers, a.LinearKeyHeads, a.LinearKeyHeadDim, a.LinearValueHeadDim)
	}
	if a.IndexTopK > 0 && (!a.IsMLA() || a.IndexHeads < 1 || a.IndexHeadDim < 1 || a.SlidingWindowLayers > 0 || a.LinearAttentionLayers > 0) {
		return fmt.Errorf("arch: %s: index_topk %d selects sparse attention on latent-attention layers: expected kv_lora_rank, index_heads and index_head_dim positive and no sliding-window or linear-attention layers, got %d, %d, %d, %d, %d",
			a.Name, a.IndexTopK, a.KVLoraRank, a.IndexHeads, a.IndexHeadDim, a.SlidingWindowLayers, a.LinearAttentionLayers)
	}
	if a.IndexTopK == 0 && (a.IndexHeads > 0 || a.IndexHeadDim > 0) {
		return bad("index_topk", "a positive count when index_heads or index_head_dim is set", a.IndexTopK)
	}
	if a.SlidingWindowLayers > 0 && a.SlidingWindow < 1 {
		return bad("sliding_window", "a positive window when sliding_window_layers is set", a.SlidingWindow)
	}
	if p := a.totalParams(); p > maxParams {
		return fmt.Errorf("arch: %s: %.3g parameters: expected at most %.0g", a.Name, p, maxParams)
	}
	return nil
}

// HeadDimOrDefault returns HeadDim, or Hidden/Heads when HeadDim is 0.
func (a Arch) HeadDimOrDefault() int {
	if a.HeadDim > 0 {
		return a.HeadDim
	}
	return a.Hidden / a.Heads
}

// IsMoE reports whether a has routed experts.
func (a Arch) IsMoE() bool { return a.Experts > 0 }

// IsMLA reports whether a uses multi-head latent attention.
func (a Arch) IsMLA() bool { return a.KVLoraRank > 0 }

// MoELayers returns the layers with routed experts: Layers −
// FirstDenseLayers for an MoE model, 0 for a dense one.
func (a Arch) MoELayers() int {
	if !a.IsMoE() {
		return 0
	}
	return a.Layers - a.FirstDenseLayers
}

// DenseLayers returns the layers with a dense FFN (Layers − MoELayers).
func (a Arch) DenseLayers() int { return a.Layers - a.MoELayers() }

// ffnMatrices is 3 for a gated FFN, 2 otherwise.
func (a Arch) ffnMatrices() float64 {
	if a.GatedFFN {
		return 3
	}
	return 2
}

// attentionParams is AttentionParamsPerLayer in float64.
func (a Arch) attentionParams() float64 {
	h := float64(a.Hidden)
	heads := float64(a.Heads)
	if a.IsMLA() {
		qk := float64(a.QKNopeHeadDim + a.QKRopeHeadDim)
		var q float64
		if a.QLoraRank > 0 {
			q = h*float64(a.QLoraRank) + float64(a.QLoraRank)*heads*qk
		} else {
			q = h * heads * qk
		}
		kvA := h * float64(a.KVLoraRank+a.QKRopeHeadDim)
		kvB := float64(a.KVLoraRank) * heads * float64(a.QKNopeHeadDim+a.VHeadDim)
		o := heads * float64(a.VHeadDim) * h
		return q + kvA + kvB + o + a.indexerParams()
	}
	d := float64(a.HeadDimOrDefault())
	return h * d * (2*heads + 2*float64(a.KVHeads))
}

// indexerParams is a sparse-attention layer's indexer: its query
// up-projection q_lora_rank × heads × width (hidden × heads × width
// without a query rank), its key projection hidden × width and its head
// weights hidden × heads; 0 without sparse attention.
func (a Arch) indexerParams() float64 {
	if a.IndexTopK == 0 {
		return 0
	}
	h, n, w := float64(a.Hidden), float64(a.IndexHeads), float64(a.IndexHeadDim)
	q := h
	if a.QLoraRank > 0 {
		q = float64(a.QLoraRank)
	}
	return q*n*w + h*w + h*n
}

// AttentionParamsPerLayer returns the parameters of one layer's attention
// projections. Grouped-query: hidden × head_dim × (2 heads + 2 kv_heads)
// (Q, O and K, V). Latent (MLA): the query path hidden × q_lora_rank +
// q_lora_rank × heads × (nope + rope) (or hidden × heads × (nope + rope)
// without a query rank), the KV down-projection hidden × (kv_lora_rank +
// rope), the up-projection kv_lora_rank × heads × (nope + v) and the output
// heads × v × hidden, and a sparse-attention layer's indexer
// (indexerParams). Norms and biases are ignored (under 0.1%).
func (a Arch) AttentionParamsPerLayer() int64 { return int64(a.attentionParams()) }

// AttentionParamsPerGPU returns the parameters of one layer's attention
// projections that each GPU of a tp-way tensor-parallel group holds and
// reads: the sharded ones (queries, output, MLA's up-projections) divided
// by tp, plus those every GPU holds whole — MLA's query and KV
// down-projections (q_a, kv_a: replicated by vLLM and SGLang) and a
// sparse-attention layer's indexer (replicated likewise), and, under
// grouped-query attention with fewer KV heads than tp, the key and value
// projections of the KV head each GPU keeps (as KVBytesPerTokenPerGPU
// keeps its cache). At tp 1 it is AttentionParamsPerLayer.
func (a Arch) AttentionParamsPerGPU(tp int) float64 {
	tp = max(tp, 1)
	t := float64(tp)
	h := float64(a.Hidden)
	if a.IsMLA() {
		whole := h*float64(a.QLoraRank+a.KVLoraRank+a.QKRopeHeadDim) + a.indexerParams()
		return (a.attentionParams()-whole)/t + whole
	}
	d := float64(a.HeadDimOrDefault())
	kvHeads := (a.KVHeads + tp - 1) / tp // per GPU, as its cache
	return h*d*2*float64(a.Heads)/t + h*d*2*float64(kvHeads)
}

// WeightBytesPerGPU returns the bytes of weights each GPU of a tp-way
// tensor-parallel group holds at precision p: WeightBytes split over the
// group, plus ReplicatedWeightBytes.
func (a Arch) WeightBytesPerGPU(p Precision, tp int) float64 {
	return float64(a.WeightBytes(p))/float64(max(tp, 1)) + a.ReplicatedWeightBytes(p, tp)
}

// ReplicatedWeightBytes returns the bytes at precision p each GPU of a
// tp-way group holds beyond its 1/tp share of the weights: in every layer
// the attention projections it holds whole (AttentionParamsPerGPU) less
// their share.
func (a Arch) ReplicatedWeightBytes(p Precision, tp int) float64 {
	extra := a.AttentionParamsPerGPU(tp) - a.attentionParams()/float64(max(tp, 1))
	return float64(a.Layers) * extra * p.BytesPerValue()
}

// DenseFFNParamsPerLayer returns one dense FFN's parameters: 3 (gated) or
// 2 matrices of hidden × intermediate.
func (a Arch) DenseFFNParamsPerLayer() int64 {
	return int64(a.ffnMatrices() * float64(a.Hidden) * float64(a.Intermediate))
}

// ExpertParams returns one expert's parameters: 3 (gated) or 2 matrices of
// hidden × moe_intermediate.
func (a Arch) ExpertParams() int64 {
	return int64(a.ffnMatrices() * float64(a.Hidden) * float64(a.MoEIntermediate))
}

// SharedParamsPerMoELayer returns the parameters every token of an MoE
// layer uses besides its routed experts: the shared experts (each the size
// of a routed one) and the router (hidden × experts).
func (a Arch) SharedParamsPerMoELayer() int64 {
	if !a.IsMoE() {
		return 0
	}
	return int64(a.SharedExperts)*a.ExpertParams() + int64(a.Hidden)*int64(a.Experts)
}

// EmbeddingParams returns the input embedding's parameters, vocab × hidden
// (the output head has as many, shared when TieWordEmbeddings).
func (a Arch) EmbeddingParams() int64 { return int64(a.Vocab) * int64(a.Hidden) }

// nonEmbedding returns the parameters of the transformer blocks, with
// routed experts counted experts times (all) or experts-per-token times.
func (a Arch) nonEmbedding(routed int) float64 {
	l := float64(a.Layers)
	p := l*a.attentionParams() + float64(a.DenseLayers())*float64(a.DenseFFNParamsPerLayer())
	if a.IsMoE() {
		p += float64(a.MoELayers()) * (float64(routed)*float64(a.ExpertParams()) + float64(a.SharedParamsPerMoELayer()))
	}
	return p
}

func (a Arch) totalParams() float64 {
	p := a.nonEmbedding(a.Experts) + float64(a.EmbeddingParams())
	if !a.TieWordEmbeddings {
		p += float64(a.EmbeddingParams())
	}
	return p
}

// NonEmbeddingParams returns the parameters of the transformer blocks
// (attention, dense FFNs, every expert, shared experts, routers).
func (a Arch) NonEmbeddingParams() int64 { return int64(a.nonEmbedding(a.Experts)) }

// TotalParams returns all parameters: NonEmbeddingParams plus the input
// embedding plus the output head unless tied.
func (a Arch) TotalParams() int64 { return int64(a.totalParams()) }

// ActiveParams returns the parameters one token's forward pass multiplies
// by: attention, dense FFNs, in MoE layers the shared experts, router and
// ExpertsPerToken routed experts, and the output head (vocab × hidden).
// The input embedding is a table look-up, not a multiplication, and is not
// counted (OpenAI's convention for gpt-oss; DeepSeek's "37B activated"
// counts it too, about 1B more).
func (a Arch) ActiveParams() int64 {
	return int64(a.nonEmbedding(a.ExpertsPerToken) + float64(a.EmbeddingParams()))
}

// WeightBytes returns the bytes of the weights stored at precision p: the
// transformer blocks at p.BytesPerValue() (scales included), the input
// embedding and the untied output head kept at bf16 (2 bytes), as
// quantized checkpoints usually do.
func (a Arch) WeightBytes(p Precision) int64 {
	emb := float64(a.EmbeddingParams())
	if !a.TieWordEmbeddings {
		emb *= 2
	}
	return int64(math.Ceil(a.nonEmbedding(a.Experts)*p.BytesPerValue() + 2*emb))
}

// RecurrentStateBytesPerGPU returns one sequence's recurrent state on each
// GPU of a tp-way group: per linear-attention layer a dk × dv state per
// value head, the heads split over the group (each GPU keeps at least
// one), in bf16 (the dtype the engines' Gated DeltaNet kernels keep it in
// where the scripts set it; the short convolution's state, a few
// kilobytes, is left out). 0 without linear-attention heads.
func (a Arch) RecurrentStateBytesPerGPU(tp int) float64 {
	if a.LinearAttentionLayers == 0 || a.LinearValueHeads == 0 {
		return 0
	}
	heads := math.Ceil(float64(a.LinearValueHeads) / float64(max(tp, 1)))
	return float64(a.LinearAttentionLayers) * heads * float64(a.LinearKeyHeadDim) * float64(a.LinearValueHeadDim) * 2
}

// kvLayers returns the layers that keep a per-token cache: all but the
// linear-attention ones.
func (a Arch) kvLayers() int { return a.Layers - a.LinearAttentionLayers }

// kvValuesPerLayer returns the values one token adds to one layer's cache
// on one GPU of a tp-way group: 2 × kv_heads × head_dim with kv_heads
// split over the group (each GPU keeps at least one head, so heads are
// replicated when kv_heads < tp), or for MLA the whole kv_lora_rank +
// qk_rope_head_dim latent (replicated on every GPU, as vLLM and SGLang do
// under tensor parallelism).
func (a Arch) kvValuesPerLayer(tp int) float64 {
	if a.IsMLA() {
		return float64(a.KVLoraRank + a.QKRopeHeadDim)
	}
	heads := (a.KVHeads + tp - 1) / tp
	return 2 * float64(heads) * float64(a.HeadDimOrDefault())
}

// KVBytesPerToken returns the KV-cache bytes one token of context occupies
// at precision p over the whole model (one copy): grouped-query 2 × layers
// × kv_heads × head_dim × bytes, MLA layers × (kv_lora_rank +
// qk_rope_head_dim) × bytes (and a sparse-attention indexer's key,
// indexerKeyBytes). Linear-attention layers add nothing;
// sliding-window layers are counted as full ones, so this is exact for
// contexts up to the window and an upper bound beyond it (KVBytesForContext
// is exact).
func (a Arch) KVBytesPerToken(p Precision) int64 {
	return int64(math.Ceil(float64(a.kvLayers())*a.kvValuesPerLayer(1)*p.BytesPerValue() + a.indexerKeyBytes()))
}

// indexerKeyBytes returns the bytes the sparse-attention indexers' keys
// add per token of context over all layers (on every GPU: each holds the
// whole key, as it does the latent): IndexHeadDim fp8 values and a 4-byte
// scale per layer, whatever the cache's precision. 0 without sparse
// attention.
func (a Arch) indexerKeyBytes() float64 {
	if a.IndexTopK == 0 {
		return 0
	}
	return float64(a.kvLayers()) * float64(a.IndexHeadDim+4)
}

// KVBytesForContext returns the KV-cache bytes of one sequence of
// contextTokens tokens at precision p: full-attention layers hold every
// token, sliding-window layers at most SlidingWindow.
func (a Arch) KVBytesForContext(p Precision, contextTokens int64) int64 {
	full, win := a.KVBytesPerTokenPerGPU(p, 1)
	w := contextTokens
	if a.SlidingWindowLayers > 0 {
		w = min(contextTokens, int64(a.SlidingWindow))
	}
	return int64(math.Ceil(full*float64(contextTokens) + win*float64(w)))
}

// KVBytesPerTokenPerGPU returns the KV-cache bytes per token of context on
// one GPU of a tp-way tensor-parallel group, split into what a query reads
// of every cached token (full) and what it reads of at most
// AttentionWindow tokens (windowed): the layers without a window and the
// sliding-window layers (which also cache at most SlidingWindow tokens per
// sequence); under sparse attention the indexers' keys and the latents
// (every token cached, IndexTopK read). Key/value heads are split over
// the group but each GPU keeps at least one, and an MLA latent is kept
// whole on every GPU, so the per-GPU bytes can exceed 1/tp of the total.
// Every token's cache is full + windowed bytes but in sliding-window
// layers.
func (a Arch) KVBytesPerTokenPerGPU(p Precision, tp int) (full, windowed float64) {
	tp = max(tp, 1)
	per := a.kvValuesPerLayer(tp) * p.BytesPerValue()
	fl, wl := a.AttentionLayers()
	return float64(fl)*per + a.indexerKeyBytes(), float64(wl) * per
}

// AttentionLayers returns the layers that keep a per-token cache, split
// into those whose attention reads every cached token (full) and those
// that read at most AttentionWindow tokens (windowed): the sliding-window
// layers, or under sparse attention every layer (its indexer, which reads
// every token, is counted apart).
func (a Arch) AttentionLayers() (full, windowed int) {
	if a.IndexTopK > 0 {
		return 0, a.kvLayers()
	}
	return a.kvLayers() - a.SlidingWindowLayers, a.SlidingWindowLayers
}

// AttentionWindow returns the most tokens of context a query reads in the
// windowed part of the attention (KVBytesPerTokenPerGPU,
// AttentionFLOPsPerContextToken): SlidingWindow with sliding-window
// layers, IndexTopK under sparse attention, 0 (no window) otherwise.
func (a Arch) AttentionWindow() int {
	switch {
	case a.SlidingWindowLayers > 0:
		return a.SlidingWindow
	case a.IndexTopK > 0:
		return a.IndexTopK
	}
	return 0
}

// AttentionWindowPadded reports that a prompt token's windowed attention
// always covers the whole AttentionWindow, even with fewer tokens before
// it: sparse attention's kernels attend to IndexTopK entries a query,
// padded (a sliding window reads only the tokens there are). The
// iteration models charge a prompt's windowed pairs by it;
// FLOPsPerToken, one token's work over its context, does not pad.
func (a Arch) AttentionWindowPadded() bool { return a.IndexTopK > 0 }

// LinearFLOPsPerToken returns the FLOPs of the matrix multiplications for
// one token: 2 × ActiveParams (a multiply and an add per weight; the
// output head included, the embedding look-up not).
func (a Arch) LinearFLOPsPerToken() float64 { return 2 * float64(a.ActiveParams()) }

// AttentionFLOPsPerContextToken returns the attention FLOPs for one query
// token per token of context it attends to, split into layers without a
// window (full) and sliding-window layers (which attend to at most
// SlidingWindow tokens; under sparse attention, the indexer's scoring of
// every token and the latent attention over at most IndexTopK): per
// layer 2 × heads × qk_dim (scores) + 2 × heads
// × v_dim (weighted values), i.e. 4 × heads × head_dim for grouped-query
// attention and 2 × heads × (qk_nope + qk_rope + v) for MLA (its prefill
// form). Decode kernels that absorb the up-projections into the query and
// the output attend over the compressed cache itself, 2 × heads ×
// (2 × kv_lora_rank + qk_rope) per layer, about 3.4 times this for
// DeepSeek-V3: the model under-counts an MLA decode's attention FLOPs,
// which matters only where such a decode is compute-bound (long contexts
// with every head on one GPU, attention data parallelism). Counting them
// was tried against the measured benchmarks and made the held-out errors
// worse (docs/model.md), so the prefill form stands for both.
// Linear-attention layers are left out (their cost does not grow with the
// context).
func (a Arch) AttentionFLOPsPerContextToken() (full, windowed float64) {
	return a.AttentionFLOPsPerContextTokenPerGPU(1)
}

// AttentionFLOPsPerContextTokenPerGPU returns AttentionFLOPsPerContextToken
// on one GPU of a tp-way group: the heads split over the group, a sparse
// attention's indexer (full: 2 × index heads × index width per layer,
// scoring every token; run in fp8 by the engines, counted here as FLOPs
// like the others, an upper bound on its time) whole on every GPU, as its
// weights are, and its latent attention (windowed) in the absorbed form
// its kernels run, 2 × heads × (2 × kv_lora_rank + qk_rope) per layer.
func (a Arch) AttentionFLOPsPerContextTokenPerGPU(tp int) (full, windowed float64) {
	t := float64(max(tp, 1))
	var per, indexer float64
	switch {
	case a.IndexTopK > 0:
		// The sparse kernels attend over the compressed latent itself
		// (the absorbed form: scores over kv_lora_rank + rope, values
		// over kv_lora_rank); the indexer scores every token.
		per = 2 * float64(a.Heads) * float64(2*a.KVLoraRank+a.QKRopeHeadDim)
		indexer = float64(a.kvLayers()) * 2 * float64(a.IndexHeads) * float64(a.IndexHeadDim)
	case a.IsMLA():
		per = 2 * float64(a.Heads) * float64(a.QKNopeHeadDim+a.QKRopeHeadDim+a.VHeadDim)
	default:
		per = 4 * float64(a.Heads) * float64(a.HeadDimOrDefault())
	}
	fl, wl := a.AttentionLayers()
	return float64(fl)*per/t + indexer, float64(wl) * per / t
}

// FLOPsPerToken returns the FLOPs of one token attending to contextTokens
// tokens: LinearFLOPsPerToken plus the attention FLOPs (the windowed part
// capped at AttentionWindow tokens).
func (a Arch) FLOPsPerToken(contextTokens int64) float64 {
	full, win := a.AttentionFLOPsPerContextToken()
	w := contextTokens
	if aw := a.AttentionWindow(); aw > 0 {
		w = min(contextTokens, int64(aw))
	}
	return a.LinearFLOPsPerToken() + full*float64(contextTokens) + win*float64(w)
}
