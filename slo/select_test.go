package slo

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestPercentileOfMatchesSort: selecting a percentile gives exactly what
// the sorted series gives, on random series with and without ties, of
// every length from 1, at percentiles including the ends.
func TestPercentileOfMatchesSort(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(13, 7))
	ps := []float64{0, 0.1, 1, 12.5, 50, 90, 99, 99.9, 100}
	for trial := 0; trial < 2000; trial++ {
		v := randomSeries(rng, trial, 300, 50)
		n := len(v)
		sorted := slices.Clone(v)
		slices.Sort(sorted)
		for _, p := range append(ps, 100*rng.Float64()) {
			w := slices.Clone(v)
			got, want := percentileOf(w, p), Percentile(sorted, p)
			if !same(got, want) {
				t.Fatalf("trial %d, n %d, P%v: selected %v, sorted %v", trial, n, p, got, want)
			}
			slices.Sort(w)
			if !slices.Equal(w, sorted) {
				t.Fatalf("trial %d: selection lost or changed values", trial)
			}
		}
	}
	// The sort puts NaN first: [NaN 1 3], whose P50 is 1.
	if got := percentileOf([]float64{3, math.NaN(), 1}, 50); got != 1 {
		t.Errorf("a series with NaN: %v", got)
	}
}

// TestNewDistMatchesSort: NewDist's nested selections (P50, then P90
// among what P50 left above it, then P99) give exactly the sorted
// series' percentiles, with and without ties and NaN, at every length.
func TestNewDistMatchesSort(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(13, 8))
	for trial := 0; trial < 3000; trial++ {
		v, sorted := seriesWithNaN(rng, trial, 200, 100, 97)
		n := len(v)
		got := NewDist(slices.Clone(v))
		want := Dist{P50: Percentile(sorted, 50), P90: Percentile(sorted, 90), P99: Percentile(sorted, 99), Max: Percentile(sorted, 100)}
		if !same(got.P50, want.P50) || !same(got.P90, want.P90) || !same(got.P99, want.P99) || !same(got.Max, want.Max) {
			t.Fatalf("trial %d, n %d: NewDist %+v, sorted %+v", trial, n, got, want)
		}
	}
}

// seriesWithNaN is randomSeries with a NaN every nanEvery trials, and
// the series sorted.
func seriesWithNaN(rng *rand.Rand, trial, maxN, longEvery, nanEvery int) (v, sorted []float64) {
	v = randomSeries(rng, trial, maxN, longEvery)
	if trial%nanEvery == 0 {
		v[rng.IntN(len(v))] = math.NaN()
	}
	sorted = slices.Clone(v)
	slices.Sort(sorted)
	return v, sorted
}

// same reports equal values, NaN equal to NaN.
func same(a, b float64) bool { return a == b || (math.IsNaN(a) && math.IsNaN(b)) }

// randomSeries is trial's test series: up to maxN values (up to 20,000
// every longEvery trials), by trial % 4 random, drawn from few distinct
// values (many ties), sorted, or reversed.
func randomSeries(rng *rand.Rand, trial, maxN, longEvery int) []float64 {
	n := 1 + rng.IntN(maxN)
	if trial%longEvery == 0 {
		n = 1 + rng.IntN(20000)
	}
	v := make([]float64, n)
	distinct := 1 + rng.IntN(n+1)
	for i := range v {
		switch trial % 4 {
		case 0:
			v[i] = rng.Float64()
		case 1:
			v[i] = float64(rng.IntN(distinct))
		case 2:
			v[i] = float64(i)
		default:
			v[i] = float64(n - i)
		}
	}
	return v
}

// TestSelectionMatchesSort: percentiles read in turn from one series,
// each selecting between the ranks the earlier ones left known (as
// Measurements.Percentile reads them for a spec's targets), give exactly
// the sorted series' percentiles, in any order of percentiles, repeated
// or not, with and without ties and NaN, and leave the values a
// permutation of the series.
func TestSelectionMatchesSort(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(13, 9))
	ps := []float64{0, 0.1, 1, 12.5, 50, 50, 90, 99, 99.9, 100}
	for trial := 0; trial < 3000; trial++ {
		v, sorted := seriesWithNaN(rng, trial, 300, 100, 89)
		n := len(v)
		w := slices.Clone(v)
		var s selection
		for k := 0; k < 1+rng.IntN(8); k++ {
			p := ps[rng.IntN(len(ps))]
			if rng.IntN(3) == 0 {
				p = 100 * rng.Float64()
			}
			got, want := s.percentile(w, p), Percentile(sorted, p)
			if !same(got, want) {
				t.Fatalf("trial %d, n %d, read %d, P%v: selected %v, sorted %v (known ranks %v)", trial, n, k, p, got, want, s.known)
			}
		}
		for _, q := range s.known {
			if w[q] != sorted[q] {
				t.Fatalf("trial %d: known rank %d holds %v, sorted %v", trial, q, w[q], sorted[q])
			}
		}
		slices.Sort(w)
		if !slices.Equal(w, sorted) && !math.IsNaN(sorted[0]) {
			t.Fatalf("trial %d: selection lost or changed values", trial)
		}
	}
}
