package costpower

import (
	"bytes"
	"strings"
	"testing"

	"github.com/BurntSushi/toml"
)

func applyPlan(t *testing.T, c *Catalog, doc string) error {
	t.Helper()
	var s Section
	md, err := toml.NewDecoder(bytes.NewReader([]byte(doc))).Decode(&s)
	if err != nil {
		t.Fatal(err)
	}
	return c.Apply(md, s)
}

// A plan's precision = "fp8" halves the weights (embeddings aside) and the
// KV cache per token, so the catalog's KV tokens and the TP choices change
// with it (issue 28 item 4).
func TestPlanPrecisionResizes(t *testing.T) {
	t.Parallel()
	c := Default()
	bf, _ := c.Model("llama3.1-70b")
	h200, _ := c.GPUMachine("h200")
	if err := applyPlan(t, c, "[[model]]\nname = \"llama3.1-70b\"\nprecision = \"fp8\"\n"); err != nil {
		t.Fatal(err)
	}
	fp, _ := c.Model("llama3.1-70b")
	a, _ := fp.ArchShape()
	emb := 2 * 2 * a.EmbeddingParams()
	if 2*(fp.WeightBytes-emb) != bf.WeightBytes-emb && 2*(fp.WeightBytes-emb) != bf.WeightBytes-emb+1 {
		t.Errorf("fp8 weights %d, bf16 %d: not half (embeddings aside)", fp.WeightBytes, bf.WeightBytes)
	}
	if 2*fp.KVBytesPerToken() != bf.KVBytesPerToken() {
		t.Errorf("fp8 KV %d B/token, bf16 %d", fp.KVBytesPerToken(), bf.KVBytesPerToken())
	}
	if got := TPChoices(h200, bf, MinKVTokens); len(got) == 0 || got[0] != 2 {
		t.Errorf("bf16 70B on H200: %v, want tp2 first", got)
	}
	if got := TPChoices(h200, fp, MinKVTokens); len(got) == 0 || got[0] != 1 {
		t.Errorf("fp8 70B on H200: %v, want tp1 first", got)
	}
	if fp.KVCapacityTokens(h200) <= 2*bf.KVCapacityTokens(h200) {
		t.Errorf("fp8 %d tokens on DGX-H200, bf16 %d: want more than twice", fp.KVCapacityTokens(h200), bf.KVCapacityTokens(h200))
	}
	// A plan's own weight_bytes is kept.
	if err := applyPlan(t, c, "[[model]]\nname = \"qwen3-8b\"\nprecision = \"fp8\"\nweight_bytes = 12345678900\n"); err != nil {
		t.Fatal(err)
	}
	if q, _ := c.Model("qwen3-8b"); q.WeightBytes != 12345678900 {
		t.Errorf("weight_bytes %d, want the plan's", q.WeightBytes)
	}
}

// gpu_memory_utilization: more memory to the engine holds more tokens; a
// value outside (0, 1] is refused naming the key.
func TestMachineUtilization(t *testing.T) {
	t.Parallel()
	c := Default()
	m, _ := c.Model("llama3.1-70b")
	h100, _ := c.Machine("dgx-h100")
	prev := int64(0)
	for _, u := range []float64{0.5, 0.7, 0.9, 0.95, 1} {
		h100.GPUMemoryUtilization = u
		got := m.KVCapacityTokens(h100)
		if got < prev {
			t.Errorf("utilization %v: %d tokens < %d", u, got, prev)
		}
		prev = got
	}
	err := applyPlan(t, c, "[[machine]]\nname = \"DGX-H100\"\ngpu_memory_utilization = 1.2\n")
	if err == nil || !strings.Contains(err.Error(), "gpu_memory_utilization") {
		t.Errorf("utilization 1.2: %v", err)
	}
}
