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
