package plots

import (
	"math/rand/v2"
	"testing"

	"gonum.org/v1/plot/vg"
)

// TestPlaceLabelsNoOverlap places random clusters of labels (many at the
// same anchor, as optima of several CSVs often are) and checks that no
// two overlap and that a lone label keeps the usual right-above place.
func TestPlaceLabelsNoOverlap(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(7, 11))
	for trial := 0; trial < 500; trial++ {
		n := 1 + rng.IntN(14)
		anchors, sizes := make([]vg.Point, n), make([]vg.Point, n)
		for i := range anchors {
			anchors[i] = vg.Point{X: vg.Length(rng.Float64() * 80), Y: vg.Length(rng.Float64() * 40)}
			if rng.IntN(3) == 0 && i > 0 {
				anchors[i] = anchors[rng.IntN(i)]
			}
			sizes[i] = vg.Point{X: vg.Length(20 + rng.Float64()*80), Y: 9}
		}
		offs := placeLabels(anchors, sizes, 4)
		boxes := make([]labelBox, n)
		for i := range boxes {
			min := vg.Point{X: anchors[i].X + offs[i].X, Y: anchors[i].Y + offs[i].Y}
			boxes[i] = labelBox{Min: min, Max: vg.Point{X: min.X + sizes[i].X, Y: min.Y + sizes[i].Y}}
		}
		for i := range boxes {
			for _, a := range anchors {
				if boxes[i].overlaps(labelBox{Min: vg.Point{X: a.X - 4, Y: a.Y - 4}, Max: vg.Point{X: a.X + 4, Y: a.Y + 4}}) {
					t.Fatalf("trial %d: label %d covers the marker at %v", trial, i, a)
				}
			}
		}
		for i := range boxes {
			for j := i + 1; j < n; j++ {
				if boxes[i].overlaps(boxes[j]) {
					t.Fatalf("trial %d: labels %d and %d overlap: %v %v", trial, i, j, boxes[i], boxes[j])
				}
			}
		}
	}
	if o := placeLabels([]vg.Point{{X: 10, Y: 10}}, []vg.Point{{X: 30, Y: 9}}, 4); o[0] != (vg.Point{X: 7, Y: 4}) {
		t.Errorf("a lone label is offset %v, want right-above (7, 4)", o[0])
	}
}
