package measured

import (
	"math"
	"testing"

	"splitplan/evaluator/perf/analytic"
)

// TestUnparamsAtBounds: efficiencies at their bounds (a shared entry's
// scaled to a GPU clamps at 1) give finite optimiser coordinates that map
// back to about the same values; an infinite one made a pair's fit start,
// and end, at the zero vector (every efficiency 0.51, 200 ms overhead).
func TestUnparamsAtBounds(t *testing.T) {
	for _, v := range []float64{0.02, 0.5, 1} {
		e := analytic.Efficiency{Compute: v, ExpertCompute: v, Memory: v, Comm: v, FlatLatency: v,
			OverheadS: 1e-4, SequenceOverheadS: 1e-6, LayerOverheadS: 1e-5}
		sv := Serving{RequestOverheadS: 1e-2, WaitIterations: 5, ClientOverheadS: 1e-4}
		x := unparams(e, sv)
		if !allFinite(x) {
			t.Fatalf("efficiencies %g: coordinates %v", v, x)
		}
		got, _ := params(x)
		for name, g := range map[string]float64{"compute": got.Compute, "expert": got.ExpertCompute, "memory": got.Memory, "comm": got.Comm} {
			if math.Abs(g-v) > 1e-5 {
				t.Errorf("%s %g came back as %g", name, v, g)
			}
		}
	}
}
