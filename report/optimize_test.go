package report

import (
	"splitplan/evaluator/perf"
	"testing"

	"splitplan/search"
)

// TestSpecOnlyNote: the best line says when the winner's performance
// rests on spec-only figures, for both pools or one, and nothing when it
// is profiled or calibrated.
func TestSpecOnlyNote(t *testing.T) {
	t.Parallel()
	spec := perf.Provenance{Kind: perf.SpecOnly}
	cal := perf.Provenance{Kind: perf.Calibrated}
	for _, c := range []struct {
		d    search.DesignResult
		want string
	}{
		{search.DesignResult{Baseline: true, PromptProvenance: spec, TokenProvenance: spec}, " (spec-only performance figures: uncalibrated)"},
		{search.DesignResult{PromptProvenance: spec, TokenProvenance: spec}, " (spec-only performance figures: uncalibrated)"},
		{search.DesignResult{PromptProvenance: spec, TokenProvenance: cal}, " (prompt pool on spec-only performance figures: uncalibrated)"},
		{search.DesignResult{PromptProvenance: cal, TokenProvenance: spec}, " (token pool on spec-only performance figures: uncalibrated)"},
		{search.DesignResult{Baseline: true, PromptProvenance: cal, TokenProvenance: cal}, ""},
		{search.DesignResult{PromptProvenance: perf.Provenance{Kind: perf.Profiled}, TokenProvenance: cal}, ""},
	} {
		if got := specOnlyNote(c.d); got != c.want {
			t.Errorf("%+v, %+v (baseline %v): %q, want %q", c.d.PromptProvenance, c.d.TokenProvenance, c.d.Baseline, got, c.want)
		}
	}
}

func TestPlural(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		n    int
		want string
	}{{0, "0 machines"}, {1, "1 machine"}, {2, "2 machines"}} {
		if got := plural(c.n, "machine", "machines"); got != c.want {
			t.Errorf("plural(%d) = %q, want %q", c.n, got, c.want)
		}
	}
}
