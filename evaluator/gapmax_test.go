package evaluator

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestGapMaxSince checks the gap stack against the plain answer — the
// largest gap of the runs that ended after c0 — over random run sequences
// (gaps with ties, many runs with the same gap, empty stacks) and every c0.
func TestGapMaxSince(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(7, 13))
	for trial := range 2000 {
		var q gapMax
		if trial%2 == 0 {
			q = gapMax{at: make([]int32, 0, 2), g: make([]float64, 0, 2)} // grows
		}
		var ats []int32
		var gs []float64
		at := int32(rng.IntN(5))
		for range rng.IntN(40) {
			at += 1 + int32(rng.IntN(4))
			g := float64(rng.IntN(6)) // few values: ties
			q.add(at, g)
			ats, gs = append(ats, at), append(gs, g)
		}
		for c0 := int32(-1); c0 <= at+1; c0++ {
			want := math.Inf(-1)
			for i := range ats {
				if ats[i] > c0 {
					want = max(want, gs[i])
				}
			}
			if got := q.since(c0); got != want {
				t.Fatalf("trial %d: since(%d) = %v, want %v (runs %v, gaps %v)", trial, c0, got, want, ats, gs)
			}
		}
		if trial%3 == 0 {
			q.reset()
			if got := q.since(-1); !math.IsInf(got, -1) {
				t.Fatalf("after reset since(-1) = %v, want -Inf", got)
			}
		}
	}
}
