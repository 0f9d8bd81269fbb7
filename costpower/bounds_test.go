package costpower

import (
	"fmt"
	"strings"
	"testing"
)

// Every figure a plan gives has an upper bound beyond any machine or
// model, named in the error: a typo's 1e300 (or a memory that overflowed
// int64 into negative bytes) is refused instead of printed. The built-in
// catalog is within every bound.
func TestPlanFigureBounds(t *testing.T) {
	t.Parallel()
	if err := Default().Validate(); err != nil {
		t.Fatalf("built-in catalog: %v", err)
	}
	for _, b := range machineBounds {
		over := b.max * 2
		doc := fmt.Sprintf("[[machine]]\nname = \"DGX-H100\"\n%s = %s\n", b.key, figure(over))
		if b.key == "node_gpus" {
			doc = fmt.Sprintf("[[machine]]\nname = \"DGX-H100\"\n%s = %d\n", b.key, 8*(int(b.max)/8+1))
		}
		if b.key == "gpus" {
			doc += "tensor_parallel = 1\n"
		}
		err := applyPlan(t, Default(), doc)
		if err == nil || !strings.Contains(err.Error(), b.key+" = ") || !strings.Contains(err.Error(), "is beyond any machine (at most "+figure(b.max)+")") {
			t.Errorf("%s over its bound: %v", b.key, err)
		}
		at := fmt.Sprintf("[[machine]]\nname = \"DGX-H100\"\n%s = %s\n", b.key, figure(b.max))
		if b.key == "gpus" {
			at += "tensor_parallel = 1\n"
		}
		if b.key == "node_gpus" {
			at = fmt.Sprintf("[[machine]]\nname = \"DGX-H100\"\n%s = %d\n", b.key, int(b.max))
		}
		if b.key == "gpu_tflops" || b.key == "hbm_bandwidth_gbs" {
			continue // DGX-H100 is priced by its spec sheet: another figure is refused for that
		}
		if err := applyPlan(t, Default(), at); err != nil {
			t.Errorf("%s at its bound: %v", b.key, err)
		}
	}
	for _, b := range modelBounds {
		// A model of its own (no architecture), so that only the bound
		// can refuse it.
		vals := map[string]string{"layers": "2", "hidden": "64", "weight_bytes": "1000", "kv_bytes_per_token": "0"}
		vals[b.key] = figure(b.max * 2)
		doc := fmt.Sprintf("[[model]]\nname = \"m\"\nlayers = %s\nhidden = %s\nheads = 8\nkv_heads = 2\nweight_bytes = %s\n", vals["layers"], vals["hidden"], vals["weight_bytes"])
		if b.key == "kv_bytes_per_token" {
			doc += "kv_bytes_per_token = " + vals[b.key] + "\n"
		}
		err := applyPlan(t, Default(), doc)
		if err == nil || !strings.Contains(err.Error(), b.key+" = "+figure(b.max*2)+" is beyond any model (at most "+figure(b.max)+")") {
			t.Errorf("%s over its bound: %v", b.key, err)
		}
	}
}

// A model with an architecture keeps the architecture's shape: a plan's
// layers, hidden, heads or kv_heads would change only what catalog
// shows (the memory and performance models read the architecture), so
// another value is refused, naming both; the same value, or a shape of a
// model of its own, is taken.
func TestPlanArchShape(t *testing.T) {
	t.Parallel()
	for _, kv := range []string{"layers = 40", "hidden = 4096", "heads = 32", "kv_heads = 16"} {
		key := strings.Fields(kv)[0]
		err := applyPlan(t, Default(), "[[model]]\nname = \"llama2-70b\"\n"+kv+"\n")
		if err == nil || !strings.Contains(err.Error(), kv+", but its architecture llama2-70b has ") || !strings.Contains(err.Error(), "would change only what catalog shows") {
			t.Errorf("%s: %v", key, err)
		}
	}
	if err := applyPlan(t, Default(), "[[model]]\nname = \"llama2-70b\"\nlayers = 80\nweight_bytes = 70000000000\n"); err != nil {
		t.Errorf("the architecture's own layers and a plan's weights: %v", err)
	}
	if err := applyPlan(t, Default(), "[[model]]\nname = \"m\"\nlayers = 40\nhidden = 8192\nheads = 64\nkv_heads = 8\nweight_bytes = 1000\n"); err != nil {
		t.Errorf("a model of its own: %v", err)
	}
}
