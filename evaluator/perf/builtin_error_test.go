package perf

import (
	"fmt"
	"os"
	"testing"
)

// TestBuiltinHeldOutError: the figure shown with every profiled pair's
// provenance is what Validate measures on the shipped profile today.
func TestBuiltinHeldOutError(t *testing.T) {
	t.Parallel()
	const path = "../../../shared/data/splitwise-profiles/perf_model.csv"
	if _, err := os.Stat(path); err != nil {
		t.Skip("../shared is absent")
	}
	rows, err := ReadProfileFile(path)
	if err != nil {
		t.Fatal(err)
	}
	v, err := Validate(rows, 1, DefaultMixedPenalty)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range v {
		if r.Model == AllPairs {
			got := fmt.Sprintf("held-out MAPE %.2f%% prompt, %.2f%% token", r.PromptMAPEPct, r.TokenMAPEPct)
			if got != BuiltinHeldOutError {
				t.Errorf("BuiltinHeldOutError = %q, Validate says %q: update the constant", BuiltinHeldOutError, got)
			}
			return
		}
	}
	t.Fatal("Validate returned no pooled row")
}
