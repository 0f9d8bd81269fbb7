package errmodel

import (
	"math"
	"testing"

	"splitplan/evaluator/perf"
)

// TestBuiltinShape: the built-in model has residuals for every
// provenance and phase, all finite and sorted, and its spread orders as
// the validations do: profiled pairs far tighter than the cross-validated
// calibration.
func TestBuiltinShape(t *testing.T) {
	m := Builtin()
	if err := m.Validate(); err != nil {
		t.Fatal(err)
	}
	spread := func(k perf.ProvenanceKind, ph Phase) float64 {
		return math.Log(m.Factor(k, ph, 0.9) / m.Factor(k, ph, 0.1))
	}
	for _, k := range []perf.ProvenanceKind{perf.Profiled, perf.Calibrated, perf.SpecOnly, perf.Measured} {
		for _, ph := range Phases {
			if len(m.Of(k, ph)) == 0 {
				t.Errorf("%s %s: no residuals", k, ph)
			}
			t.Logf("%s %s: n=%d P10 %.3f P50 %.3f P90 %.3f", k, ph, len(m.Of(k, ph)), m.Factor(k, ph, 0.1), m.Factor(k, ph, 0.5), m.Factor(k, ph, 0.9))
		}
	}
	if !(spread(perf.Profiled, Decode) < spread(perf.Calibrated, Decode)) {
		t.Errorf("profiled decode spread %.3f not below calibrated %.3f", spread(perf.Profiled, Decode), spread(perf.Calibrated, Decode))
	}
}

// TestFactor: the zero model draws exactly 1; the factor grows with u and
// is exp(−r) of the residual at the top for u → 1.
func TestFactor(t *testing.T) {
	if f := (Model{}).Factor(perf.Profiled, Prompt, 0.7); f != 1 {
		t.Fatalf("zero model factor %v, want 1", f)
	}
	m := Model{Sets: []Residuals{{Kind: perf.Calibrated, Phase: Decode, N: 4, Log: []float64{-0.2, 0, 0.1, 0.3}}}}
	if err := m.Validate(); err != nil {
		t.Fatal(err)
	}
	want := []float64{math.Exp(-0.3), math.Exp(-0.1), 1, math.Exp(0.2)}
	for i, u := range []float64{0, 0.3, 0.6, 0.99} {
		if got := m.Factor(perf.Calibrated, Decode, u); math.Abs(got-want[i]) > 1e-15 {
			t.Errorf("u=%v: factor %v, want %v", u, got, want[i])
		}
	}
	if f := m.Factor(perf.Calibrated, Prompt, 0.5); f != 1 {
		t.Errorf("a phase without residuals draws %v, want 1", f)
	}
	bad := Model{Sets: []Residuals{{Kind: perf.Calibrated, Phase: Decode, Log: []float64{0.1, -0.1}}}}
	if bad.Validate() == nil {
		t.Error("unsorted residuals accepted")
	}
}

// TestUniform: a draw depends on (seed, scenario, GPU, phase) only, and
// different scenarios draw differently.
func TestUniform(t *testing.T) {
	a := Uniform(7, 3, "H100-80GB", Decode)
	if b := Uniform(7, 3, "H100-80GB", Decode); a != b {
		t.Fatal("same key, different draws")
	}
	if a == Uniform(7, 4, "H100-80GB", Decode) || a == Uniform(7, 3, "H100-80GB", Prompt) || a == Uniform(8, 3, "H100-80GB", Decode) {
		t.Error("a draw repeats under another key")
	}
	if !(a >= 0 && a < 1) {
		t.Errorf("draw %v outside [0, 1)", a)
	}
}
