package kernel

import (
	"strings"
	"testing"
)

// TestRowArchLayers: a row that ran fewer layers of a model is that
// model's first layers (as tools/gpu-profile --max-layers runs them): a
// dense model's, an MoE model's leading dense layers then MoE layers (one
// at least); more layers than the model has, too few for one MoE layer,
// and a truncated sliding-window or linear-attention model are refused.
func TestRowArchLayers(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		model              string
		layers             int
		wantDense, wantMoE int
		err                string
	}{
		{"llama3.1-8b", 4, 4, 0, ""},
		{"llama3.1-8b", 0, 32, 0, ""},
		{"mixtral-8x7b", 4, 0, 4, ""},
		{"mixtral-8x7b", 32, 0, 32, ""},
		{"qwen3-235b-a22b", 1, 0, 1, ""},
		{"deepseek-v3", 5, 3, 2, ""},
		{"deepseek-v3", 3, 0, 0, "expected more than its 3 dense layers"},
		{"mixtral-8x7b", 33, 0, 0, "runs 33 layers of 32"},
		{"gpt-oss-120b", 4, 0, 0, "runs 4 layers of 36"},
		{"qwen3.5-397b-a17b", 8, 0, 0, "runs 8 layers of 60"},
	} {
		a, err := Row{Model: c.model, Layers: c.layers, Kind: Prefill}.Arch()
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%s with %d layers: %v, want an error containing %q", c.model, c.layers, err, c.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s with %d layers: %v", c.model, c.layers, err)
			continue
		}
		if a.DenseLayers() != c.wantDense || a.MoELayers() != c.wantMoE {
			t.Errorf("%s with %d layers: %d dense + %d MoE, want %d + %d", c.model, c.layers, a.DenseLayers(), a.MoELayers(), c.wantDense, c.wantMoE)
		}
		if err := a.Validate(); err != nil {
			t.Errorf("%s with %d layers: %v", c.model, c.layers, err)
		}
	}
	if (Row{Model: "mixtral-8x7b", Kind: Decode}).IsMoE() != true || (Row{Model: "llama3.1-8b", Kind: Decode}).IsMoE() ||
		(Row{Model: "mixtral-8x7b", Kind: GEMM}).IsMoE() {
		t.Error("IsMoE: want true for an MoE model's iteration row only")
	}
}
