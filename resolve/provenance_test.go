package resolve

import (
	"strings"
	"testing"

	"splitplan/costpower"
	"splitplan/evaluator/perf"
)

// One provenance per comparison (issue 28 item 5): a space of profiled
// pairs keeps its profiles; one machine type without a profile puts every
// machine on the analytic model; --compat keeps the profiles.
func TestOneProvenancePerComparison(t *testing.T) {
	t.Parallel()
	cat := costpower.Default()
	src := DefaultSource()
	llama2, _ := cat.Model("llama2-70b")
	h100, _ := cat.Machine("DGX-H100")
	a100, _ := cat.Machine("DGX-A100")
	h200, _ := cat.Machine("DGX-H200")
	if !src.HasProfile(llama2, h100) || src.HasProfile(llama2, h200) {
		t.Fatal("llama2-70b should be profiled on DGX-H100 and not on DGX-H200")
	}
	paper := src.ForSpace(llama2, []costpower.Machine{a100, h100})
	if paper.Physics {
		t.Error("a space of profiled pairs was moved to the analytic model")
	}
	if _, pv, err := paper.Resolve(llama2, h100); err != nil || pv.Kind != perf.Profiled {
		t.Errorf("paper space: %v, %v", pv, err)
	}
	mixed := src.ForSpace(llama2, []costpower.Machine{a100, h100, h200})
	if !mixed.Physics {
		t.Fatal("a space with DGX-H200 kept the profiles")
	}
	for _, mc := range []costpower.Machine{a100, h100, h200} {
		if _, pv, err := mixed.Resolve(llama2, mc); err != nil || pv.Kind == perf.Profiled {
			t.Errorf("%s in a mixed space: %v, %v", mc.Name, pv, err)
		}
	}
	compat := src
	compat.Compat = true
	if compat.ForSpace(llama2, []costpower.Machine{h100, h200}).Physics {
		t.Error("--compat left its profiles")
	}
	// A cluster resolves its two pools from one provenance.
	cat.Designs = append(cat.Designs, costpower.Design{Name: "HX", Kind: costpower.KindSplitwise, Prompt: "DGX-H100", Token: "DGX-H200"})
	cl, err := NamedCluster(cat, src, "HX", 1, 1, "llama2-70b")
	if err != nil {
		t.Fatal(err)
	}
	if cl.PromptProvenance.Kind == perf.Profiled || cl.TokenProvenance.Kind == perf.Profiled {
		t.Errorf("H100 prompt / H200 token cluster: %v / %v", cl.PromptProvenance, cl.TokenProvenance)
	}
	// A machine type with no gpu_spec cannot join an analytic space.
	capped, _ := cat.Machine("DGX-H100cap")
	if _, _, err := mixed.Resolve(llama2, capped); err == nil || !strings.Contains(err.Error(), "analytic model") {
		t.Errorf("DGX-H100cap in a mixed space: %v", err)
	}
}
