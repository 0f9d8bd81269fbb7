package kernel

import (
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"slices"
	"strings"

	"gonum.org/v1/gonum/optimize"

	"splitplan/arch"
	"splitplan/hw"
)

// MoEKernel names the kernel a serving engine runs a mixture-of-experts
// layer's routed experts with (its grouped GEMMs, routing, permutation
// and combine): engines ship their own, and at the same shape they differ
// by up to 3× (data/moe-kernels/README.md). "" is none measured: the
// routed experts run as dense GEMMs of their shape
// (Params.ExpertFraction).
type MoEKernel string

// The kernel families measured on the H100 (data/moe-kernels), by engine
// and the weights' path: vLLM's and SGLang's Triton fused_moe for bf16 and for
// block-scaled fp8 weights, their MXFP4 Triton kernels (W4A16), Marlin
// (4-bit weights dequantised to bf16 in the GEMM: int4, and MXFP4 or
// NVFP4 where the GPU has no FP4 tensor cores, as vLLM does when asked),
// and TensorRT-LLM's CUTLASS MoE (bf16, per-tensor and block-scaled fp8)
// and its W4A16 MXFP4 path.
const (
	VLLMTriton        MoEKernel = "vllm-triton"
	VLLMTritonFP8     MoEKernel = "vllm-triton-fp8-block"
	VLLMTritonMXFP4   MoEKernel = "vllm-triton-mxfp4"
	VLLMMarlin        MoEKernel = "vllm-marlin"
	SGLangTriton      MoEKernel = "sglang-triton"
	SGLangTritonFP8   MoEKernel = "sglang-triton-fp8-block"
	SGLangTritonMXFP4 MoEKernel = "sglang-triton-mxfp4"
	SGLangMarlin      MoEKernel = "sglang-marlin"
	TRTLLMCutlass     MoEKernel = "trtllm-cutlass"
	TRTLLMCutlassFP8  MoEKernel = "trtllm-cutlass-fp8-block"
	TRTLLMW4A16       MoEKernel = "trtllm-w4a16"

	// Blackwell's own (measured on a B200): FlashInfer's TensorRT-LLM-gen
	// MoE kernels in vLLM (bf16, per-tensor fp8 and NVFP4 weights; and
	// block-scaled fp8) and SGLang (bf16 and NVFP4; and block-scaled fp8),
	// TensorRT-LLM's CUTLASS NVFP4 kernel and its DeepGEMM path for
	// block-scaled fp8.
	VLLMTRTLLMGen      MoEKernel = "vllm-trtllm-gen"
	VLLMTRTLLMGenFP8   MoEKernel = "vllm-trtllm-gen-fp8-block"
	SGLangTRTLLMGen    MoEKernel = "sglang-trtllm-gen"
	SGLangTRTLLMGenFP8 MoEKernel = "sglang-trtllm-gen-fp8-block"
	TRTLLMCutlassFP4   MoEKernel = "trtllm-cutlass-nvfp4"
	TRTLLMDeepGEMMFP8  MoEKernel = "trtllm-deepgemm-fp8-block"
	// TensorRT-LLM's own TensorRT-LLM-gen MoE kernels on Blackwell
	// (moe_config backend TRTLLM): NVFP4 weights (AIConfigurator's
	// "min_latency" rows), and MXFP4 weights with MXFP8 activations,
	// multiplied at the fp8 rate (gpt-oss).
	TRTLLMGenFP4   MoEKernel = "trtllm-gen-nvfp4"
	TRTLLMGenMXFP4 MoEKernel = "trtllm-gen-w4a8-mxfp4"
	// VLLMMarlinBlackwell is vLLM's Marlin on Blackwell, fitted on the
	// B200's Marlin rows: the same kernel, but its warp-level MMAs do not
	// reach Blackwell's tensor-core peak, so the H100's fraction does not
	// carry (carried, it misses the B200's Marlin rows by a median 49%).
	VLLMMarlinBlackwell MoEKernel = "vllm-marlin-blackwell"
)

// Blackwell reports whether k is one of Blackwell's own kernels (fitted
// on a B200, checked on a GB200), not one carried from the H100.
func (k MoEKernel) Blackwell() bool {
	switch k {
	case VLLMTRTLLMGen, VLLMTRTLLMGenFP8, SGLangTRTLLMGen, SGLangTRTLLMGenFP8, TRTLLMCutlassFP4, TRTLLMGenFP4, TRTLLMGenMXFP4, TRTLLMDeepGEMMFP8, VLLMMarlinBlackwell:
		return true
	}
	return false
}

// ExpertKernelParams are a measured MoE kernel's constants: Compute, the
// fraction of the dense bf16 peak its grouped GEMMs reach
// (Params.ExpertCompute: carried to fp8 weights by the dense fp8/bf16
// ratio), which the kernel layer takes; and LatencyS, the measured op's
// fixed time (routing, alignment, launches), fitted beside it so that the
// small batches do not bias Compute but not carried into the layer: in the
// engines the small kernels around the grouped GEMMs overlap or fuse with
// their neighbours, and the per-layer engine terms, fitted on serving
// runs, stand for what is left (docs/model.md).
type ExpertKernelParams struct {
	Compute  float64
	LatencyS float64
}

// Switches are a launch script's settings that change which MoE kernel an
// engine runs; the zero value is the engine's default path.
type Switches struct {
	// MarlinMXFP4: vLLM runs MXFP4 experts through Marlin (its
	// VLLM_MXFP4_USE_MARLIN=1).
	MarlinMXFP4 bool
	// CutlassFP4: TensorRT-LLM runs NVFP4 experts on Blackwell through its
	// CUTLASS kernel (moe_config backend CUTLASS) instead of its
	// TensorRT-LLM-gen one.
	CutlassFP4 bool
}

// ExpertKernel returns the MoE kernel engine ("vllm", "sglang",
// "trtllm") runs model a's routed experts of weights w with on g, or ""
// for a dense model and where none is measured (the routed experts then
// run at the dense fraction). The
// kernels are the engines' defaults, from their source and launch
// scripts:
//   - before Blackwell (Ampere, Ada, Hopper; measured on the H100 and
//     carried by the spec sheet), vLLM and SGLang run bf16 and
//     block-scaled fp8 experts through their Triton kernels and
//     TensorRT-LLM through CUTLASS (the fp8 MoE checkpoints served,
//     DeepSeek's, Qwen's, MiniMax's, GLM's, are block-scaled); 4-bit
//     weights through Marlin, except MXFP4 on Hopper, which takes the
//     engines' W4A16 kernels (vLLM's and SGLang's Triton ones,
//     TensorRT-LLM's own), or Marlin in vLLM with sw.MarlinMXFP4 (its
//     VLLM_MXFP4_USE_MARLIN=1); fp8 weights on a GPU without fp8 tensor
//     cores run dequantised, not measured;
//   - on Blackwell (measured on the B200), FlashInfer's TensorRT-LLM-gen
//     kernels in vLLM (fp8, FP4, bf16) and in SGLang (bf16, fp8, FP4:
//     its --moe-runner-backend flashinfer_trtllm, which every InferenceX
//     SGLang script for the B200 and B300 passes; its Triton kernels,
//     carried from the H100, would be 1.3-1.4x too fast there: median
//     predicted/measured 0.77 bf16, 0.71 fp8 on the B200's Triton rows),
//     TensorRT-LLM's TensorRT-LLM-gen FP4 kernels (its moe_config
//     backend TRTLLM: InferenceX's DeepSeek NVFP4 scripts set it but
//     under attention DP, at high concurrency before February 2026, where
//     they take CUTLASS, sw.CutlassFP4; MXFP4 runs
//     nothing else on Blackwell, with MXFP8 activations) and its DeepGEMM
//     fp8 kernel, and Marlin for vLLM's int4 (its Blackwell fraction: the
//     H100's does not carry); TensorRT-LLM's bf16 CUTLASS carried from
//     the H100;
//   - on AMD's GPUs (not measured), vLLM's and SGLang's Triton kernels,
//     which ROCm runs too, for bf16 and fp8; 4-bit integer weights at the
//     lowest measured 4-bit fraction (vLLM's Marlin on Blackwell; SGLang's
//     Marlin), so that no GPU is faster on an unmeasured kernel than a
//     stronger one on a measured kernel; FP4 and TensorRT-LLM's none.
func ExpertKernel(engine string, a arch.Arch, w arch.Precision, g hw.GPU, sw Switches) MoEKernel {
	gen := hw.Generation(g.Name)
	if gen == "" || !a.IsMoE() {
		return ""
	}
	amd, blackwell, hopper := gen == "cdna3", gen == "blackwell", gen == "hopper"
	if w == arch.FP8 && g.Tensor(w) != arch.FP8 {
		return ""
	}
	switch engine {
	case "vllm":
		switch {
		case w == arch.INT4 && (blackwell || amd):
			return VLLMMarlinBlackwell
		case w == arch.INT4:
			return VLLMMarlin
		case amd && w == arch.FP4:
			return ""
		case blackwell && w == arch.FP8:
			return VLLMTRTLLMGenFP8
		case blackwell:
			return VLLMTRTLLMGen
		case w == arch.FP4 && (sw.MarlinMXFP4 || !hopper):
			return VLLMMarlin
		case w == arch.FP4:
			return VLLMTritonMXFP4
		case w == arch.FP8:
			return VLLMTritonFP8
		default:
			return VLLMTriton
		}
	case "sglang":
		switch {
		case w == arch.INT4:
			return SGLangMarlin
		case blackwell && w == arch.FP8:
			return SGLangTRTLLMGenFP8
		case blackwell:
			return SGLangTRTLLMGen
		case w == arch.FP4 && !hopper:
			return ""
		case w == arch.FP4:
			return SGLangTritonMXFP4
		case w == arch.FP8:
			return SGLangTritonFP8
		default:
			return SGLangTriton
		}
	case "trtllm":
		switch {
		case amd:
			return ""
		case blackwell && w == arch.FP4 && a.MXFP4:
			return TRTLLMGenMXFP4
		case blackwell && w == arch.FP4 && sw.CutlassFP4:
			return TRTLLMCutlassFP4
		case blackwell && w == arch.FP4:
			return TRTLLMGenFP4
		case blackwell && w == arch.FP8:
			return TRTLLMDeepGEMMFP8
		case (w == arch.FP4 || w == arch.INT4) && !hopper:
			return ""
		case w == arch.FP4 || w == arch.INT4:
			return TRTLLMW4A16
		case w == arch.FP8:
			return TRTLLMCutlassFP8
		default:
			return TRTLLMCutlass
		}
	}
	return ""
}

// ExpertFixedS returns the fixed time in seconds of one MoE layer's
// routed experts in the MoE kernel engine runs model a's experts of
// weights w with on g (ExpertKernel): the measured operator's LatencyS
// (its routing, block alignment and launches) for vLLM's and SGLang's
// kernels, which run those steps as kernels of their own; 0 for
// TensorRT-LLM, whose engine fuses them into its neighbours (the MoE
// operator measured alone carries them: applied, its serving TPOTs went
// too slow on 75% of its rows, docs/model.md), for a dense model and
// for an engine without MoE kernels.
//
// Measured fixed times differ by GPU where the kernels do (vLLM's Marlin:
// 119 µs on the B200, 66 µs on the H100), and a path measured nowhere on
// g has none of its own, so the value is made consistent with issue 28's
// property that a GPU with at least another's specs (hw.Dominates) is
// never slower, over the catalog (hw.Builtin) and g: a GPU whose kernel
// is measured takes the least measured fixed time of the GPUs it
// dominates, itself included (it could run their kernel); one whose path
// is not measured takes the greatest of the GPUs that dominate it (it is
// no faster than they are), 0 where none does.
func ExpertFixedS(engine string, a arch.Arch, w arch.Precision, g hw.GPU, sw Switches) float64 {
	if !a.IsMoE() || !(engine == "vllm" || engine == "sglang") {
		return 0
	}
	return expertFixedS(g, measuredPaths(engine, a, w, g, sw))
}

// measuredPath is the measured MoE kernel an engine runs on a GPU: the
// kernel whose constants the GPU takes (MoEKernel.On) and those constants.
type measuredPath struct {
	g  hw.GPU
	k  MoEKernel
	ek ExpertKernelParams
}

// measuredPaths returns the measured MoE kernel engine runs model a's
// experts of weights w with on each GPU of the catalog (hw.Builtin) and on
// g, leaving out the GPUs where none is measured: what ExpertFixedS and
// ExpertCompute hold a GPU's path against.
func measuredPaths(engine string, a arch.Arch, w arch.Precision, g hw.GPU, sw Switches) []measuredPath {
	gpus := hw.Builtin()
	if !slices.Contains(gpus, g) {
		gpus = append(gpus, g)
	}
	var out []measuredPath
	for _, h := range gpus {
		k := ExpertKernel(engine, a, w, h, sw).On(h)
		if ek, ok := ExpertKernels[k]; ok && k != "" {
			out = append(out, measuredPath{h, k, ek})
		}
	}
	return out
}

// expertFixedS is ExpertFixedS on g of a vLLM or SGLang MoE model, the
// catalog's paths measured.
func expertFixedS(g hw.GPU, paths []measuredPath) float64 {
	own := false // g's path is measured
	for _, p := range paths {
		own = own || p.g == g
	}
	// least is the fixed time of a GPU whose path is measured.
	least := func(h hw.GPU) float64 {
		v := math.Inf(1)
		for _, l := range paths {
			if hw.Dominates(h, l.g) {
				v = min(v, l.ek.LatencyS)
			}
		}
		return v
	}
	if own {
		return least(g)
	}
	v := 0.0
	for _, h := range paths {
		if hw.Dominates(h.g, g) {
			v = max(v, least(h.g))
		}
	}
	return v
}

// ExpertCompute returns the compute fraction (ExpertKernelParams.Compute)
// of the MoE kernel engine runs model a's experts of weights w with on g
// (ExpertKernel), 0 where none is measured. A kernel fitted on g's own
// generation keeps its fitted fraction. One carried to another generation
// (Hopper's kernels on Ampere, Ada and AMD's GPUs) is kept between the
// throughputs (fraction × g.PeakFLOPs(w)) of the GPUs of the catalog
// whose kernels are fitted on their own generation: no more than the
// least of those that dominate g (hw.Dominates), no less than the greatest
// of those g dominates, so that issue 28's property holds for it. (SGLang's
// Triton fp8 kernel carried to the MI300X would otherwise beat the B200,
// which runs FlashInfer's at 0.15 of its bf16 peak.)
func ExpertCompute(engine string, a arch.Arch, w arch.Precision, g hw.GPU, sw Switches) float64 {
	k := ExpertKernel(engine, a, w, g, sw).On(g)
	if _, ok := ExpertKernels[k]; k == "" || !ok {
		return 0
	}
	return expertCompute(w, g, k, measuredPaths(engine, a, w, g, sw))
}

// expertCompute is ExpertCompute on g of measured kernel k, the catalog's
// paths measured.
func expertCompute(w arch.Precision, g hw.GPU, k MoEKernel, paths []measuredPath) float64 {
	c := ExpertKernels[k].Compute
	if ownGeneration(k, g) {
		return c
	}
	peak := g.PeakFLOPs(w)
	lo, hi := 0.0, math.Inf(1)
	for _, p := range paths {
		if p.g.Name == g.Name || !ownGeneration(p.k, p.g) {
			continue
		}
		t := p.ek.Compute * p.g.PeakFLOPs(w)
		if hw.Dominates(p.g, g) {
			hi = min(hi, t)
		}
		if hw.Dominates(g, p.g) {
			lo = max(lo, t)
		}
	}
	if lo <= hi {
		c = min(max(c, lo/peak), hi/peak)
	}
	return c
}

// ownGeneration reports whether kernel k is fitted on g's generation
// (FittedOn).
func ownGeneration(k MoEKernel, g hw.GPU) bool {
	return hw.Generation(k.FittedOn()) == hw.Generation(g.Name)
}

// MoEPath is how a serving engine runs a model's routed experts on a GPU:
// its MoE kernel (ExpertKernel; "" for none measured, or a dense model),
// the kernel's compute fraction there (ExpertCompute) and its fixed time
// per MoE layer (ExpertFixedS).
type MoEPath struct {
	Kernel  MoEKernel
	Compute float64
	FixedS  float64
}

// EnginePath returns the MoEPath engine runs model a's experts of weights
// w with on g under the script's switches sw (the catalog's paths looked
// up once for ExpertCompute and ExpertFixedS).
func EnginePath(engine string, a arch.Arch, w arch.Precision, g hw.GPU, sw Switches) MoEPath {
	m := MoEPath{Kernel: ExpertKernel(engine, a, w, g, sw)}
	if !a.IsMoE() {
		return m
	}
	paths := measuredPaths(engine, a, w, g, sw)
	if k := m.Kernel.On(g); k != "" {
		if _, ok := ExpertKernels[k]; ok {
			m.Compute = expertCompute(w, g, k, paths)
		}
	}
	if engine == "vllm" || engine == "sglang" {
		// (a path measured nowhere on g still takes the fixed time of
		// the GPUs that dominate it)
		m.FixedS = expertFixedS(g, paths)
	}
	return m
}

// Source describes the path in a provenance, as a clause to append ("" for
// neither a kernel nor a fixed time).
func (m MoEPath) Source() string {
	var out string
	if m.Kernel != "" {
		out = "; routed experts in MoE kernel " + string(m.Kernel)
		if ek, ok := ExpertKernels[m.Kernel]; ok && m.Compute > 0 && m.Compute < ek.Compute {
			out += fmt.Sprintf(" (at %.3g of the bf16 peak: no faster than on the GPUs with at least its specs)", m.Compute)
		}
	}
	switch {
	case m.FixedS > 0 && m.Kernel != "":
		out += fmt.Sprintf(" with %.0f µs of routing a layer", m.FixedS*1e6)
	case m.FixedS > 0:
		out += fmt.Sprintf("; MoE routing %.0f µs a layer, as on the GPUs with at least its specs", m.FixedS*1e6)
	}
	return out
}

// WithMoEPath returns p as an engine's path m runs the routed experts:
// WithExpertKernel(m.Kernel), then m.Compute as the routed experts'
// compute fraction and m.FixedS as their routing time (ExpertLayerS),
// each where positive.
func (p Params) WithMoEPath(m MoEPath) Params {
	p = p.WithExpertKernel(m.Kernel)
	if _, ok := ExpertKernels[m.Kernel]; ok && m.Compute > 0 {
		p.ExpertCompute = m.Compute
	}
	if m.FixedS > 0 {
		p.ExpertLayerS = m.FixedS
	}
	return p
}

// Experts are the routed experts' constants of a kernel layer
// (Params.ExpertCompute, ExpertLayerS, ExpertTileRows).
type Experts struct {
	Compute, LayerS, TileRows float64
}

// ProfiledExpertRuns are the tools/gpu-profile MoE runs (folders of
// data/gpu-runs/h100 and h200, each named after its model)
// ProfiledExperts is fitted and checked on.
var ProfiledExpertRuns = []string{"qwen3-30b-a3b", "mixtral-8x7b", "gpt-oss-120b", "deepseek-r1"}

// WithProfiledExperts returns p with ProfiledExperts as its routed
// experts' constants when it has none of its own (ExpertCompute 0): the
// engine-free layer (--engine none) prices an MoE layer as the profiler
// measures one, PyTorch's grouped GEMMs with their routing and tiles. An
// engine's kernel replaces them (WithExpertKernel).
func (p Params) WithProfiledExperts() Params {
	if p.ExpertCompute != 0 {
		return p
	}
	p.ExpertCompute, p.ExpertLayerS, p.ExpertTileRows = ProfiledExperts.Compute, ProfiledExperts.LayerS, ProfiledExperts.TileRows
	return p
}

// WithExpertKernel returns p with the measured compute fraction of k in
// place of its own routed-expert one, and without its own routing time
// and tile (ExpertLayerS, ExpertTileRows: measured on a profiler's
// grouped GEMMs, not the engine's kernel; the kernel's own fixed time,
// where an engine runs it, comes from ExpertFixedS: WithMoEPath); p itself
// for "" or an unmeasured k.
func (p Params) WithExpertKernel(k MoEKernel) Params {
	if ek, ok := ExpertKernels[k]; ok {
		p.ExpertCompute = ek.Compute
		p.ExpertLayerS, p.ExpertTileRows = 0, 0
	}
	return p
}

// MoERow is one measured MoE layer (AIConfigurator's moe op, balanced
// routing, experts sliced over TP): Tokens tokens of Hidden, each routed
// to TopK of Experts experts of FFN width Inter, sliced over TP GPUs.
type MoERow struct {
	// Line is the row's line in its file.
	Line                  int
	Engine, Kernel, DType string
	Tokens                int
	Hidden, Inter         int
	TopK, Experts, TP     int
	TimeS                 float64
	// Weights is the precision of the experts' weights (DType's).
	Weights arch.Precision
}

// Family returns the MoE kernel family of the row's kernel and weights,
// "" for one not in a family.
func (r MoERow) Family() MoEKernel {
	k := r.Kernel
	switch {
	case strings.Contains(k, "marlin") && r.Engine == "vllm":
		return VLLMMarlin
	case strings.Contains(k, "marlin") && r.Engine == "sglang":
		return SGLangMarlin
	case k == "vllm_unquantizedfusedmoe_triton_tritonexperts" && r.DType == "bfloat16":
		return VLLMTriton
	case k == "vllm_fp8moe_triton_tritonexperts" && r.DType == "fp8_block":
		return VLLMTritonFP8
	case strings.HasPrefix(k, "vllm_gptossmxfp4moe_triton") && r.DType == "w4a16_mxfp4":
		return VLLMTritonMXFP4
	case k == "sglang_fused_moe_triton":
		switch r.DType {
		case "bfloat16":
			return SGLangTriton
		case "fp8_block":
			return SGLangTritonFP8
		case "w4a16_mxfp4":
			return SGLangTritonMXFP4
		}
	case k == "moe_torch_flow_cutlass":
		switch r.DType {
		case "bfloat16", "fp8":
			return TRTLLMCutlass
		case "fp8_block":
			return TRTLLMCutlassFP8
		case "nvfp4":
			return TRTLLMCutlassFP4
		}
	case k == "moe_torch_flow" && r.DType == "w4a16_mxfp4":
		return TRTLLMW4A16
	case k == "moe_torch_flow" && r.DType == "w4a8_mxfp4_mxfp8":
		return TRTLLMGenMXFP4
	case k == "moe_torch_flow_min_latency" && r.DType == "nvfp4":
		return TRTLLMGenFP4
	case r.Engine == "vllm" && strings.Contains(k, "_flashinfer_trtllm_trtllm") && !strings.HasSuffix(k, "modular"):
		switch r.DType {
		case "fp8_block":
			return VLLMTRTLLMGenFP8
		case "bfloat16", "fp8", "nvfp4":
			return VLLMTRTLLMGen
		}
	case k == "sglang_flashinfer_trtllm_moe":
		switch r.DType {
		case "fp8_block":
			return SGLangTRTLLMGenFP8
		case "bfloat16", "nvfp4":
			return SGLangTRTLLMGen
		}
	case k == "deepgemm" && r.DType == "fp8_block":
		return TRTLLMDeepGEMMFP8
	}
	return ""
}

// BlackwellMarlin reports whether vLLM's Marlin fit on Blackwell
// (VLLMMarlinBlackwell) takes r: a Marlin row of int4 weights, the only
// ones Blackwell runs through Marlin.
func (r MoERow) BlackwellMarlin() bool { return r.Family() == VLLMMarlin && r.DType == "int4_wo" }

// moeWeights returns the precision of weights of moe_dtype dtype.
func moeWeights(dtype string) (arch.Precision, error) {
	switch dtype {
	case "bfloat16":
		return arch.BF16, nil
	case "fp8", "fp8_block":
		return arch.FP8, nil
	case "w4a16_mxfp4", "w4a8_mxfp4_mxfp8", "nvfp4":
		return arch.FP4, nil
	case "int4_wo":
		return arch.INT4, nil
	}
	return 0, fmt.Errorf("moe_dtype %q: expected bfloat16, fp8, fp8_block, w4a16_mxfp4, w4a8_mxfp4_mxfp8, nvfp4 or int4_wo", dtype)
}

// moeColumns are the columns of a MoE measurement file.
var moeColumns = []string{"engine", "kernel_source", "moe_dtype", "num_tokens", "hidden_size", "inter_size", "topk", "num_experts", "moe_tp_size", "latency_ms"}

// ReadMoEFile reads the MoE measurement file at path (ReadMoECSV).
func ReadMoEFile(path string) ([]MoERow, error) {
	return readFile(path, ReadMoECSV)
}

// ReadMoECSV reads a MoE measurement file (gzip-compressed when its name
// ends in .gz); name is used in errors, which name the file and line.
func ReadMoECSV(r io.Reader, name string) ([]MoERow, error) {
	return readMeasurements(r, name, moeColumns, func(line int, rec []string, idx map[string]int) (MoERow, error) {
		r := MoERow{Line: line, Engine: rec[idx["engine"]], Kernel: rec[idx["kernel_source"]], DType: rec[idx["moe_dtype"]]}
		if err := positiveInts(name, line, rec, idx, intField{"num_tokens", &r.Tokens}, intField{"hidden_size", &r.Hidden}, intField{"inter_size", &r.Inter},
			intField{"topk", &r.TopK}, intField{"num_experts", &r.Experts}, intField{"moe_tp_size", &r.TP}); err != nil {
			return MoERow{}, err
		}
		if r.TopK > r.Experts {
			return MoERow{}, fmt.Errorf("%s:%d: topk %d exceeds num_experts %d", name, line, r.TopK, r.Experts)
		}
		if r.Inter%r.TP != 0 {
			return MoERow{}, fmt.Errorf("%s:%d: inter_size %d does not divide over moe_tp_size %d", name, line, r.Inter, r.TP)
		}
		var err error
		if r.TimeS, err = latencySeconds(name, line, rec, idx); err != nil {
			return MoERow{}, err
		}
		if r.Weights, err = moeWeights(r.DType); err != nil {
			return MoERow{}, fmt.Errorf("%s:%d: %w", name, line, err)
		}
		return r, nil
	})
}

// MoETime returns the time of one MoE layer's routed experts as the row
// measures them, with p's constants and the kernel's ek: the gate-up and
// down grouped GEMMs of each GPU's slice of the experts the row's tokens
// touch, as Layer computes them (group.addRouted) with ek.Compute, plus
// ek.LatencyS.
func MoETime(p Params, ek ExpertKernelParams, g hw.GPU, r MoERow) float64 {
	h, in, tp := float64(r.Hidden), float64(r.Inter), float64(r.TP)
	p.ExpertCompute = ek.Compute
	q := p.experts()
	var gr group
	gr.expert[0], gr.expert[1] = q.gemmOf(g, r.Weights, 2*in/tp, h), q.gemmOf(g, r.Weights, h, in/tp)
	gr.routing(float64(r.Experts), float64(r.TopK))
	s, _, _ := gr.addRouted(float64(r.Tokens), 1, p.Blend, ek.LatencyS, 0, 0)
	return s
}

// FitExpertKernels fits each MoE kernel family's constants on rows
// measured on g, every other constant of p frozen: the compute fraction
// and the fixed time minimising the squared log errors of MoETime
// (Nelder–Mead from the dense fraction and two GEMM launches). Rows
// outside a family are ignored; a family needs rows at 2 token counts at
// least.
func FitExpertKernels(p Params, g hw.GPU, rows []MoERow) (map[MoEKernel]ExpertKernelParams, error) {
	by := map[MoEKernel][]MoERow{}
	for _, r := range rows {
		if f := r.Family(); f != "" {
			by[f] = append(by[f], r)
		}
	}
	if len(by) == 0 {
		return nil, errors.New("kernel fit: no MoE row of a known kernel family")
	}
	out := map[MoEKernel]ExpertKernelParams{}
	fams := make([]MoEKernel, 0, len(by))
	for f := range by {
		fams = append(fams, f)
	}
	slices.Sort(fams)
	sig := func(v float64) float64 { return MaxComputeFraction / (1 + math.Exp(-v)) }
	for _, f := range fams {
		rs := by[f]
		at := func(x []float64) ExpertKernelParams {
			return ExpertKernelParams{Compute: sig(x[0]), LatencyS: math.Exp(x[1])}
		}
		loss := func(x []float64) float64 {
			ek := at(x)
			var s float64
			for _, r := range rs {
				t := MoETime(p, ek, g, r)
				if !(t > 0) {
					return math.Inf(1)
				}
				e := math.Log(t / r.TimeS)
				s += e * e
			}
			return s
		}
		c := min(max(p.GEMMCompute/MaxComputeFraction, 1e-6), 1-1e-6)
		x0 := []float64{math.Log(c / (1 - c)), math.Log(2 * p.GEMMLatencyS)}
		res, err := optimize.Minimize(optimize.Problem{Func: loss}, x0,
			&optimize.Settings{FuncEvaluations: 4000, Converger: &optimize.FunctionConverge{Absolute: 1e-12, Iterations: 200}}, &optimize.NelderMead{})
		if err != nil && res == nil {
			return nil, fmt.Errorf("kernel fit of MoE kernel %s: %w", f, err)
		}
		ek := at(res.X)
		q := p
		q.ExpertCompute = ek.Compute
		if err := q.Validate(); err != nil {
			return nil, fmt.Errorf("kernel fit of MoE kernel %s: %w", f, err)
		}
		if !(ek.LatencyS <= 1) {
			return nil, fmt.Errorf("kernel fit of MoE kernel %s: fixed time %v s: expected at most 1 s", f, ek.LatencyS)
		}
		out[f] = ek
	}
	return out, nil
}

// On returns the kernel whose constants k's rows take on g: on Blackwell,
// vLLM's Marlin takes its Blackwell fit (VLLMMarlinBlackwell), as
// ExpertKernel chooses for int4 weights there; k itself elsewhere.
func (k MoEKernel) On(g hw.GPU) MoEKernel {
	if k == VLLMMarlin && hw.Generation(g.Name) == "blackwell" {
		return VLLMMarlinBlackwell
	}
	return k
}

// FittedOn returns the GPU k is fitted on: the B200 for Blackwell's own
// kernels, the H100 for the others.
func (k MoEKernel) FittedOn() string {
	if k.Blackwell() {
		return "b200_sxm"
	}
	return "h100_sxm"
}

// KernelsOn returns ks as the rows of each kernel family measured on g
// take them (MoEKernel.On).
func KernelsOn(ks map[MoEKernel]ExpertKernelParams, g hw.GPU) map[MoEKernel]ExpertKernelParams {
	out := maps.Clone(ks)
	for k := range ks {
		if e, ok := ks[k.On(g)]; ok {
			out[k] = e
		}
	}
	return out
}

// MoEValidation is the MoE kernels' error on a file's rows of one GPU:
// per family, the median and P90 absolute % error.
type MoEValidation map[MoEKernel]Summary

// ValidateExpertKernels predicts every row of a known family with p and
// that family's constants in ks.
func ValidateExpertKernels(p Params, g hw.GPU, ks map[MoEKernel]ExpertKernelParams, rows []MoERow) MoEValidation {
	errs := map[MoEKernel][]float64{}
	var all []float64
	for _, r := range rows {
		f := r.Family()
		ek, ok := ks[f]
		if f == "" || !ok {
			continue
		}
		e := 100 * math.Abs(MoETime(p, ek, g, r)/r.TimeS-1)
		errs[f] = append(errs[f], e)
		all = append(all, e)
	}
	v := MoEValidation{}
	for f, e := range errs {
		v[f] = summarize(e)
	}
	v[MoEKernel(Pooled)] = summarize(all)
	return v
}
