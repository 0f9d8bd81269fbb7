package traces

import (
	"math"
	"testing"
)

// TestScaledOutputs: outputs scale by the factor (rounded, at least one
// token), prompts do not, and factor 1 keeps the pairs.
func TestScaledOutputs(t *testing.T) {
	t.Parallel()
	d, err := Builtin("coding")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []float64{0.75, 1, 1.25} {
		s, err := d.ScaledOutputs(f)
		if err != nil {
			t.Fatal(err)
		}
		if s.Len() != d.Len() {
			t.Fatalf("×%g: %d pairs, want %d", f, s.Len(), d.Len())
		}
		for i, p := range d.pairs {
			q := s.pairs[i]
			want := max(int32(math.Round(float64(p.output)*f)), 1)
			if q.prompt != p.prompt || q.output != want {
				t.Fatalf("×%g pair %d: %v, want prompt %d output %d", f, i, q, p.prompt, want)
			}
		}
	}
	if _, err := d.ScaledOutputs(0); err == nil {
		t.Error("factor 0 accepted")
	}
}
