package measured

import (
	"math"
	"testing"
)

// TestEngineCoordsAtBounds: engine and serving terms at, beyond or
// between their bounds give finite optimiser coordinates that map back to
// the values clamped to the bounds; an infinite coordinate made a fit
// start, and end, at the zero vector.
func TestEngineCoordsAtBounds(t *testing.T) {
	t.Parallel()
	for _, f := range []float64{0, 1e-3, 0.5, 1, 2} {
		var v [len(termBounds)]float64
		for i, b := range termBounds {
			v[i] = b[0] + f*(b[1]-b[0])
		}
		th := EngineTerms{v[0], v[1], v[2], v[3]}
		sv := Serving{RequestOverheadS: v[4], WaitIterations: v[5], ClientOverheadS: v[6], PromptTokenS: v[7]}
		x := engineCoords(th, sv)
		if !allFinite(x) {
			t.Fatalf("fraction %g of the range: coordinates %v", f, x)
		}
		gth, gsv := engineParams(x)
		got := [len(termBounds)]float64{gth[0], gth[1], gth[2], gth[3], gsv.RequestOverheadS, gsv.WaitIterations, gsv.ClientOverheadS, gsv.PromptTokenS}
		for i, b := range termBounds {
			want := min(max(v[i], b[0]), b[1])
			if math.Abs(got[i]-want) > 1e-5*b[1]+1e-4*want {
				t.Errorf("term %d: %g came back as %g (bounds %v)", i, v[i], got[i], b)
			}
		}
	}
	for _, h := range []float64{minHostFactor, 0.5, 1, 3, maxHostFactor} {
		if y := hostCoord(h); math.IsInf(y, 0) || math.Abs(hostParam(y)-h) > 1e-4*h {
			t.Errorf("host factor %g: coordinate %g gives back %g", h, y, hostParam(y))
		}
	}
}

// TestFitErrBlendsRelativeAndLogError: the fit's per-row loss is the mean
// of the absolute relative error (the MAPE's terms) and the absolute log
// error, TTFT plus TPOT: zero when exact, the same for TTFT and TPOT, an
// under-prediction by a factor f cheaper than an over-prediction by f
// (the relative half) but growing without bound as f grows (the log
// half); a non-positive prediction costs the fixed penalty.
func TestFitErrBlendsRelativeAndLogError(t *testing.T) {
	t.Parallel()
	r := Row{TTFTms: 200, TPOTms: 20}
	half := func(ratio float64) float64 { return 0.5*math.Abs(ratio-1) + 0.5*math.Abs(math.Log(ratio)) }
	for _, c := range []struct {
		ttftS, tpotS, want float64
	}{
		{0.2, 0.02, 0},
		{0.3, 0.02, half(1.5)},
		{0.2, 0.03, half(1.5)},
		{0.02, 0.02, 0.5*0.9 + 0.5*math.Log(10)},
		{2, 0.02, 0.5*9 + 0.5*math.Log(10)},
		{0.1, 0.03, half(0.5) + half(1.5)},
		{0, 0.02, 100},
		{0.2, math.NaN(), 100},
	} {
		if got := fitErr(r, c.ttftS, c.tpotS); math.Abs(got-c.want) > 1e-12 {
			t.Errorf("TTFT %g s, TPOT %g s against %g ms, %g ms: loss %g, want %g", c.ttftS, c.tpotS, r.TTFTms, r.TPOTms, got, c.want)
		}
	}
	prev := 0.0
	for _, f := range []float64{1.5, 3, 10, 100, 1e4} {
		under, over := fitErr(r, 0.2/f, 0.02), fitErr(r, 0.2*f, 0.02)
		if !(under < over) {
			t.Errorf("%g× under-predicted costs %g, not less than %g× over-predicted's %g", f, under, f, over)
		}
		if !(under > prev) {
			t.Errorf("%g× under-predicted costs %g, not more than a smaller miss's %g", f, under, prev)
		}
		prev = under
	}
}
