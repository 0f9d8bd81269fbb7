package arch

import (
	"fmt"
	"slices"
	"strings"
)

// handArchs are the built-in architectures not in the generated table,
// transcribed from their Hugging Face config.json files.
var handArchs = []Arch{
	// bigscience/bloom: n_layer 70, hidden_size 14336, n_head 112 (multi-head
	// attention), vocab_size 250880, GELU FFN of 4 × hidden, tied embeddings.
	{Name: "bloom-176b", HFName: "bigscience/bloom", Layers: 70, Hidden: 14336, Heads: 112, KVHeads: 112,
		Intermediate: 4 * 14336, Vocab: 250880, TieWordEmbeddings: true},
	// meta-llama/Llama-2-70b-hf: 80 layers, hidden 8192, 64 heads, 8 KV
	// heads, SwiGLU FFN 28672, vocab 32000, untied.
	{Name: "llama2-70b", HFName: "meta-llama/Llama-2-70b-hf", Layers: 80, Hidden: 8192, Heads: 64, KVHeads: 8,
		Intermediate: 28672, GatedFFN: true, Vocab: 32000},
	// zai-org/GLM-5 (config.json as NVIDIA AIConfigurator ships it,
	// model_configs/zai-org--GLM-5_config.json, Apache License 2.0): 78
	// layers, hidden 6144, MLA with 64 heads (q_lora_rank 2048,
	// kv_lora_rank 512, qk_nope 192, qk_rope 64, v 256), DeepSeek sparse
	// attention (index_topk 2048, 32 indexer heads of width 128), 256
	// routed experts of width 2048 (8 a token) and one shared, the first 3
	// layers dense (intermediate 12288), vocab 154880, untied.
	{Name: "glm-5", HFName: "zai-org/GLM-5", Layers: 78, Hidden: 6144, Heads: 64, KVHeads: 64,
		Intermediate: 12288, GatedFFN: true, Vocab: 154880, Experts: 256, ExpertsPerToken: 8, MoEIntermediate: 2048,
		SharedExperts: 1, FirstDenseLayers: 3, KVLoraRank: 512, QLoraRank: 2048, QKRopeHeadDim: 64, QKNopeHeadDim: 192,
		VHeadDim: 256, IndexTopK: 2048, IndexHeads: 32, IndexHeadDim: 128},
}

// extraAliases are names that ShortName does not derive.
var extraAliases = map[string]string{
	"bloom":     "bloom-176b",
	"bloom-176": "bloom-176b",
	"llama2-70": "llama2-70b",
}

// Builtin returns the built-in architectures (copies), sorted by name.
func Builtin() []Arch {
	all := append(slices.Clone(generatedArchs), handArchs...)
	slices.SortFunc(all, func(a, b Arch) int { return strings.Compare(a.Name, b.Name) })
	return all
}

// Names returns the short names of the built-in architectures, sorted.
func Names() []string {
	b := Builtin()
	names := make([]string, len(b))
	for i := range b {
		names[i] = b[i].Name
	}
	return names
}

// ShortName derives an architecture's short name from a model name or
// Hugging Face path: lower case, the organisation ("meta-llama/") dropped,
// quantization and release suffixes (-fp8, -nvfp4, -fp4, -mxfp4, -awq,
// -instruct, -chat, -hf, -base, -v0.1) dropped, "meta-llama-" shortened to
// "llama-", and "llama-3.1" written "llama3.1". So
// "nvidia/Llama-3.1-8B-Instruct-FP8" is "llama3.1-8b" and
// "nvidia/DeepSeek-R1-NVFP4" is "deepseek-r1".
func ShortName(name string) string {
	s := strings.ToLower(strings.TrimSpace(name))
	if i := strings.LastIndexByte(s, '/'); i >= 0 {
		s = s[i+1:]
	}
	s = strings.ReplaceAll(s, "_", "-")
	for changed := true; changed; {
		changed = false
		for _, suf := range []string{"-fp8", "-nvfp4", "-fp4", "-mxfp4", "-awq", "-gptq", "-int4",
			"-instruct", "-chat", "-hf", "-base", "-v0.1", "-bf16"} {
			if strings.HasSuffix(s, suf) && len(s) > len(suf) {
				s = strings.TrimSuffix(s, suf)
				changed = true
			}
		}
	}
	s = strings.TrimPrefix(s, "meta-")
	if strings.HasPrefix(s, "llama-") && len(s) > 6 && s[6] >= '0' && s[6] <= '9' {
		s = "llama" + s[6:]
	}
	return s
}

// Lookup returns the built-in architecture named name: its short name, its
// Hugging Face path, or any name with the same ShortName (so quantized
// variants such as "nvidia/DeepSeek-R1-NVFP4" map to their base), compared
// case-insensitively. The error lists the names that exist.
func Lookup(name string) (Arch, error) {
	want := ShortName(name)
	if a, ok := extraAliases[want]; ok {
		want = a
	}
	for _, a := range Builtin() {
		if a.Name == want || strings.EqualFold(a.HFName, strings.TrimSpace(name)) {
			return a, nil
		}
	}
	return Arch{}, fmt.Errorf("arch: unknown model %q; built-in: %s", name, strings.Join(Names(), ", "))
}
