package measured

import (
	"fmt"
	"strings"

	"splitplan/arch"
	"splitplan/evaluator/perf/kernel"
	"splitplan/hw"
	"splitplan/memory"
)

// The engine flags of the runs' recipes that the rows do not record.
// InferenceX publishes the launch script of every configuration it
// measures (benchmarks/…/<model>_<precision>_<gpu>.sh in
// SemiAnalysisAI/InferenceX); the ones that change the schedule are
// applied here to the rows they ran, as the engine was configured, not
// fitted.

// sglangRecvInterval returns the --scheduler-recv-interval of the SGLang
// recipe that ran r, 1 (SGLang's default) where no recipe sets it.
// InferenceX's SGLang scripts for B200 and B300 (DeepSeek-R1/V3 fp8 and
// fp4, Qwen3.5 bf16, fp8 and fp4, every version from September 2025 to
// April 2026) pass 10 below 16 clients and 30 from 16 on ("relax to ~30
// requests between scheduler recv polls"), except DeepSeek fp8 at TP 4
// and Qwen3.5 fp8 on B300 (10 at every concurrency) and attention-DP
// layouts (1: the skipper does not support DP attention); the H200
// scripts, and AIConfigurator's own runs, leave it at 1, and so does a
// model whose scripts were not read.
func sglangRecvInterval(r Row) int {
	if r.Engine != SGLang || !inferenceXRun(r) || r.Agg.AttentionDP > 1 {
		return 1
	}
	sc := scriptOf(r)
	if !sc.on("b200", "b300") || !sc.of("deepseek") && !sc.of("qwen3.5") {
		return 1
	}
	fp8 := !sc.in("fp4") && !sc.in("bf16")
	// (Qwen3.5 fp8's own B300 script dates from 2026-04-17; the runs
	// before it used the B200 script's rule.)
	if fp8 && (sc.of("deepseek") && r.Agg.TP == 4 || sc.of("qwen3.5") && sc.on("b300") && sc.since("2026-04-17")) {
		return 10
	}
	if r.Concurrency >= 16 {
		return 30
	}
	return 10
}

// measuredOn returns the date the silicon_data_source column gives for
// r's run (measured=YYYY-MM-DD), "" when it gives none.
func measuredOn(r Row) string {
	_, after, ok := strings.Cut(r.Source, "measured=")
	if !ok || len(after) < len("2006-01-02") {
		return ""
	}
	return after[:len("2006-01-02")]
}

// script is what the recipes read of a run to know its launch script:
// its GPU, model and precision columns, lower-cased, and its measured=
// date.
type script struct{ gpu, model, precision, date string }

func scriptOf(r Row) script {
	return script{strings.ToLower(r.GPU), strings.ToLower(r.Model), strings.ToLower(r.Precision), measuredOn(r)}
}

// on reports whether the run's GPU is one of gpus (a prefix of its name:
// b200 for b200_sxm).
func (s script) on(gpus ...string) bool {
	for _, g := range gpus {
		if strings.HasPrefix(s.gpu, g) {
			return true
		}
	}
	return false
}

// of reports whether the run's model path names model.
func (s script) of(model string) bool { return strings.Contains(s.model, model) }

// in reports whether the run's precision column names p (fp4 in nvfp4).
func (s script) in(p string) bool { return strings.Contains(s.precision, p) }

// since reports whether the run was measured on day or later (an undated
// run never was).
func (s script) since(day string) bool { return s.date >= day }

// before reports whether the run is dated, earlier than day.
func (s script) before(day string) bool { return s.date != "" && s.date < day }

// inferenceXRun reports whether r is one of SemiAnalysis InferenceX's
// single-node (agg) runs, whose scripts the recipes here are read from
// (its CSV exports and database dumps, and the gap analyses built on
// them), rather than AIConfigurator's own aiperf runs or a
// disaggregated deployment (launched by other scripts).
func inferenceXRun(r Row) bool {
	return r.Mode == Agg && !strings.Contains(r.Source, "aic-auto-gap-analysis")
}

// sglangRecipe returns, for an InferenceX SGLang run, the token budget of
// one prefill batch (the smaller of the recipe's --chunked-prefill-size
// and --max-prefill-tokens, SGLang's default 16384 where only the chunk
// is given) and its --mem-fraction-static; 0 and 0 where no recipe is
// known (the rule of EngineBatching and the memory model's default then
// apply). From the scripts the rows ran (September 2025 – April 2026):
//
//	DeepSeek-R1/V3 fp8, B200/B300, TP 8   32768 / 32768, 0.82
//	DeepSeek-R1/V3 fp8, B200/B300, TP 4    8192 /  8192, 0.95
//	DeepSeek-R1/V3 fp4, B200/B300         16384 / (16384), 0.85
//	DeepSeek-R1/V3 fp8, H200              32768 / 32768, 0.82
//	Qwen3.5 fp8/bf16, B200                32768 / 32768, 0.82
//	Qwen3.5 fp4, B200                     32768 / 32768, 0.85
//	Qwen3.5 bf16, B300                    32768 / 32768, 0.82
//	Qwen3.5 fp4, B300                     32768 / 32768, 0.8
//	Qwen3.5 fp8, B300                     16384 / 16384, 0.8 (from 2026-04-17; before, the B200 script's)
//	Qwen3.5 fp8, H200                     16384 / (16384), 0.8
//	GLM-5 fp8, B200 (and B300)            32768 / 32768, 0.85
//	GLM-5 fp8, H200                       (SGLang's 8192), 0.85
func sglangRecipe(r Row) (budget int, memFraction float64) {
	if r.Engine != SGLang || !inferenceXRun(r) {
		return 0, 0
	}
	sc := scriptOf(r)
	deepseek, qwen, glm := sc.of("deepseek"), sc.of("qwen3.5"), sc.of("glm-5")
	switch {
	case glm && sc.on("b200", "b300") && !sc.in("fp4"):
		// glm5_fp8_b200.sh of the runs' dates (its own B300 script dates
		// from 2026-04-17, after the B300 runs, which copy it); the fp4
		// script dates from after its runs: no recipe.
		return 32768, 0.85
	case glm && sc.on("h200"):
		return 8192, 0.85 // glm5_fp8_h200.sh: only the memory share; SGLang's chunk below 160 GiB
	case deepseek && sc.on("b200", "b300") && sc.in("fp4"):
		return 16384, 0.85
	case deepseek && sc.on("b200", "b300") && r.Agg.TP == 4:
		return 8192, 0.95
	case deepseek && sc.on("b200", "b300", "h200"):
		return 32768, 0.82
	case qwen && sc.on("b200") && sc.in("fp4"):
		return 32768, 0.85
	case qwen && sc.on("b200"):
		return 32768, 0.82
	case qwen && sc.on("b300") && sc.in("bf16"):
		return 32768, 0.82
	case qwen && sc.on("b300") && sc.in("fp4"):
		return 32768, 0.8
	case qwen && sc.on("b300") && !sc.since("2026-04-17"):
		return 32768, 0.82 // (before its own B300 script: the B200 script's)
	case qwen && sc.on("b300", "h200"):
		return 16384, 0.8
	}
	return 0, 0
}

// trtRecipe is what InferenceX's TensorRT-LLM scripts set for a run:
// the iteration's token budget (max_num_tokens), the running limit
// (max_batch_size), the KV cache's share of the memory left free
// (kv_cache_config.free_gpu_memory_fraction) and, with attention DP,
// the balancer's timeout (attention_dp_config: enable_balance,
// batching_wait_iters 0, timeout_iters 60). Zero fields: no recipe known.
type trtRecipe struct {
	budget, maxRunning int
	freeFraction       float64
	balanceTimeout     int
	balanceBatchWait   int // batching_wait_iters (with balanceTimeout)
	// cutlassMoE: moe_config backend CUTLASS rather than TRTLLM (the
	// TensorRT-LLM-gen kernels) for NVFP4 experts (dsr1CutlassMoE).
	cutlassMoE bool
}

// dsr1CutlassMoE reports whether InferenceX's DeepSeek NVFP4 script for
// the B200 ran r's experts through CUTLASS (moe_config backend CUTLASS)
// rather than its default TRTLLM: before 2026-02-03 (its PR #620) at 256
// clients and more with 1,024-token prompts and beyond 32 with 8,192-token
// ones, from then on under attention DP.
func dsr1CutlassMoE(r Row, sc script) bool {
	if sc.since("2026-02-03") {
		return r.Agg.AttentionDP > 1
	}
	return r.InputTokens == 1024 && r.Concurrency >= 256 || r.InputTokens == 8192 && r.OutputTokens == 1024 && r.Concurrency > 32
}

// trtllmRecipe returns the recipe of an InferenceX TensorRT-LLM run. From
// the scripts of the rows' dates (September 2025 – February 2026; the
// 8192-token floor on DeepSeek's budget and its batch waiting came in
// March 2026, after them):
//
//	DeepSeek-R1/V3, B200 fp8   budget ⌈concurrency + isl + 64⌉₆₄, 256 running, 0.8 free, balance 60 with DP
//	DeepSeek-R1/V3, B200 fp4   the same, 512 running, MoE backend TRTLLM or CUTLASS (dsr1CutlassMoE)
//	DeepSeek-R1/V3, H200 fp8   the same, 128 running, 0.75 free
//	gpt-oss-120b, B200         budget 20000, 512 running, 0.85 free, balance with DP
//	                           at TensorRT-LLM's defaults (timeout_iters 50, batching_wait_iters 10)
//	gpt-oss-120b, H200         budget 20000, concurrency running, 0.85 free
func trtllmRecipe(r Row) trtRecipe {
	if r.Engine != TRTLLM || !inferenceXRun(r) {
		return trtRecipe{}
	}
	sc := scriptOf(r)
	switch {
	case sc.of("deepseek") && sc.on("b200", "h200"):
		rc := trtRecipe{budget: (r.Concurrency + r.InputTokens + 64 + 63) / 64 * 64, maxRunning: 256, freeFraction: 0.8}
		if sc.in("fp4") {
			rc.maxRunning = 512
			rc.cutlassMoE = sc.on("b200") && dsr1CutlassMoE(r, sc)
		}
		if sc.on("h200") {
			rc.maxRunning, rc.freeFraction = 128, 0.75
		}
		if r.Agg.AttentionDP > 1 {
			rc.balanceTimeout = 60
		}
		return rc
	case sc.of("gpt-oss") && sc.on("b200"):
		rc := trtRecipe{budget: 20000, maxRunning: 512, freeFraction: 0.85}
		if r.Agg.AttentionDP > 1 {
			rc.balanceTimeout, rc.balanceBatchWait = 50, 10
		}
		return rc
	case sc.of("gpt-oss") && sc.on("h200"):
		return trtRecipe{budget: 20000, maxRunning: max(1, r.Concurrency), freeFraction: 0.85}
	}
	return trtRecipe{}
}

// vllmBudget returns the max-num-batched-tokens of the vLLM script that
// ran r, 0 where none is known: InferenceX's gpt-oss-120b scripts (H100,
// H200, B200, every version of the rows' dates) pass 8192; the others
// leave vLLM's defaults or set only what does not bind here
// (max-num-seqs at the clients, gpu-memory-utilization 0.9).
func vllmBudget(r Row) int {
	if r.Engine != VLLM || !inferenceXRun(r) || !scriptOf(r).of("gpt-oss") {
		return 0
	}
	return 8192
}

// bf16KV reports whether the InferenceX script that ran r left the KV
// cache at the engine's default, the model's dtype (BF16), where the rule
// of rowPrecisions (an fp8 cache for fp8 and fp4 weights) would take fp8.
// From the scripts' histories (--kv-cache-dtype for vLLM and SGLang,
// kv_cache_config.dtype for TensorRT-LLM), by the run's measured= date
// where a script changed (a run without a date keeps the rule):
//
//	vLLM gpt-oss-120b, H100 and H200        never set: BF16
//	vLLM gpt-oss-120b, B200                  fp8 from 2025-12-05
//	vLLM MiniMax-M2.5 fp8, H100 and H200     fp8 only from 2026-05-15 (after every run)
//	vLLM MiniMax-M2.5 fp8, B200              fp8 from 2026-04-03
//	SGLang DeepSeek-R1/V3 fp8, H200          never set: BF16
//	TensorRT-LLM gpt-oss-120b, H200          dtype: auto (BF16)
//
// The engines' default takes the checkpoint's KV-cache quantization where
// it has one: NVIDIA's NVFP4 checkpoints (Kimi-K2.5 fp4, whose B200 and
// B300 scripts set no dtype before April and May 2026) declare an fp8
// cache, so the rule holds for them; MiniMax's and DeepSeek's own fp8
// checkpoints and gpt-oss declare none. MiniMax fp4 and fp8 on B300,
// MiniMax fp4 on B200, DeepSeek and Qwen3.5 on Blackwell, Qwen3.5 fp8 on
// H200 and TensorRT-LLM's other scripts set fp8 from their first version.
func bf16KV(r Row) bool {
	if !inferenceXRun(r) {
		return false
	}
	sc := scriptOf(r)
	fp8 := sc.precision == "fp8"
	switch r.Engine {
	case VLLM:
		switch {
		case sc.of("gpt-oss"):
			return sc.on("h100", "h200") || sc.on("b200") && sc.before("2025-12-05")
		case sc.of("minimax") && fp8:
			return sc.on("h100", "h200") && sc.before("2026-05-15") || sc.on("b200") && sc.before("2026-04-03")
		}
	case SGLang:
		return sc.of("deepseek") && fp8 && sc.on("h200")
	case TRTLLM:
		return sc.of("gpt-oss") && sc.on("h200")
	}
	return false
}

// vllmUtilization returns the --gpu-memory-utilization of the vLLM script
// that ran r where it is not vLLM's default of 0.9 (0 otherwise): 0.95 for
// MiniMax-M2.5 fp8 on H200, and on B200 before 2026-04-03, and for
// Kimi-K2.5 int4 on B200 and H200 (every version of those scripts to
// April 2026; gpt-oss, Kimi fp4, MiniMax on H100 and B300 and MiniMax fp4
// pass 0.9).
func vllmUtilization(r Row) float64 {
	if r.Engine != VLLM || !inferenceXRun(r) {
		return 0
	}
	sc := scriptOf(r)
	switch {
	case sc.of("minimax") && sc.precision == "fp8":
		if sc.on("h200") || sc.on("b200") && sc.before("2026-04-03") {
			return 0.95
		}
	case sc.of("kimi") && sc.precision == "int4":
		if sc.on("h200", "b200") {
			return 0.95
		}
	}
	return 0
}

// recipe is what a run's launch script changes in its prediction: the
// batching (zero fields keep the engine's rule, EngineBatching), the
// memory settings that size the KV cache (zero: the memory model's
// default) and the flags as the script writes them (LaunchFlags).
type recipe struct {
	// bf16KV: the script kept the KV cache in BF16 (bf16KV).
	bf16KV                           bool
	recvInterval, budget, maxRunning int
	balanceTimeout, balanceBatchWait int
	memory                           memory.Settings
	// moe: the script's switches of the MoE kernel (vLLM's Marlin for
	// MXFP4, vllmMarlinMXFP4; TensorRT-LLM's CUTLASS for NVFP4,
	// trtRecipe.cutlassMoE).
	moe   kernel.Switches
	flags []string
}

// recipeOf returns r's recipe: its engine's script rules above, combined.
func recipeOf(r Row) recipe {
	var rc recipe
	if bf16KV(r) {
		rc.bf16KV = true
		rc.flags = append(rc.flags, "KV cache dtype auto (bf16)")
	}
	switch r.Engine {
	case SGLang:
		if n := sglangRecvInterval(r); n > 1 {
			rc.recvInterval = n
			rc.flags = append(rc.flags, fmt.Sprintf("--scheduler-recv-interval %d", n))
		}
		if budget, mem := sglangRecipe(r); budget > 0 {
			rc.budget, rc.memory = budget, memory.Settings{StaticFraction: mem}
			rc.flags = append(rc.flags, fmt.Sprintf("--chunked-prefill-size/--max-prefill-tokens %d", budget), fmt.Sprintf("--mem-fraction-static %g", mem))
		}
	case TRTLLM:
		if t := trtllmRecipe(r); t.budget > 0 {
			rc.budget, rc.maxRunning = t.budget, t.maxRunning
			rc.balanceTimeout, rc.balanceBatchWait = t.balanceTimeout, t.balanceBatchWait
			rc.memory = memory.Settings{FreeFraction: t.freeFraction, MaxBatchedTokens: t.budget}
			if rc.moe.CutlassFP4 = t.cutlassMoE; t.cutlassMoE {
				rc.flags = append(rc.flags, "moe_config backend CUTLASS")
			}
			rc.flags = append(rc.flags, fmt.Sprintf("max_num_tokens %d", t.budget), fmt.Sprintf("max_batch_size %d", t.maxRunning),
				fmt.Sprintf("free_gpu_memory_fraction %g", t.freeFraction))
			if t.balanceTimeout > 0 {
				rc.flags = append(rc.flags, fmt.Sprintf("attention_dp_config enable_balance timeout_iters %d batching_wait_iters %d", t.balanceTimeout, t.balanceBatchWait))
			}
		}
	case VLLM:
		if v := vllmBudget(r); v > 0 {
			rc.budget = v
			rc.flags = append(rc.flags, fmt.Sprintf("--max-num-batched-tokens %d", v))
		}
		if u := vllmUtilization(r); u > 0 {
			rc.memory = memory.Settings{Utilization: u}
			rc.flags = append(rc.flags, fmt.Sprintf("--gpu-memory-utilization %g", u))
		}
		if rc.moe.MarlinMXFP4 = vllmMarlinMXFP4(r); rc.moe.MarlinMXFP4 {
			rc.flags = append(rc.flags, "VLLM_MXFP4_USE_MARLIN=1")
		}
	}
	return rc
}

// batching returns b, the engine's rule, with the recipe's settings.
func (rc recipe) batching(b Batching) Batching {
	if rc.budget > 0 {
		b.TokenBudget = rc.budget
	}
	if rc.maxRunning > 0 {
		b.MaxRunning = rc.maxRunning
	}
	b.RecvInterval = rc.recvInterval
	b.BalanceTimeout, b.BalanceBatchWait = rc.balanceTimeout, rc.balanceBatchWait
	return b
}

// LaunchFlags returns the engine flags of r's launch script that the
// prediction of r applies (the recipes above; a disaggregated run's
// srt-slurm recipe limits, disaggRecipe), as the script writes them, or
// "" when none is known and the engine's rule applies.
func LaunchFlags(r Row) string {
	if d, ok := disaggRecipeOf(r); ok {
		return d.flags(r)
	}
	return strings.Join(recipeOf(r).flags, "; ")
}

// vllmMarlinMXFP4 reports whether r's script set VLLM_MXFP4_USE_MARLIN=1:
// InferenceX's vLLM gpt-oss scripts on H100 and H200 since 2026-01-02
// (its commit 4e52ed4, with vLLM 0.13), which run the MXFP4 experts
// through Marlin instead of the Triton kernel.
func vllmMarlinMXFP4(r Row) bool {
	s := scriptOf(r)
	return r.Engine == VLLM && s.of("gpt-oss") && s.on("h100", "h200") && s.since("2026-01-02")
}

// moePath returns how r's engine runs model a's routed experts of
// weights w on g (kernel.EnginePath, with the script's switches).
func (rc recipe) moePath(r Row, a arch.Arch, g hw.GPU, w arch.Precision) kernel.MoEPath {
	return kernel.EnginePath(r.Engine.String(), a, w, g, rc.moe)
}
