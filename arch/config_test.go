package arch

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"splitplan/internal/fuzzing"
)

// deepseekV3Config is an excerpt of deepseek-ai/DeepSeek-V3's config.json.
const deepseekV3Config = `{
  "architectures": ["DeepseekV3ForCausalLM"],
  "first_k_dense_replace": 3, "hidden_size": 7168, "intermediate_size": 18432,
  "kv_lora_rank": 512, "model_type": "deepseek_v3", "moe_intermediate_size": 2048,
  "n_routed_experts": 256, "n_shared_experts": 1, "num_attention_heads": 128,
  "num_experts_per_tok": 8, "num_hidden_layers": 61, "num_key_value_heads": 128,
  "q_lora_rank": 1536, "qk_nope_head_dim": 128, "qk_rope_head_dim": 64,
  "rms_norm_eps": 1e-06, "tie_word_embeddings": false, "v_head_dim": 128,
  "vocab_size": 129280, "rope_scaling": {"factor": 40}
}`

// glm5Config is an excerpt of zai-org/GLM-5's config.json (as NVIDIA
// AIConfigurator ships it, model_configs/zai-org--GLM-5_config.json).
const glm5Config = `{
  "architectures": ["GlmMoeDsaForCausalLM"], "first_k_dense_replace": 3, "head_dim": 64,
  "hidden_size": 6144, "index_head_dim": 128, "index_n_heads": 32, "index_topk": 2048,
  "intermediate_size": 12288, "kv_lora_rank": 512, "model_type": "glm_moe_dsa",
  "moe_intermediate_size": 2048, "n_routed_experts": 256, "n_shared_experts": 1,
  "num_attention_heads": 64, "num_experts_per_tok": 8, "num_hidden_layers": 78,
  "num_key_value_heads": 64, "q_lora_rank": 2048, "qk_head_dim": 256, "qk_nope_head_dim": 192,
  "qk_rope_head_dim": 64, "tie_word_embeddings": false, "v_head_dim": 256, "vocab_size": 154880
}`

const bloomConfig = `{"model_type": "bloom", "n_layer": 70, "hidden_size": 14336, "n_head": 112,
  "vocab_size": 250880, "tie_word_embeddings": true}`

const gptOSSConfig = `{"model_type": "gpt_oss", "num_hidden_layers": 4, "hidden_size": 2880,
  "num_attention_heads": 64, "num_key_value_heads": 8, "head_dim": 64, "intermediate_size": 2880,
  "num_local_experts": 128, "num_experts_per_tok": 4, "vocab_size": 201088, "sliding_window": 128,
  "layer_types": ["sliding_attention", "full_attention", "sliding_attention", "full_attention"],
  "quantization_config": {"quant_method": "mxfp4", "modules_to_not_convert": ["model.layers.*.self_attn"]}}`

const qwen3Config = `{"model_type": "qwen3", "num_hidden_layers": 64, "hidden_size": 5120,
  "num_attention_heads": 64, "num_key_value_heads": 8, "head_dim": 128, "intermediate_size": 25600,
  "vocab_size": 151936, "sliding_window": 32768, "use_sliding_window": false}`

const nestedConfig = `{"model_type": "llava", "vocab_size": 32064,
  "text_config": {"model_type": "llama", "num_hidden_layers": 32, "hidden_size": 4096,
  "num_attention_heads": 32, "num_key_value_heads": 8, "intermediate_size": 14336, "vocab_size": 128256}}`

func parse(t *testing.T, src, name string) Arch {
	t.Helper()
	a, err := ParseConfig(strings.NewReader(src), name)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func TestParseConfigMatchesBuiltin(t *testing.T) {
	t.Parallel()
	a := parse(t, deepseekV3Config, "models/DeepSeek-V3/config.json")
	b := mustLookup(t, "deepseek-v3")
	if a.Name != "deepseek-v3" {
		t.Errorf("name %q, want deepseek-v3", a.Name)
	}
	a.HFName = b.HFName
	if a != b {
		t.Errorf("parsed\n%+v\nbuilt-in\n%+v", a, b)
	}
	g := parse(t, glm5Config, "zai-org/GLM-5/config.json")
	gb := mustLookup(t, "zhipuai/GLM-5")
	g.HFName, g.HeadDim = gb.HFName, 0 // head_dim (the rope width) is not used under MLA
	if g != gb {
		t.Errorf("GLM-5 parsed\n%+v\nbuilt-in\n%+v", g, gb)
	}
	bl := parse(t, bloomConfig, "bloom.json")
	want := mustLookup(t, "bloom-176b")
	bl.Name, bl.HFName = want.Name, want.HFName
	if bl != want {
		t.Errorf("bloom parsed\n%+v\nbuilt-in\n%+v", bl, want)
	}
}

func TestParseConfigLayers(t *testing.T) {
	t.Parallel()
	g := parse(t, gptOSSConfig, "gpt-oss/config.json")
	if g.SlidingWindowLayers != 2 || g.SlidingWindow != 128 || g.MoEIntermediate != 2880 || g.Intermediate != 0 || !g.MXFP4 {
		t.Errorf("gpt-oss: %+v", g)
	}
	if !mustLookup(t, "gpt-oss-120b").MXFP4 || mustLookup(t, "deepseek-r1").MXFP4 {
		t.Error("the built-in gpt-oss is MXFP4 and DeepSeek-R1 is not")
	}
	hybrid := parse(t, `{"model_type": "qwen3_next", "num_hidden_layers": 4, "hidden_size": 2048, "num_attention_heads": 16,
	  "num_key_value_heads": 2, "head_dim": 256, "vocab_size": 151936, "num_experts": 512, "num_experts_per_tok": 10,
	  "moe_intermediate_size": 512, "linear_num_key_heads": 16, "linear_num_value_heads": 32, "linear_key_head_dim": 128,
	  "linear_value_head_dim": 128, "layer_types": ["linear_attention", "linear_attention", "linear_attention", "full_attention"]}`, "Qwen3-Next/config.json")
	if hybrid.LinearAttentionLayers != 3 || hybrid.LinearKeyHeads != 16 || hybrid.LinearValueHeads != 32 || hybrid.LinearKeyHeadDim != 128 || hybrid.LinearValueHeadDim != 128 {
		t.Errorf("qwen3-next: %+v", hybrid)
	}
	q := parse(t, qwen3Config, "Qwen3-32B/config.json")
	if q.SlidingWindow != 0 || q.SlidingWindowLayers != 0 {
		t.Errorf("use_sliding_window false must disable the window: %+v", q)
	}
	if q.Name != "qwen3-32b" {
		t.Errorf("name %q", q.Name)
	}
	n := parse(t, nestedConfig, "llava/config.json")
	if n.Layers != 32 || n.Vocab != 128256 || !n.GatedFFN {
		t.Errorf("text_config must override: %+v", n)
	}
}

func TestParseConfigErrors(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ src, want string }{
		{`[1]`, "expected a JSON object"},
		{`{"num_hidden_layers": "eighty"}`, "key num_hidden_layers: expected a non-negative integer"},
		{`{"num_hidden_layers": 1.5}`, "num_hidden_layers"},
		{`{"num_hidden_layers": 2, "hidden_size": 64, "num_attention_heads": 4, "vocab_size": 10, "intermediate_size": 8, "tie_word_embeddings": 1}`, "key tie_word_embeddings: expected true or false"},
		{`{"num_hidden_layers": 2, "hidden_size": 64, "num_attention_heads": 4, "vocab_size": 10}`, "intermediate"},
		{`{"hidden_size": 64, "num_attention_heads": 4, "vocab_size": 10, "intermediate_size": 8}`, "layers"},
		{`{"num_hidden_layers": 2, "hidden_size": 64, "num_attention_heads": 4, "num_key_value_heads": 3, "vocab_size": 10, "intermediate_size": 8}`, "kv_heads"},
		{`{"num_hidden_layers": 2, "hidden_size": 64, "num_attention_heads": 4, "vocab_size": 10, "intermediate_size": 8, "num_experts": 4, "num_experts_per_tok": 5}`, "experts_per_token"},
		{`{"num_hidden_layers": 2, "hidden_size": 64, "num_attention_heads": 4, "vocab_size": 10, "intermediate_size": 8, "text_config": 3}`, "key text_config"},
		{`{"num_hidden_layers": 2, "hidden_size": 64, "num_attention_heads": 4, "vocab_size": 10, "intermediate_size": 8, "quantization_config": "mxfp4"}`, "key quantization_config: expected an object"},
		{`{"num_hidden_layers": 2, "hidden_size": 64, "num_attention_heads": 4, "vocab_size": 10, "intermediate_size": 8, "layer_types": ["linear_attention", "full_attention"], "linear_num_value_heads": 4}`, "linear_value_heads 4 prices"},
		{`{"num_hidden_layers": 2, "hidden_size": 64, "num_attention_heads": 4, "vocab_size": 10, "intermediate_size": 8, "quantization_config": {"quant_method": 4}}`, "key quantization_config.quant_method: expected a string"},
		{`{"num_hidden_layers": 2, "hidden_size": 64, "num_attention_heads": 4, "vocab_size": 10, "intermediate_size": 8, "sliding_window": 4, "layer_types": ["full_attention"]}`, "layer_types"},
		{`{"num_hidden_layers": 2, "hidden_size": 64, "num_attention_heads": 4, "vocab_size": 10, "intermediate_size": 8, "quantization_config": {"quant_method": "awq"}}`, `key quantization_config.quant_method: expected "fp8" or "mxfp4"`},
	} {
		_, err := ParseConfig(strings.NewReader(c.src), "x/config.json")
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "x/config.json") {
			t.Errorf("ParseConfig(%s): error %v, want one naming the file and %q", c.src, err, c.want)
		}
	}
}

// TestParseConfigFP8: an FP8 checkpoint (quant_method "fp8") is marked,
// an unquantized one not.
func TestParseConfigFP8(t *testing.T) {
	t.Parallel()
	base := `{"num_hidden_layers": 2, "hidden_size": 64, "num_attention_heads": 4, "vocab_size": 10, "intermediate_size": 8%s}`
	for q, want := range map[string]bool{"": false, `, "quantization_config": {"quant_method": "fp8", "weight_block_size": [128, 128]}`: true, `, "quantization_config": {"quant_method": "FP8"}`: true} {
		a, err := ParseConfig(strings.NewReader(fmt.Sprintf(base, q)), "x/config.json")
		if err != nil || a.FP8Checkpoint != want || a.MXFP4 {
			t.Errorf("%q: FP8Checkpoint %v MXFP4 %v (%v), want %v", q, a.FP8Checkpoint, a.MXFP4, err, want)
		}
	}
}

func TestParseConfigFile(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "Llama-3.1-70B")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "config.json")
	src := `{"model_type": "llama", "num_hidden_layers": 80, "hidden_size": 8192, "num_attention_heads": 64,
	  "num_key_value_heads": 8, "intermediate_size": 28672, "vocab_size": 128256, "tie_word_embeddings": false}`
	if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	a, err := ParseConfigFile(path)
	if err != nil {
		t.Fatal(err)
	}
	b := mustLookup(t, "llama3.1-70b")
	a.HFName = b.HFName
	if a != b {
		t.Errorf("parsed %+v, built-in %+v", a, b)
	}
	if _, err := ParseConfigFile(filepath.Join(dir, "missing.json")); err == nil {
		t.Error("missing file: no error")
	}
}

// FuzzParseConfig checks that ParseConfig never panics and that whatever
// it accepts is valid with finite, non-negative derived figures.
func FuzzParseConfig(f *testing.F) {
	fuzzing.Seed(f, deepseekV3Config, bloomConfig, gptOSSConfig, qwen3Config, nestedConfig, `{}`, `null`)
	f.Fuzz(func(t *testing.T, src string) {
		a, err := ParseConfig(strings.NewReader(src), "fuzz.json")
		if err != nil {
			return
		}
		if err := a.Validate(); err != nil {
			t.Fatalf("accepted an invalid arch: %v", err)
		}
		if a.TotalParams() <= 0 || a.ActiveParams() <= 0 || a.ActiveParams() > a.TotalParams()+a.EmbeddingParams() ||
			a.WeightBytes(FP4) <= 0 || a.KVBytesPerToken(BF16) < 0 {
			t.Fatalf("implausible derived figures for %+v", a)
		}
	})
}
