package evaluator_test

import (
	"testing"

	"splitplan/costpower"
	"splitplan/evaluator"
	"splitplan/traces"
)

// TestEnergyUnknownWithoutArch checks that a model without an
// architecture simulates with no energy rather than failing.
func TestEnergyUnknownWithoutArch(t *testing.T) {
	t.Parallel()
	cat := costpower.Default()
	for i := range cat.Models {
		cat.Models[i].Arch = ""
	}
	cl := resolved(t, cat, "Baseline-A100", 1, 0, "bloom-176b", false)
	res := evaluate(t, cl, []traces.Request{{ID: 0, Arrival: 0, PromptTokens: 10, OutputTokens: 2}}, evaluator.Options{Energy: true})
	if res.EnergyKnown || res.EnergyJ != 0 || res.KWhPerDay() != 0 || cl.PowerNote == "" {
		t.Errorf("energy known (%v, %v J, note %q) without a power model", res.EnergyKnown, res.EnergyJ, cl.PowerNote)
	}
}
