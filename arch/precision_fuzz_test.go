package arch

import (
	"strings"
	"testing"

	"splitplan/internal/fuzzing"
)

// FuzzParsePrecision: ParsePrecision never panics; what it accepts is a
// valid precision whose canonical name parses back to it, and an error
// quotes the name and lists the valid ones.
func FuzzParsePrecision(f *testing.F) {
	fuzzing.Seed(f, "bf16", "FP16", " fp8_block ", "nvfp4", "mxfp4", "int4_wo", "W4A16", "fp32", "", "fp8\x00")
	f.Fuzz(func(t *testing.T, s string) {
		p, err := ParsePrecision(s)
		if err != nil {
			if !strings.Contains(err.Error(), "expected one of") {
				t.Fatalf("error does not list the precisions: %v", err)
			}
			return
		}
		if !p.Valid() {
			t.Fatalf("ParsePrecision(%q) = invalid %d", s, int(p))
		}
		name, err := p.MarshalText()
		if err != nil {
			t.Fatal(err)
		}
		if q, err := ParsePrecision(string(name)); err != nil || q != p {
			t.Fatalf("%q read as %v, whose name %q reads as %v, %v", s, p, name, q, err)
		}
	})
}
