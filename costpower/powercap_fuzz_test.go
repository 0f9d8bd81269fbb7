package costpower

import (
	"strings"
	"testing"

	"splitplan/internal/fuzzing"
)

// FuzzParseCaps: ParseCaps never panics, its errors quote the list, and
// what it accepts is at least one cap, each in (0, 1], ascending without
// duplicates, no more than a range of 1000 steps gives.
func FuzzParseCaps(f *testing.F) {
	fuzzing.Seed(f,
		"0.5:1.0:0.1", "0.6,0.8,1", "1", " 0.7 , 0.7 ", "0.5:1:0.0001", "0:1:0.1", "1:0.5:0.1", "0.5:1:0",
		"0.5:1:1e-300", "-1e308:1e308:1", "0.5:1:NaN", "0.5:1", "0.5,,1", "NaN", "1.5", "",
	)
	f.Fuzz(func(t *testing.T, s string) {
		caps, err := ParseCaps(s)
		if err != nil {
			if !strings.Contains(err.Error(), "power caps") {
				t.Fatalf("error does not say what it read: %v", err)
			}
			return
		}
		if len(caps) == 0 || len(caps) > 1001 {
			t.Fatalf("ParseCaps(%q): %d caps", s, len(caps))
		}
		for i, c := range caps {
			if !(c > 0 && c <= 1) || (i > 0 && !(c > caps[i-1])) {
				t.Fatalf("ParseCaps(%q) = %v: expected ascending fractions in (0, 1]", s, caps)
			}
		}
	})
}
