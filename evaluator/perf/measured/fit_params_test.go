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
	for _, f := range []float64{0, 1e-3, 0.5, 1, 2} {
		var v [7]float64
		for i, b := range termBounds {
			v[i] = b[0] + f*(b[1]-b[0])
		}
		th := EngineTerms{v[0], v[1], v[2], v[3]}
		sv := Serving{RequestOverheadS: v[4], WaitIterations: v[5], ClientOverheadS: v[6]}
		x := engineCoords(th, sv)
		if !allFinite(x) {
			t.Fatalf("fraction %g of the range: coordinates %v", f, x)
		}
		gth, gsv := engineParams(x)
		got := [7]float64{gth[0], gth[1], gth[2], gth[3], gsv.RequestOverheadS, gsv.WaitIterations, gsv.ClientOverheadS}
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

// TestFitErrIsTheQuotedError: the fit's per-row loss is the absolute
// relative error of TTFT plus TPOT, the terms of the MAPE validation
// quotes, so an under-prediction costs at most 1 and a 10× one costs
// less than a 10× over-prediction; a non-positive prediction costs the
// fixed penalty.
func TestFitErrIsTheQuotedError(t *testing.T) {
	r := Row{TTFTms: 200, TPOTms: 20}
	for _, c := range []struct {
		ttftS, tpotS, want float64
	}{
		{0.2, 0.02, 0},
		{0.3, 0.02, 0.5},
		{0.2, 0.01, 0.5},
		{0.02, 0.02, 0.9},
		{2, 0.02, 9},
		{0.1, 0.03, 1},
		{0, 0.02, 100},
		{0.2, math.NaN(), 100},
	} {
		if got := fitErr(r, c.ttftS, c.tpotS); math.Abs(got-c.want) > 1e-12 {
			t.Errorf("TTFT %g s, TPOT %g s against %g ms, %g ms: loss %g, want %g", c.ttftS, c.tpotS, r.TTFTms, r.TPOTms, got, c.want)
		}
	}
	for _, p := range []float64{0.01, 0.1, 0.9} {
		if under, over := fitErr(r, p*0.2, 0.02), fitErr(r, 0.2/p, 0.02); !(under < over) {
			t.Errorf("%g× under-predicted costs %g, not less than %g× over-predicted's %g", 1/p, under, 1/p, over)
		}
	}
}
