package report

import (
	"splitplan/evaluator/perf"
	"testing"

	"splitplan/search"
	"splitplan/slo"
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

// TestFigureTextAtTheLimit: a figure within a rounding of its limit is
// written with the decimals that tell it from the limit.
func TestFigureTextAtTheLimit(t *testing.T) {
	for _, c := range []struct {
		measured, limit float64
		want            string
	}{
		{1.4237, 1.5, "1.42/1.5×"},
		{6.002, 6, "6.002/6×"},
		{5.9996, 6, "5.9996/6×"},
		{6, 6, "6.00/6×"},
		{1.25004, 1.25, "1.25004/1.25×"},
	} {
		if got := FigureText(slo.Figure{Measured: c.measured, Limit: c.limit}); got != c.want {
			t.Errorf("FigureText(%v of %v) = %q, want %q", c.measured, c.limit, got, c.want)
		}
	}
}

// TestVerifiedTextStopped: a check stopped once its failure was certain
// says by which minute, never past the check's own length (a run that
// drained past its last arrival stopped at its end).
func TestVerifiedTextStopped(t *testing.T) {
	for _, c := range []struct {
		stopS float64
		want  string
	}{
		{610, "P90 TBT over its limit within 11m"},
		{930, "P90 TBT over its limit within 15m"},
	} {
		v := &search.Verification{DurationS: 900, StopLimit: "P90 TBT", StopS: c.stopS}
		if got := verifiedText(v); got != c.want {
			t.Errorf("stopped at %g s: %q, want %q", c.stopS, got, c.want)
		}
	}
}
