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
	t.Parallel()
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
	t.Parallel()
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
	t.Parallel()
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

// TestScaled: factors of 1 give the model's times; a mixed iteration's
// factor lies between the phases' and moves toward the phase that
// dominates it.
func TestScaled(t *testing.T) {
	t.Parallel()
	pair, err := perf.Builtin().Lookup("bloom-176b", "h100-80gb", 8)
	if err != nil {
		t.Fatal(err)
	}
	base := pair.Model()
	one := Scaled{Model: base, Prompt: 1, Decode: 1}
	for _, tok := range []int{1, 100, 4096} {
		a, _ := base.PromptTime(tok)
		b, _ := one.PromptTime(tok)
		c, _ := base.MixedTime(tok, 8, 8000)
		d, _ := one.MixedTime(tok, 8, 8000)
		if a != b || c != d {
			t.Fatalf("unit factors changed a time: %v vs %v, %v vs %v", a, b, c, d)
		}
	}
	s := Scaled{Model: base, Prompt: 2, Decode: 1}
	dt, _ := s.DecodeTime(16, 16000)
	bd, _ := base.DecodeTime(16, 16000)
	if dt != bd {
		t.Errorf("decode scaled by the prompt factor: %v vs %v", dt, bd)
	}
	small, _ := s.MixedTime(16, 64, 64000)
	big, _ := s.MixedTime(8192, 64, 64000)
	bs, _ := base.MixedTime(16, 64, 64000)
	bb, _ := base.MixedTime(8192, 64, 64000)
	fs, fb := small/bs, big/bb
	if !(fs >= 1 && fs < fb && fb <= 2) {
		t.Errorf("mixed factors %v (few prompt tokens), %v (many): want 1 ≤ small < big ≤ 2", fs, fb)
	}
}
