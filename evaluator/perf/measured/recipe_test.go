package measured

import (
	"testing"

	"splitplan/arch"
	"splitplan/evaluator/perf/kernel"
	"splitplan/hw"
)

// TestSGLangRecipes: the flags of InferenceX's SGLang scripts reach the
// rows they ran, and no other row.
func TestSGLangRecipes(t *testing.T) {
	t.Parallel()
	ix := "source_file=2026-03-25.csv; silicon_concurrency=64"
	aic := "source_file=/Users/x/projects/aic-auto-gap-analysis/data/h200.csv"
	row := func(engine Engine, src, model, gpu, prec string, tp, dp, conc int) Row {
		return Row{Engine: engine, Source: src, Model: model, GPU: gpu, Precision: prec, Concurrency: conc,
			Agg: Parallel{TP: tp, AttentionDP: dp}}
	}
	for _, c := range []struct {
		r           Row
		recv        int
		budget      int
		memFraction float64
	}{
		{row(SGLang, ix, "deepseek-ai/DeepSeek-R1", "b200_sxm", "fp8", 8, 1, 64), 30, 32768, 0.82},
		{row(SGLang, ix, "deepseek-ai/DeepSeek-R1", "b200_sxm", "fp8", 8, 1, 8), 10, 32768, 0.82},
		{row(SGLang, ix, "deepseek-ai/DeepSeek-R1", "b200_sxm", "fp8", 4, 1, 32), 10, 8192, 0.95},
		{row(SGLang, ix, "deepseek-ai/DeepSeek-V3", "b300_sxm", "fp4", 4, 1, 32), 30, 16384, 0.85},
		{row(SGLang, ix, "deepseek-ai/DeepSeek-R1", "b200_sxm", "fp4", 8, 8, 256), 1, 16384, 0.85},
		{row(SGLang, ix, "deepseek-ai/DeepSeek-R1", "h200_sxm", "fp8", 8, 1, 64), 1, 32768, 0.82},
		{row(SGLang, ix, "Qwen/Qwen3.5-397B-A17B", "b200_sxm", "bf16", 8, 1, 16), 30, 32768, 0.82},
		{row(SGLang, ix, "Qwen/Qwen3.5-397B-A17B", "b200_sxm", "fp4", 4, 1, 4), 10, 32768, 0.85},
		{row(SGLang, ix, "Qwen/Qwen3.5-397B-A17B", "b300_sxm", "fp8", 4, 1, 4), 10, 32768, 0.82},
		{row(SGLang, ix, "Qwen/Qwen3.5-397B-A17B", "b300_sxm", "fp8", 4, 1, 64), 30, 32768, 0.82},
		{row(SGLang, ix+"; measured=2026-04-17T00:00:00Z", "Qwen/Qwen3.5-397B-A17B", "b300_sxm", "fp8", 4, 1, 64), 10, 16384, 0.8},
		{row(SGLang, ix, "Qwen/Qwen3.5-397B-A17B", "b300_sxm", "bf16", 8, 1, 64), 30, 32768, 0.82},
		{row(SGLang, ix, "Qwen/Qwen3.5-397B-A17B", "b300_sxm", "fp4", 4, 1, 64), 30, 32768, 0.8},
		{row(SGLang, ix, "zai-org/GLM-5", "b200_sxm", "fp8", 8, 1, 64), 1, 32768, 0.85},
		{row(SGLang, ix, "zhipuai/GLM-5", "b300_sxm", "fp8", 8, 1, 64), 1, 32768, 0.85},
		{row(SGLang, ix, "zhipuai/GLM-5", "h200_sxm", "fp8", 8, 1, 64), 1, 8192, 0.85},
		{row(SGLang, ix, "zhipuai/GLM-5", "b200_sxm", "fp4", 8, 1, 64), 1, 0, 0},
		{row(SGLang, ix, "Qwen/Qwen3.5-397B-A17B", "h200_sxm", "fp8", 8, 1, 4), 1, 16384, 0.8},
		// No recipe: AIConfigurator's runs, other models, other engines.
		{row(SGLang, aic, "meta-llama/Llama-3.1-8B-Instruct", "h200_sxm", "fp8", 1, 0, 64), 1, 0, 0},
		{row(SGLang, aic, "Qwen/Qwen3.5-397B-A17B", "b200_sxm", "fp8", 8, 1, 64), 1, 0, 0},
		{row(SGLang, ix, "Qwen/Qwen3-32B", "h100_sxm", "", 2, 0, 64), 1, 0, 0},
		{row(VLLM, ix, "deepseek-ai/DeepSeek-R1", "b200_sxm", "fp8", 8, 1, 64), 1, 0, 0},
		{row(TRTLLM, ix, "deepseek-ai/DeepSeek-R1", "b200_sxm", "fp8", 8, 1, 64), 1, 0, 0},
	} {
		recv := sglangRecvInterval(c.r)
		budget, mem := sglangRecipe(c.r)
		if recv != c.recv || budget != c.budget || mem != c.memFraction {
			t.Errorf("%s %s %s %s tp %d dp %d, %d clients: recv interval %d, budget %d, static fraction %g; want %d, %d, %g",
				c.r.Engine, c.r.Model, c.r.GPU, c.r.Precision, c.r.Agg.TP, c.r.Agg.AttentionDP, c.r.Concurrency, recv, budget, mem, c.recv, c.budget, c.memFraction)
		}
	}
}

// TestTRTLLMRecipes: the flags of InferenceX's TensorRT-LLM scripts reach
// the agg rows they ran, and no other row.
func TestTRTLLMRecipes(t *testing.T) {
	t.Parallel()
	ix := "source_file=2026-02-03.csv; silicon_concurrency=64"
	row := func(mode Mode, src, model, gpu, prec string, tp, dp, conc, isl int) Row {
		return Row{Engine: TRTLLM, Mode: mode, Source: src, Model: model, GPU: gpu, Precision: prec, Concurrency: conc,
			InputTokens: isl, Agg: Parallel{TP: tp, AttentionDP: dp}}
	}
	for _, c := range []struct {
		r    Row
		want trtRecipe
	}{
		// ⌈64 + 1024 + 64⌉₆₄ = 1152: one prompt an iteration beside the decodes.
		{row(Agg, ix, "deepseek-ai/DeepSeek-R1", "b200_sxm", "fp8", 8, 1, 64, 1024), trtRecipe{budget: 1152, maxRunning: 256, freeFraction: 0.8}},
		{row(Agg, ix, "deepseek-ai/DeepSeek-R1", "b200_sxm", "fp4", 1, 8, 256, 8192), trtRecipe{budget: 8512, maxRunning: 512, freeFraction: 0.8, balanceTimeout: 60}},
		{row(Agg, ix, "deepseek-ai/DeepSeek-R1", "b200_sxm", "fp4", 4, 1, 256, 1024), trtRecipe{budget: 1344, maxRunning: 512, freeFraction: 0.8, cutlassMoE: true}},
		{row(Agg, ix, "deepseek-ai/DeepSeek-V3", "h200_sxm", "fp8", 8, 1, 4, 1024), trtRecipe{budget: 1152, maxRunning: 128, freeFraction: 0.75}},
		{row(Agg, ix, "openai/gpt-oss-120b", "b200_sxm", "fp4", 2, 1, 32, 1024), trtRecipe{budget: 20000, maxRunning: 512, freeFraction: 0.85}},
		{row(Agg, ix, "openai/gpt-oss-120b", "b200_sxm", "fp4", 1, 4, 32, 1024), trtRecipe{budget: 20000, maxRunning: 512, freeFraction: 0.85, balanceTimeout: 50, balanceBatchWait: 10}},
		{row(Agg, ix, "openai/gpt-oss-120b", "h200_sxm", "fp4", 2, 1, 32, 1024), trtRecipe{budget: 20000, maxRunning: 32, freeFraction: 0.85}},
		// No recipe: disaggregated runs, AIConfigurator's runs, other GPUs and models.
		{row(Disagg, ix, "deepseek-ai/DeepSeek-V3", "h200_sxm", "fp8", 8, 1, 64, 1024), trtRecipe{}},
		{row(Agg, "source_file=/x/aic-auto-gap-analysis/h100.csv", "openai/gpt-oss-120b", "h100_sxm", "fp8", 2, 1, 64, 1024), trtRecipe{}},
		{row(Agg, ix, "deepseek-ai/DeepSeek-R1", "gb200", "fp4", 8, 1, 64, 1024), trtRecipe{}},
		{row(Agg, ix, "meta-llama/Llama-3.1-8B-Instruct", "h100_sxm", "", 1, 1, 64, 1024), trtRecipe{}},
	} {
		if got := trtllmRecipe(c.r); got != c.want {
			t.Errorf("%s %s %s tp %d dp %d, %d clients, isl %d: %+v, want %+v", c.r.Model, c.r.GPU, c.r.Precision, c.r.Agg.TP, c.r.Agg.AttentionDP, c.r.Concurrency, c.r.InputTokens, got, c.want)
		}
	}
}

// TestDSR1CutlassMoE: InferenceX's DeepSeek NVFP4 script for the B200
// ran CUTLASS at high concurrency before 2026-02-03 and under attention DP
// from then on, TensorRT-LLM-gen otherwise; the recipe's MoE path follows.
func TestDSR1CutlassMoE(t *testing.T) {
	t.Parallel()
	row := func(day string, dp, conc, isl, osl int) Row {
		return Row{Engine: TRTLLM, Mode: Agg, Source: measuredSource(day), Model: "deepseek-ai/DeepSeek-R1", GPU: "b200_sxm", Precision: "fp4",
			Concurrency: conc, InputTokens: isl, OutputTokens: osl, Agg: Parallel{TP: 8, AttentionDP: dp}}
	}
	for _, c := range []struct {
		r    Row
		want bool
	}{
		{row("2025-11-02", 1, 256, 1024, 1024), true},
		{row("2025-11-02", 1, 128, 1024, 8192), false},
		{row("2025-11-02", 1, 64, 8192, 1024), true},
		{row("2025-11-02", 1, 32, 8192, 1024), false},
		{row("2026-02-03", 1, 256, 1024, 1024), false},
		{row("2026-02-06", 8, 64, 8192, 1024), true},
	} {
		if got := trtllmRecipe(c.r).cutlassMoE; got != c.want {
			t.Errorf("%s DP %d, %d clients, %d/%d: CUTLASS %v, want %v", c.r.Source, c.r.Agg.AttentionDP, c.r.Concurrency, c.r.InputTokens, c.r.OutputTokens, got, c.want)
		}
	}
	a, err := arch.Lookup("deepseek-r1")
	if err != nil {
		t.Fatal(err)
	}
	g, err := hw.Lookup("b200_sxm")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		r    Row
		want kernel.MoEKernel
	}{{row("2025-11-02", 1, 256, 1024, 1024), kernel.TRTLLMCutlassFP4}, {row("2025-11-02", 1, 4, 1024, 1024), kernel.TRTLLMGenFP4}} {
		if got := recipeOf(c.r).moePath(c.r, a, g, arch.FP4).Kernel; got != c.want {
			t.Errorf("%d clients: MoE kernel %s, want %s", c.r.Concurrency, got, c.want)
		}
	}
}

// TestVLLMRecipes: InferenceX's gpt-oss scripts set vLLM's token budget,
// and the scripts that pass a memory share other than vLLM's default 0.9
// set it, by model, GPU, precision and date; no other row gets either.
func TestVLLMRecipes(t *testing.T) {
	t.Parallel()
	ix := "source_file=2025-12-03.csv; silicon_concurrency=64"
	row := func(engine Engine, src, model, gpu, prec string) Row {
		return Row{Engine: engine, Mode: Agg, Source: src, Model: model, GPU: gpu, Precision: prec}
	}
	for _, c := range []struct {
		r           Row
		budget      int
		utilization float64
	}{
		{row(VLLM, ix, "openai/gpt-oss-120b", "h100_sxm", ""), 8192, 0},
		{row(VLLM, ix, "moonshotai/Kimi-K2.5", "b200_sxm", ""), 0, 0},
		{row(VLLM, "source_file=/x/aic-auto-gap-analysis/a.csv", "openai/gpt-oss-120b", "h200_sxm", ""), 0, 0},
		{row(TRTLLM, ix, "openai/gpt-oss-120b", "h100_sxm", ""), 0, 0},
		{row(VLLM, measuredSource("2026-03-01"), "MiniMaxAI/MiniMax-M2.5", "h200_sxm", "fp8"), 0, 0.95},
		{row(VLLM, measuredSource("2026-03-28"), "MiniMaxAI/MiniMax-M2.5", "b200_sxm", "fp8"), 0, 0.95},
		{row(VLLM, measuredSource("2026-04-03"), "MiniMaxAI/MiniMax-M2.5", "b200_sxm", "fp8"), 0, 0},
		{row(VLLM, measuredSource("2026-03-28"), "MiniMaxAI/MiniMax-M2.5", "h100_sxm", "fp8"), 0, 0},
		{row(VLLM, measuredSource("2026-03-20"), "moonshotai/Kimi-K2.5", "h200_sxm", "int4"), 0, 0.95},
		{row(VLLM, measuredSource("2026-03-20"), "moonshotai/Kimi-K2.5", "b200_sxm", "fp4"), 0, 0},
		{row(SGLang, measuredSource("2026-03-01"), "MiniMaxAI/MiniMax-M2.5", "h200_sxm", "fp8"), 0, 0},
	} {
		if got, gotU := vllmBudget(c.r), vllmUtilization(c.r); got != c.budget || gotU != c.utilization {
			t.Errorf("%s %s %s %s %s: budget %d, utilization %v; want %d, %v", c.r.Engine, c.r.Model, c.r.GPU, c.r.Precision, measuredOn(c.r), got, gotU, c.budget, c.utilization)
		}
	}
}

// measuredSource is a silicon_data_source of an InferenceX run measured on
// day (YYYY-MM-DD).
func measuredSource(day string) string {
	return "source_file=x.csv; measured=" + day + "T00:00:00.000Z"
}

// TestKVRecipes: the runs whose scripts left the KV cache at the engine's
// default (the checkpoint's dtype, BF16) by model, GPU, precision and the
// run's date; the others keep the rule (fp8 for fp8 and fp4 weights).
func TestKVRecipes(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		r    Row
		want bool
	}{
		{Row{Engine: VLLM, Mode: Agg, Source: measuredSource("2026-03-01"), Model: "openai/gpt-oss-120b", GPU: "h200_sxm", Precision: "fp4"}, true},
		{Row{Engine: VLLM, Mode: Agg, Source: measuredSource("2025-11-02"), Model: "openai/gpt-oss-120b", GPU: "b200_sxm", Precision: "fp4"}, true},
		{Row{Engine: VLLM, Mode: Agg, Source: measuredSource("2026-02-05"), Model: "openai/gpt-oss-120b", GPU: "b200_sxm", Precision: "fp4"}, false},
		{Row{Engine: VLLM, Mode: Agg, Source: measuredSource("2026-03-28"), Model: "MiniMaxAI/MiniMax-M2.5", GPU: "h100_sxm", Precision: "fp8"}, true},
		{Row{Engine: VLLM, Mode: Agg, Source: measuredSource("2026-03-28"), Model: "MiniMaxAI/MiniMax-M2.5", GPU: "b200_sxm", Precision: "fp8"}, true},
		{Row{Engine: VLLM, Mode: Agg, Source: measuredSource("2026-04-03"), Model: "MiniMaxAI/MiniMax-M2.5", GPU: "b200_sxm", Precision: "fp8"}, false},
		{Row{Engine: VLLM, Mode: Agg, Source: measuredSource("2026-04-03"), Model: "MiniMaxAI/MiniMax-M2.5", GPU: "b200_sxm", Precision: "fp4"}, false},
		{Row{Engine: VLLM, Mode: Agg, Source: "source_file=x.csv", Model: "MiniMaxAI/MiniMax-M2.5", GPU: "b200_sxm", Precision: "fp8"}, false},
		{Row{Engine: VLLM, Mode: Agg, Source: measuredSource("2026-03-20"), Model: "moonshotai/Kimi-K2.5", GPU: "b200_sxm", Precision: "fp4"}, false},
		{Row{Engine: SGLang, Mode: Agg, Source: measuredSource("2026-02-20"), Model: "deepseek-ai/DeepSeek-R1", GPU: "h200_sxm", Precision: "fp8"}, true},
		{Row{Engine: SGLang, Mode: Agg, Source: measuredSource("2026-02-20"), Model: "deepseek-ai/DeepSeek-R1", GPU: "b200_sxm", Precision: "fp8"}, false},
		{Row{Engine: TRTLLM, Mode: Agg, Source: measuredSource("2025-12-17"), Model: "openai/gpt-oss-120b", GPU: "h200_sxm", Precision: "fp4"}, true},
		{Row{Engine: TRTLLM, Mode: Agg, Source: measuredSource("2025-12-17"), Model: "openai/gpt-oss-120b", GPU: "b200_sxm", Precision: "fp4"}, false},
		{Row{Engine: VLLM, Mode: Agg, Source: "source_file=/x/aic-auto-gap-analysis/a.csv", Model: "openai/gpt-oss-120b", GPU: "h200_sxm", Precision: "fp4"}, false},
	} {
		if got := bf16KV(c.r); got != c.want {
			t.Errorf("%s %s %s %s %s: bf16 KV %v, want %v", c.r.Engine, c.r.Model, c.r.GPU, c.r.Precision, measuredOn(c.r), got, c.want)
		}
	}
}

// TestLaunchFlags: a row's applied flags are written as its script
// writes them, and nothing for a row without a recipe.
func TestLaunchFlags(t *testing.T) {
	t.Parallel()
	ix := "source_file=2026-03-25.csv; silicon_concurrency=64"
	for _, c := range []struct {
		r    Row
		want string
	}{
		{Row{Engine: SGLang, Mode: Agg, Source: ix, Model: "deepseek-ai/DeepSeek-R1", GPU: "b200_sxm", Precision: "fp8", Concurrency: 64, Agg: Parallel{TP: 8}},
			"--scheduler-recv-interval 30; --chunked-prefill-size/--max-prefill-tokens 32768; --mem-fraction-static 0.82"},
		{Row{Engine: SGLang, Mode: Agg, Source: ix, Model: "deepseek-ai/DeepSeek-R1", GPU: "h200_sxm", Precision: "fp8", Concurrency: 64, Agg: Parallel{TP: 8}},
			"KV cache dtype auto (bf16); --chunked-prefill-size/--max-prefill-tokens 32768; --mem-fraction-static 0.82"},
		{Row{Engine: TRTLLM, Mode: Agg, Source: ix, Model: "deepseek-ai/DeepSeek-R1", GPU: "b200_sxm", Precision: "fp4", Concurrency: 64, InputTokens: 1024, Agg: Parallel{TP: 1, AttentionDP: 8}},
			"max_num_tokens 1152; max_batch_size 512; free_gpu_memory_fraction 0.8; attention_dp_config enable_balance timeout_iters 60 batching_wait_iters 0"},
		{Row{Engine: VLLM, Mode: Agg, Source: ix, Model: "moonshotai/Kimi-K2.5", GPU: "b200_sxm"}, ""},
		{Row{Engine: VLLM, Mode: Agg, Source: ix + "; measured=2026-03-27T08:01:51Z", Model: "openai/gpt-oss-120b", GPU: "h200_sxm", Precision: "fp4", InputTokens: 1024},
			"KV cache dtype auto (bf16); --max-num-batched-tokens 8192; VLLM_MXFP4_USE_MARLIN=1"},
	} {
		if got := LaunchFlags(c.r); got != c.want {
			t.Errorf("%s %s %s: %q, want %q", c.r.Engine, c.r.Model, c.r.GPU, got, c.want)
		}
	}
}

// TestMoEKernelRecipes: the MoE kernel a run's routed experts take follows
// its engine, weights and GPU, and vLLM's Marlin switch follows the
// InferenceX gpt-oss scripts on H100 and H200 from 2026-01-02 (their
// commit 4e52ed4), not before and not on other GPUs or models.
func TestMoEKernelRecipes(t *testing.T) {
	t.Parallel()
	on := func(day string) string {
		return "source_file=2026-04-06.csv; silicon_concurrency=4; measured=" + day + "T00:00:00Z"
	}
	for _, c := range []struct {
		r    Row
		want kernel.MoEKernel
	}{
		{Row{Engine: VLLM, Source: on("2026-03-25"), Model: "openai/gpt-oss-120b", GPU: "h200_sxm", Precision: "fp4"}, kernel.VLLMMarlin},
		{Row{Engine: VLLM, Source: on("2026-03-25"), Model: "openai/gpt-oss-120b", GPU: "h100_sxm", Precision: "fp4"}, kernel.VLLMMarlin},
		{Row{Engine: VLLM, Source: on("2025-12-20"), Model: "openai/gpt-oss-120b", GPU: "h200_sxm", Precision: "fp4"}, kernel.VLLMTritonMXFP4},
		{Row{Engine: VLLM, Source: on("2026-03-25"), Model: "openai/gpt-oss-120b", GPU: "b200_sxm", Precision: "fp4"}, kernel.VLLMTRTLLMGen},
		{Row{Engine: VLLM, Source: on("2026-03-25"), Model: "moonshotai/Kimi-K2.5", GPU: "b200_sxm", Precision: "int4"}, kernel.VLLMMarlinBlackwell},
		{Row{Engine: TRTLLM, Source: on("2026-03-25"), Model: "deepseek-ai/DeepSeek-R1", GPU: "b200_sxm", Precision: "fp8"}, kernel.TRTLLMDeepGEMMFP8},
		{Row{Engine: VLLM, Source: on("2026-03-25"), Model: "moonshotai/Kimi-K2.5", GPU: "h200_sxm", Precision: "int4"}, kernel.VLLMMarlin},
		{Row{Engine: VLLM, Source: on("2026-03-25"), Model: "MiniMaxAI/MiniMax-M2.5", GPU: "h100_sxm", Precision: "fp8"}, kernel.VLLMTritonFP8},
		{Row{Engine: SGLang, Source: on("2026-03-25"), Model: "deepseek-ai/DeepSeek-R1", GPU: "h200_sxm", Precision: "fp8"}, kernel.SGLangTritonFP8},
		{Row{Engine: TRTLLM, Source: on("2026-03-25"), Model: "openai/gpt-oss-120b", GPU: "h200_sxm", Precision: "fp4"}, kernel.TRTLLMW4A16},
	} {
		g, err := hw.Lookup(c.r.GPU)
		if err != nil {
			t.Fatal(err)
		}
		a, err := arch.Lookup(c.r.Model)
		if err != nil {
			t.Fatal(err)
		}
		w, _, err := rowPrecisions(c.r, a)
		if err != nil {
			t.Fatal(err)
		}
		if got := recipeOf(c.r).moePath(c.r, a, g, w).Kernel; got != c.want {
			t.Errorf("%s %s %s %s on %s: %q, want %q", c.r.Engine, c.r.Model, c.r.Precision, c.r.GPU, measuredOn(c.r), got, c.want)
		}
	}
}
