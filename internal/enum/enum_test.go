package enum

import "testing"

func TestNameAndIndex(t *testing.T) {
	type color int
	names := []string{"", "red", "green"} // 0 is invalid
	for v, want := range map[color]string{1: "red", 2: "green", 0: "color(0)", 3: "color(3)", -1: "color(-1)"} {
		if got := Name(names, v, "color"); got != want {
			t.Errorf("Name(%d) = %q, want %q", v, got, want)
		}
	}
	for s, want := range map[string]int{" Green ": 2, "RED": 1} {
		if got, ok := Index(names, s); !ok || got != want {
			t.Errorf("Index(%q) = %d, %v; want %d", s, got, ok, want)
		}
	}
	for _, s := range []string{"", "blue"} {
		if _, ok := Index(names, s); ok {
			t.Errorf("Index(%q) found a value", s)
		}
	}
}

func TestDescribed(t *testing.T) {
	for _, c := range []struct {
		name    string
		details []string
		want    string
	}{
		{"profiled", nil, "profiled"},
		{"profiled", []string{"", ""}, "profiled"},
		{"spec-only", []string{"a", ""}, "spec-only (a)"},
		{"spec-only", []string{"", "b"}, "spec-only (b)"},
		{"calibrated", []string{"a", "b"}, "calibrated (a; b)"},
	} {
		if got := Described(c.name, c.details...); got != c.want {
			t.Errorf("Described(%q, %q) = %q, want %q", c.name, c.details, got, c.want)
		}
	}
}
