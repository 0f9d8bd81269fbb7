package measured

import "testing"

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
		{row(SGLang, ix, "Qwen/Qwen3.5-397B-A17B", "b300_sxm", "fp8", 4, 1, 4), 10, 16384, 0.8},
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
