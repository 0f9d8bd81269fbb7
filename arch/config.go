package arch

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"strconv"
	"strings"
)

// maxConfigBytes bounds a config.json (real ones are a few kilobytes).
const maxConfigBytes = 16 << 20

// ParseConfigFile reads the Hugging Face config.json at path; see
// ParseConfig.
func ParseConfigFile(path string) (Arch, error) {
	f, err := os.Open(path)
	if err != nil {
		return Arch{}, fmt.Errorf("arch: %w", err)
	}
	defer f.Close()
	return ParseConfig(f, path)
}

// nameFromPath returns the ShortName of a config's path: of its directory
// when the file is called config.json ("x/Llama-3.1-70B/config.json" is
// "llama3.1-70b"), else of the file name without ".json".
func nameFromPath(path string) string {
	s := strings.ReplaceAll(path, "\\", "/")
	if strings.HasSuffix(strings.ToLower(s), "/config.json") {
		s = s[:len(s)-len("/config.json")]
	}
	s = strings.TrimSuffix(s, ".json")
	if i := strings.LastIndexByte(s, '/'); i >= 0 {
		s = s[i+1:]
	}
	return ShortName(s)
}

// ParseConfig reads a Hugging Face config.json from r. name (the file's
// path) is used in errors, and the returned Arch's Name is its ShortName
// (of the directory when the file is called config.json); set Name
// afterwards to choose another. It reads
// num_hidden_layers (BLOOM: n_layer), hidden_size, num_attention_heads
// (BLOOM: n_head), num_key_value_heads (default: the attention heads),
// head_dim, intermediate_size (default 4 × hidden for BLOOM/GPT-style
// models), vocab_size, the experts (n_routed_experts, num_local_experts or
// num_experts; num_experts_per_tok; moe_intermediate_size, else
// intermediate_size is the expert width; n_shared_experts;
// first_k_dense_replace), the MLA dimensions (kv_lora_rank, q_lora_rank,
// qk_rope_head_dim, qk_nope_head_dim, v_head_dim), sliding_window (ignored
// when use_sliding_window is false; layer_types counts the
// "sliding_attention" and "linear_attention" layers, otherwise every layer
// slides), tie_word_embeddings, quantization_config.quant_method
// ("mxfp4" sets MXFP4, "fp8" FP8Checkpoint; another method is refused) and the linear-attention heads
// (linear_num_key_heads, linear_num_value_heads, linear_key_head_dim,
// linear_value_head_dim) and DeepSeek sparse attention's indexer
// (index_topk, index_n_heads, index_head_dim: GLM-5, DeepSeek-V3.2).
// Keys inside a nested text_config object
// override the top-level ones. The FFN is gated unless model_type is a
// GELU-MLP family (bloom, gpt2, gpt_neox, gptj, opt, falcon, mpt, starcoder).
// Errors name the file and key and say what was expected.
func ParseConfig(r io.Reader, file string) (Arch, error) {
	name := nameFromPath(file)
	data, err := io.ReadAll(io.LimitReader(r, maxConfigBytes+1))
	if err != nil {
		return Arch{}, fmt.Errorf("arch: %s: %w", file, err)
	}
	if len(data) > maxConfigBytes {
		return Arch{}, fmt.Errorf("arch: %s: larger than %d bytes, expected a config.json", file, maxConfigBytes)
	}
	var top map[string]json.RawMessage
	dec := json.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&top); err != nil || top == nil {
		if err == nil {
			err = fmt.Errorf("got null")
		}
		return Arch{}, fmt.Errorf("arch: %s: expected a JSON object: %w", file, err)
	}
	keys := top
	if raw, ok := top["text_config"]; ok && !isNull(raw) {
		var inner map[string]json.RawMessage
		if err := json.Unmarshal(raw, &inner); err != nil {
			return Arch{}, fmt.Errorf("arch: %s: key text_config: expected an object: %w", file, err)
		}
		keys = make(map[string]json.RawMessage, len(top)+len(inner))
		for k, v := range top {
			keys[k] = v
		}
		for k, v := range inner {
			keys[k] = v
		}
	}
	p := configParser{file: file, keys: keys}
	a := Arch{Name: name}
	a.Layers = p.intKey("num_hidden_layers", "n_layer", "num_layers")
	a.Hidden = p.intKey("hidden_size", "n_embd", "d_model")
	a.Heads = p.intKey("num_attention_heads", "n_head")
	a.KVHeads = p.intKey("num_key_value_heads", "num_kv_heads")
	a.HeadDim = p.intKey("head_dim")
	a.Intermediate = p.intKey("intermediate_size", "ffn_hidden_size", "n_inner")
	a.Vocab = p.intKey("vocab_size")
	a.Experts = p.intKey("n_routed_experts", "num_local_experts", "num_experts")
	a.ExpertsPerToken = p.intKey("num_experts_per_tok", "experts_per_token", "moe_topk", "num_experts_per_token")
	a.MoEIntermediate = p.intKey("moe_intermediate_size")
	a.SharedExperts = p.intKey("n_shared_experts")
	a.FirstDenseLayers = p.intKey("first_k_dense_replace")
	a.KVLoraRank = p.intKey("kv_lora_rank")
	a.QLoraRank = p.intKey("q_lora_rank")
	a.QKRopeHeadDim = p.intKey("qk_rope_head_dim")
	a.QKNopeHeadDim = p.intKey("qk_nope_head_dim")
	a.VHeadDim = p.intKey("v_head_dim")
	a.SlidingWindow = p.intKey("sliding_window")
	useWindow := p.boolKey("use_sliding_window", true)
	a.TieWordEmbeddings = p.boolKey("tie_word_embeddings", false)
	switch q := strings.ToLower(p.objectString("quantization_config", "quant_method")); q {
	case "":
	case "mxfp4":
		a.MXFP4 = true
	case "fp8":
		a.FP8Checkpoint = true
	default:
		p.fail("quantization_config.quant_method", `"fp8" or "mxfp4" (the checkpoints modelled; serve another at a plan's precision key from its unquantized config)`, json.RawMessage(strconv.Quote(q)))
	}
	a.LinearKeyHeads = p.intKey("linear_num_key_heads")
	a.LinearValueHeads = p.intKey("linear_num_value_heads")
	a.LinearKeyHeadDim = p.intKey("linear_key_head_dim")
	a.LinearValueHeadDim = p.intKey("linear_value_head_dim")
	a.IndexTopK = p.intKey("index_topk")
	a.IndexHeads = p.intKey("index_n_heads", "index_heads")
	a.IndexHeadDim = p.intKey("index_head_dim")
	modelType := strings.ToLower(p.stringKey("model_type"))
	layerTypes := p.stringList("layer_types")
	if p.err != nil {
		return Arch{}, p.err
	}
	switch modelType {
	case "bloom", "gpt2", "gpt_neox", "gptj", "opt", "falcon", "mpt", "starcoder", "gpt_bigcode":
		if a.Intermediate == 0 {
			a.Intermediate = 4 * a.Hidden
		}
	default:
		a.GatedFFN = true
	}
	if a.KVHeads == 0 {
		a.KVHeads = a.Heads
	}
	if a.KVLoraRank > 0 {
		// MLA caches one latent shared by every head; kv heads do not
		// apply (configs set num_key_value_heads = heads).
		a.KVHeads = a.Heads
	}
	if a.Experts > 0 && a.MoEIntermediate == 0 {
		a.MoEIntermediate, a.Intermediate = a.Intermediate, 0
	}
	if a.Experts == 0 {
		a.ExpertsPerToken, a.SharedExperts, a.FirstDenseLayers = 0, 0, 0
	}
	if !useWindow || a.SlidingWindow < 0 {
		a.SlidingWindow = 0
	}
	if len(layerTypes) > 0 {
		if len(layerTypes) != a.Layers {
			return Arch{}, fmt.Errorf("arch: %s: key layer_types: expected one entry per layer (%d), got %d", file, a.Layers, len(layerTypes))
		}
		for _, t := range layerTypes {
			switch t {
			case "sliding_attention":
				a.SlidingWindowLayers++
			case "linear_attention":
				a.LinearAttentionLayers++
			}
		}
		if a.SlidingWindow == 0 {
			a.SlidingWindowLayers = 0
		}
	} else if a.SlidingWindow > 0 {
		a.SlidingWindowLayers = a.Layers
	}
	if err := a.Validate(); err != nil {
		return Arch{}, fmt.Errorf("arch: %s: %w", file, err)
	}
	return a, nil
}

func isNull(raw json.RawMessage) bool { return string(bytes.TrimSpace(raw)) == "null" }

// objectString returns the string key inner of the object key outer, ""
// where either is absent or null.
func (p *configParser) objectString(outer, inner string) string {
	raw, ok := p.keys[outer]
	if !ok || isNull(raw) {
		return ""
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(raw, &obj); err != nil {
		p.fail(outer, "an object", raw)
		return ""
	}
	v, ok := obj[inner]
	if !ok || isNull(v) {
		return ""
	}
	var s string
	if err := json.Unmarshal(v, &s); err != nil {
		p.fail(outer+"."+inner, "a string", v)
		return ""
	}
	return s
}

// configParser reads typed keys from a config, keeping the first error.
type configParser struct {
	file string
	keys map[string]json.RawMessage
	err  error
}

func (p *configParser) fail(key, want string, raw json.RawMessage) {
	if p.err == nil {
		got := string(raw)
		if len(got) > 40 {
			got = got[:40] + "..."
		}
		p.err = fmt.Errorf("arch: %s: key %s: expected %s, got %s", p.file, key, want, got)
	}
}

// intKey returns the first present (non-null) key of names as a
// non-negative integer (a JSON number with an integral value), 0 if none.
func (p *configParser) intKey(names ...string) int {
	for _, k := range names {
		raw, ok := p.keys[k]
		if !ok || isNull(raw) {
			continue
		}
		var f float64
		if err := json.Unmarshal(raw, &f); err != nil || f < 0 || f != math.Trunc(f) || f > math.MaxInt32 {
			p.fail(k, "a non-negative integer", raw)
			return 0
		}
		return int(f)
	}
	return 0
}

func (p *configParser) boolKey(k string, def bool) bool {
	raw, ok := p.keys[k]
	if !ok || isNull(raw) {
		return def
	}
	var b bool
	if err := json.Unmarshal(raw, &b); err != nil {
		p.fail(k, "true or false", raw)
		return def
	}
	return b
}

func (p *configParser) stringKey(k string) string {
	raw, ok := p.keys[k]
	if !ok || isNull(raw) {
		return ""
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		p.fail(k, "a string", raw)
	}
	return s
}

func (p *configParser) stringList(k string) []string {
	raw, ok := p.keys[k]
	if !ok || isNull(raw) {
		return nil
	}
	var s []string
	if err := json.Unmarshal(raw, &s); err != nil {
		p.fail(k, "a list of strings", raw)
	}
	return s
}
