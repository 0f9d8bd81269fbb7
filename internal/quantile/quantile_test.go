package quantile

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// exact is the p-quantile of sorted values by linear interpolation between
// order statistics (slo.Percentile's definition, numpy's "linear").
func exact(sorted []float64, q float64) float64 {
	n := len(sorted)
	rank := q * float64(n-1)
	lo := int(math.Floor(rank))
	if lo+1 >= n {
		return sorted[n-1]
	}
	f := rank - float64(lo)
	return sorted[lo] + f*(sorted[lo+1]-sorted[lo])
}

// distributions are named generators of random runs of values.
var distributions = []struct {
	name string
	gen  func(r *rand.Rand) float64
}{
	{"exponential", func(r *rand.Rand) float64 { return r.ExpFloat64() * 0.05 }},
	{"lognormal", func(r *rand.Rand) float64 { return math.Exp(r.NormFloat64()*2 - 3) }},
	{"bimodal", func(r *rand.Rand) float64 {
		if r.IntN(10) < 7 {
			return 0.02 + 0.002*r.NormFloat64()*0.1
		}
		return 1.5 + 0.5*r.Float64()
	}},
	{"constant", func(r *rand.Rand) float64 { return 0.0371 }},
	{"tiny", func(r *rand.Rand) float64 { return math.Ldexp(1+r.Float64(), -1074+r.IntN(80)) }}, // subnormals and the least normals
	{"huge", func(r *rand.Rand) float64 { return math.Ldexp(1+r.Float64(), 1000+r.IntN(23)) }},
	{"zeros", func(r *rand.Rand) float64 {
		if r.IntN(3) == 0 {
			return 0
		}
		return r.ExpFloat64()
	}},
	{"all-zero", func(r *rand.Rand) float64 { return 0 }},
	{"wide", func(r *rand.Rand) float64 { return math.Ldexp(r.Float64(), r.IntN(600)-300) }},
	{"integers", func(r *rand.Rand) float64 { return float64(1 + r.IntN(5)) }},
}

var quantiles = []float64{0, 0.001, 0.01, 0.1, 0.25, 0.5, 0.75, 0.9, 0.95, 0.99, 0.999, 1}

// TestQuantileErrorAgainstSort: on random runs of every distribution and
// length, every quantile is within RelativeError (and so 1 %) of the
// exact quantile of the sorted values; Min, Max and Count are exact.
func TestQuantileErrorAgainstSort(t *testing.T) {
	t.Parallel()
	if RelativeError > 0.01 {
		t.Fatalf("RelativeError %v is over 1 %%", RelativeError)
	}
	rng := rand.New(rand.NewPCG(31, 1))
	worst := 0.0
	for _, d := range distributions {
		for _, n := range []int{1, 2, 3, 10, 101, 1000, 20000} {
			for trial := 0; trial < 4; trial++ {
				var s Sketch
				v := make([]float64, n)
				for i := range v {
					v[i] = d.gen(rng)
					s.Add(v[i])
				}
				slices.Sort(v)
				if s.Count() != uint64(n) || s.Min() != v[0] || s.Max() != v[n-1] {
					t.Fatalf("%s n=%d: count %d min %v max %v, want %d %v %v", d.name, n, s.Count(), s.Min(), s.Max(), n, v[0], v[n-1])
				}
				for _, q := range append(quantiles, rng.Float64()) {
					got, want := s.Quantile(q), exact(v, q)
					e := math.Abs(got - want)
					if want != 0 {
						e /= want
					}
					worst = max(worst, e)
					if e > RelativeError*(1+1e-9) || math.IsNaN(got) {
						t.Fatalf("%s n=%d q=%v: %v, exact %v: relative error %.4g > %.4g", d.name, n, q, got, want, e, RelativeError)
					}
				}
			}
		}
	}
	t.Logf("worst relative error %.4g (bound %.4g)", worst, RelativeError)
}

// TestBucketWorstCase: values at a bucket's two ends are each within
// RelativeError of the bucket's estimate, and not much less (the bound is
// tight: the buckets are no finer than the docs say).
func TestBucketWorstCase(t *testing.T) {
	t.Parallel()
	for _, x := range []float64{1, 0.001, 3.7, 1e-310, 1e300} {
		i := bucket(x)
		a, b := bounds(i)
		if !(a <= x && x < b) {
			t.Fatalf("%v: bucket %d is [%v, %v)", x, i, a, b)
		}
		est := estimate(i)
		for _, v := range []float64{a, math.Nextafter(b, 0)} {
			if bucket(v) != i {
				t.Fatalf("%v: the end %v of its bucket [%v, %v) falls in bucket %d", x, v, a, b, bucket(v))
			}
			if e := math.Abs(est-v) / v; e > RelativeError*(1+1e-12) {
				t.Errorf("%v: estimate %v is %.4g from %v", x, est, e, v)
			}
		}
		if x >= 1e-300 && x < 1e300 {
			if e := (est - a) / a; e < RelativeError/2 {
				t.Errorf("%v: bucket [%v, %v) narrower than documented (%.4g)", x, a, b, e)
			}
		}
	}
}

// TestAddNSameAsAdds: AddN(v, k) gives the same buckets, Count, Min,
// Max, quantiles and Sum (to the bit) as k calls of Add(v), for random
// runs of random k.
func TestAddNSameAsAdds(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(5, 9))
	for trial := 0; trial < 200; trial++ {
		var lazy, each Sketch
		for run := 0; run < 1+rng.IntN(60); run++ {
			v := rng.ExpFloat64() * 0.03
			if rng.IntN(10) == 0 {
				v = 0
			}
			k := rng.IntN(300)
			lazy.AddN(v, k)
			for range k {
				each.Add(v)
			}
		}
		if lazy.Count() != each.Count() || !same(lazy.Min(), each.Min()) || !same(lazy.Max(), each.Max()) || lazy.zeros != each.zeros {
			t.Fatalf("trial %d: AddN count %d min %v max %v, Add %d %v %v", trial, lazy.Count(), lazy.Min(), lazy.Max(), each.Count(), each.Min(), each.Max())
		}
		if lazy.Sum() != each.Sum() {
			t.Fatalf("trial %d: AddN sum %v, Add %v", trial, lazy.Sum(), each.Sum())
		}
		if !sameBuckets(&lazy, &each) {
			t.Fatalf("trial %d: buckets differ", trial)
		}
		for _, q := range quantiles {
			if a, b := lazy.Quantile(q), each.Quantile(q); !same(a, b) {
				t.Fatalf("trial %d q=%v: AddN %v, Add %v", trial, q, a, b)
			}
		}
	}
}

// TestMergeSameAsOne: merging sketches of parts gives the buckets and
// quantiles of one sketch of all the values, in any order of merging.
func TestMergeSameAsOne(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(77, 3))
	for trial := 0; trial < 100; trial++ {
		var all Sketch
		parts := make([]Sketch, 1+rng.IntN(5))
		for i := 0; i < rng.IntN(3000); i++ {
			v := math.Ldexp(rng.Float64(), rng.IntN(40)-30)
			all.Add(v)
			parts[rng.IntN(len(parts))].Add(v)
		}
		var fwd, back Sketch
		for i := range parts {
			fwd.Merge(&parts[i])
			back.Merge(&parts[len(parts)-1-i])
		}
		for _, m := range []*Sketch{&fwd, &back} {
			if m.Count() != all.Count() || !sameBuckets(m, &all) || !same(m.Min(), all.Min()) || !same(m.Max(), all.Max()) {
				t.Fatalf("trial %d: merged count %d, one sketch %d, or buckets differ", trial, m.Count(), all.Count())
			}
			if math.Abs(m.Sum()-all.Sum()) > 1e-12*all.Sum() {
				t.Fatalf("trial %d: merged sum %v, one sketch %v", trial, m.Sum(), all.Sum())
			}
			for _, q := range quantiles {
				if a, b := m.Quantile(q), all.Quantile(q); !same(a, b) {
					t.Fatalf("trial %d q=%v: merged %v, one %v", trial, q, a, b)
				}
			}
		}
	}
}

// TestOrderDoesNotMatter: the same values added in another order give
// the same buckets and quantiles (determinism of the outputs).
func TestOrderDoesNotMatter(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(2, 2))
	v := make([]float64, 5000)
	for i := range v {
		v[i] = math.Exp(rng.NormFloat64() * 3)
	}
	var a, b Sketch
	for _, x := range v {
		a.Add(x)
	}
	rng.Shuffle(len(v), func(i, j int) { v[i], v[j] = v[j], v[i] })
	for _, x := range v {
		b.Add(x)
	}
	if !sameBuckets(&a, &b) {
		t.Fatal("buckets differ")
	}
	for _, q := range quantiles {
		if x, y := a.Quantile(q), b.Quantile(q); x != y {
			t.Fatalf("q=%v: %v and %v", q, x, y)
		}
	}
}

// TestRejectedAndEmpty: negative, NaN and infinite values are counted as
// rejected and change nothing else; an empty sketch answers NaN; q
// outside [0, 1] is NaN; Reset empties.
func TestRejectedAndEmpty(t *testing.T) {
	t.Parallel()
	var s Sketch
	if !math.IsNaN(s.Quantile(0.5)) || !math.IsNaN(s.Min()) || !math.IsNaN(s.Max()) || !math.IsNaN(s.Mean()) || s.Sum() != 0 {
		t.Fatal("empty sketch: want NaN quantile, min, max, mean and a zero sum")
	}
	s.Add(-1)
	s.Add(math.NaN())
	s.AddN(math.Inf(1), 3)
	s.AddN(2, 0)
	s.AddN(2, -4)
	if s.Count() != 0 || s.Rejected() != 5 || s.Buckets() != 0 {
		t.Fatalf("count %d rejected %d buckets %d, want 0 5 0", s.Count(), s.Rejected(), s.Buckets())
	}
	s.AddN(0.5, 3)
	s.Add(0)
	if s.Count() != 4 || s.Sum() != 1.5 || s.Mean() != 0.375 || s.Min() != 0 || s.Max() != 0.5 {
		t.Fatalf("count %d sum %v mean %v min %v max %v", s.Count(), s.Sum(), s.Mean(), s.Min(), s.Max())
	}
	// Sorted: 0, 0.5, 0.5, 0.5; the P25 interpolates 0 → 0.5 at 0.75.
	if got := s.Quantile(0.25); math.Abs(got-0.375) > 0.375*RelativeError {
		t.Errorf("P25 %v, want 0.375", got)
	}
	if got := s.Quantile(0.5); got != 0.5 { // clamped to Max
		t.Errorf("P50 %v, want 0.5", got)
	}
	for _, q := range []float64{-0.1, 1.1, math.NaN()} {
		if !math.IsNaN(s.Quantile(q)) {
			t.Errorf("Quantile(%v) = %v, want NaN", q, s.Quantile(q))
		}
	}
	n := s.Buckets()
	s.Reset()
	if s.Count() != 0 || s.Rejected() != 0 || s.Sum() != 0 || s.Buckets() != n || !math.IsNaN(s.Quantile(0.5)) {
		t.Fatal("Reset did not empty the sketch (or dropped its buckets)")
	}
	s.Add(3)
	if s.Quantile(0.5) != 3 {
		t.Fatalf("after Reset: P50 %v, want 3", s.Quantile(0.5))
	}
}

// TestMemoryBounded: the buckets grow with the range of the values, not
// their number: latencies from 1 µs to 3 h take at most twice the 34
// octaves' 2176 buckets plus two octaves (the room growth leaves), the
// whole float64 range at most as much of its 2098 octaves.
func TestMemoryBounded(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(8, 8))
	var s Sketch
	for i := 0; i < 1_000_000; i++ {
		s.Add(math.Exp(math.Log(1e-6) + rng.Float64()*(math.Log(1e4)-math.Log(1e-6))))
	}
	if lim := 2*34*perOctave + 2*perOctave; s.Buckets() > lim {
		t.Errorf("1 µs – 3 h: %d buckets, want ≤ %d", s.Buckets(), lim)
	}
	t.Logf("1 µs – 3 h: %d buckets (%d bytes)", s.Buckets(), 8*s.Buckets())
	s.Add(math.SmallestNonzeroFloat64)
	s.Add(math.MaxFloat64)
	if lim := 2*2098*perOctave + 2*perOctave; s.Buckets() > lim {
		t.Errorf("whole range: %d buckets, want ≤ %d", s.Buckets(), lim)
	}
}

func same(a, b float64) bool { return a == b || (a != a && b != b) }

// sameBuckets reports whether a and b hold the same count in every
// bucket (whatever the slack each allocated).
func sameBuckets(a, b *Sketch) bool {
	get := func(s *Sketch, i int) uint64 {
		if j := i - s.offset; j >= 0 && j < len(s.counts) {
			return s.counts[j]
		}
		return 0
	}
	lo := min(a.offset, b.offset)
	hi := max(a.offset+len(a.counts), b.offset+len(b.counts))
	for i := lo; i < hi; i++ {
		if get(a, i) != get(b, i) {
			return false
		}
	}
	return a.zeros == b.zeros
}

// TestEqual: sketches of the same values added in other orders and
// groupings are Equal though their buckets' memory differs; a value more
// or less, or another value, is not.
func TestEqual(t *testing.T) {
	t.Parallel()
	var a, b Sketch
	for _, v := range []float64{1e-3, 5, 0, 2e4, 0.25} {
		a.Add(v)
	}
	b.AddN(2e4, 1) // grows its buckets from the other end
	b.Add(0.25)
	b.Add(0)
	b.Add(1e-3)
	b.Add(5)
	if !a.Equal(&b) || !b.Equal(&a) {
		t.Fatal("the same values in another order are not Equal")
	}
	c := b
	c.counts = append([]uint64(nil), b.counts...)
	c.Add(5)
	if a.Equal(&c) {
		t.Error("one value more is Equal")
	}
	var d Sketch
	for _, v := range []float64{1e-3, 5.5, 0, 2e4, 0.25} {
		d.Add(v)
	}
	if a.Equal(&d) {
		t.Error("another value is Equal")
	}
	var e, f Sketch
	if !e.Equal(&f) || e.Equal(&a) {
		t.Error("empty sketches")
	}
}

// TestCDF: the points climb to 1 at the maximum, each bucket's fraction
// counts the values at or below its upper end.
func TestCDF(t *testing.T) {
	t.Parallel()
	var s Sketch
	if x, _ := s.CDF(); x != nil {
		t.Fatal("an empty sketch has points")
	}
	for _, v := range []float64{0, 0.01, 0.01, 0.02, 1} {
		s.Add(v)
	}
	x, f := s.CDF()
	want := []float64{0.2, 0.6, 0.8, 1}
	if len(x) != 4 || x[0] != 0 || x[3] != 1 {
		t.Fatalf("points %v %v", x, f)
	}
	for i := range want {
		if math.Abs(f[i]-want[i]) > 1e-12 {
			t.Errorf("fraction %d: %v, want %v", i, f[i], want[i])
		}
		if i > 0 && !(x[i] > x[i-1]) {
			t.Errorf("x not ascending: %v", x)
		}
	}
	if x[1] < 0.01 || x[1] > 0.01*(1+2.0/64) {
		t.Errorf("0.01's bucket ends at %v", x[1])
	}
}

func TestMedian(t *testing.T) {
	for _, c := range []struct {
		v    []float64
		want float64
	}{{[]float64{3}, 3}, {[]float64{3, 1}, 2}, {[]float64{5, 1, 3}, 3}, {[]float64{4, 1, 3, 2}, 2.5}} {
		in := slices.Clone(c.v)
		if got := Median(c.v); got != c.want {
			t.Errorf("Median(%v) = %g, want %g", in, got, c.want)
		}
	}
	if got := Median(nil); !math.IsNaN(got) {
		t.Errorf("Median(nil) = %g, want NaN", got)
	}
}
