package resolve

import (
	"fmt"
	"strings"
	"testing"

	"splitplan/arch"
	"splitplan/costpower"
	"splitplan/evaluator/perf"
	"splitplan/evaluator/perf/measured"
)

// TestPerfSourceProvenance: a profiled pair resolves to its profile, a
// model with no profile to the analytic model labelled calibrated (a GPU
// with its own calibration) or spec-only (borrowing a relative's), and the
// cases no model covers are errors that say why.
func TestPerfSourceProvenance(t *testing.T) {
	t.Parallel()
	cat := costpower.Default()
	src := DefaultSource()
	model := func(name string) costpower.Model {
		m, err := cat.Model(name)
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	machine := func(name string) costpower.Machine {
		m, err := cat.Machine(name)
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	for _, tc := range []struct {
		model, machine string
		want           perf.ProvenanceKind
		source         string
	}{
		{"bloom-176b", "DGX-H100", perf.Profiled, "bloom-176b/h100-80gb/tp8"},
		{"llama2-70b", "DGX-A100", perf.Profiled, "llama2-70b/a100-80gb/tp8"},
		{"llama3.1-70b", "DGX-H100", perf.Calibrated, "analytic, h100_sxm/vllm"},
		{"llama3.1-70b", "MI300X-8", perf.SpecOnly, "analytic"},
		{"qwen3-235b-a22b", "DGX-H100", perf.Calibrated, "routed experts in MoE kernel vllm-triton-fp8-block"},
		{"qwen3-235b-a22b", "DGX-B200", perf.Calibrated, "routed experts in MoE kernel vllm-trtllm-gen-fp8-block"},
	} {
		pm, pv, err := src.Resolve(model(tc.model), machine(tc.machine))
		if err != nil {
			t.Fatalf("%s on %s: %v", tc.model, tc.machine, err)
		}
		if pv.Kind != tc.want || !strings.Contains(pv.Source, tc.source) {
			t.Errorf("%s on %s: provenance %v, want %v with %q", tc.model, tc.machine, pv, tc.want, tc.source)
		}
		if d, _ := pm.DecodeTime(8, 8000); !(d > 0) {
			t.Errorf("%s on %s: decode time %v", tc.model, tc.machine, d)
		}
		if strings.Contains(pv.Source, "MoE kernel") != strings.Contains(tc.source, "MoE kernel") {
			t.Errorf("%s on %s: provenance %q names an MoE kernel where it should not, or not where it should", tc.model, tc.machine, pv.Source)
		}
	}
	// The MI300X has no measured runs: its efficiencies are the engine's
	// shared ones, and the error quoted is the leave-one-GPU-out one the
	// calibration carries.
	if _, pv, _ := src.Resolve(model("llama3.1-70b"), machine("MI300X-8")); !strings.Contains(pv.String(), "spec-only") {
		t.Errorf("MI300X provenance %q should say spec-only", pv)
	} else if tt, tp, ok := src.Calibration.HeldOut(src.Engine); !ok ||
		!strings.Contains(pv.String(), fmt.Sprintf("held-out MAPE %.0f%% TTFT, %.0f%% TPOT", tt, tp)) {
		t.Errorf("MI300X provenance %q should quote the held-out error (%v %% / %v %%)", pv, tt, tp)
	}
	for _, tc := range []struct {
		model, machine string
		compat         bool
		want           string
	}{
		{"llama3.1-70b", "DGX-H100", true, "--compat splitwise-sim needs one"},
		{"llama3.1-70b", "DGX-H100cap", false, "no gpu_spec"},
		{"kimi-k2.5", "DGX-H100", false, "kimi-k2.5 does not fit on H100·tp8: its weights need 120.5 GiB per GPU, the engine may use 70.3 GiB per GPU"},
	} {
		s := src
		s.Compat = tc.compat
		if _, _, err := s.Resolve(model(tc.model), machine(tc.machine)); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s on %s (compat %v): error %v, want it to say %q", tc.model, tc.machine, tc.compat, err, tc.want)
		}
	}
	// An architecture from a config file is found before the built-ins.
	a, err := arch.Lookup("llama3.1-8b")
	if err != nil {
		t.Fatal(err)
	}
	a.Name = "my-model"
	src.Archs = []arch.Arch{a}
	m := costpower.ModelOf(a, arch.BF16)
	if _, pv, err := src.Resolve(m, machine("DGX-B200")); err != nil || pv.Kind != perf.Calibrated {
		t.Errorf("config-file model on DGX-B200: %v, %v", pv, err)
	}
	if _, prov := measured.Default().Lookup("b200_sxm", measured.VLLM); prov != measured.Calibrated {
		t.Errorf("the embedded calibration has no b200_sxm/vllm entry (%s)", prov)
	}
}
