// Package quantile is a streaming quantile sketch for latencies: a
// log-bucketed histogram whose quantiles are within 1/(2M+1) ≈ 0.78 %
// (M = 64 buckets an octave) of the exact ones, filled in O(1) a value and
// in O(1) for k equal values at once (AddN), mergeable, deterministic (the
// same values in any order or grouping give the same buckets, and no
// output depends on map order), in memory bounded by the range of the
// values: 8 bytes a bucket, 64 buckets an octave of the ratio max/min, and
// at most twice that plus two octaves with the room growth leaves (17 KB
// for values from 1 µs to 3 h, 20 KB held in practice; at most 2.2 MB for
// the whole float64 range).
//
// A value v > 0 falls in bucket i = 64·e + ⌊64·(m − 1)⌋ where v = m·2^e,
// 1 ≤ m < 2 (read from the float's bits: no logarithm), i.e. the bucket
// [2^e (1 + j/64), 2^e (1 + (j+1)/64)). A bucket [a, b) is estimated by
// 2ab / (a + b), whose relative error over the bucket is at most
// (b − a)/(a + b) ≤ 1/129. Zeros are counted apart and are exact.
package quantile

import (
	"math"
	"math/bits"
)

// subBits is log2 of the buckets an octave.
const subBits = 6

// perOctave is the number of buckets an octave (M).
const perOctave = 1 << subBits

// RelativeError is the largest relative error of a quantile of values of
// one sign, 1/(2M + 1): a bucket's estimate is within it of every value
// in the bucket, and Quantile interpolates between two such estimates.
const RelativeError = 1.0 / (2*perOctave + 1)

// Sketch is a streaming histogram of non-negative values. The zero value
// is an empty sketch ready to use. A Sketch is not safe for concurrent
// use.
type Sketch struct {
	// counts[i] is the number of values in bucket offset + i.
	counts []uint64
	offset int
	zeros  uint64
	count  uint64
	// sumHi + sumLo is the sum, in double-double (about 106 bits), so
	// that AddN(v, k) and k calls of Add(v) round to the same Sum (but
	// for a rounding tie).
	sumHi, sumLo float64
	min, max     float64
	rejected     uint64
}

// bucket is the index of v's bucket (v finite and > 0).
func bucket(v float64) int {
	b := math.Float64bits(v)
	exp := int(b>>52) & 0x7ff
	mant := b & (1<<52 - 1)
	if exp == 0 { // subnormal: normalise the mantissa
		shift := bits.LeadingZeros64(mant) - 11 // bring the top bit to bit 52
		mant = (mant << uint(shift)) & (1<<52 - 1)
		exp = 1 - shift
	}
	return (exp-1023)*perOctave + int(mant>>(52-subBits))
}

// bounds are the lower and upper ends of bucket i.
func bounds(i int) (lo, hi float64) {
	e := i >> subBits // floor division
	j := i - e*perOctave
	return math.Ldexp(1+float64(j)/perOctave, e), math.Ldexp(1+float64(j+1)/perOctave, e)
}

// estimate is the value that bucket i stands for: the point of least
// largest relative error over the bucket, 2ab/(a+b).
func estimate(i int) float64 {
	a, b := bounds(i)
	return 2 * a * (b / (a + b))
}

// Add adds one value. A value that is negative, NaN or infinite is not
// added: it is counted in Rejected only.
func (s *Sketch) Add(v float64) { s.AddN(v, 1) }

// AddN adds k copies of v in O(1): the same counts, Count, Min, Max and
// quantiles as k calls of Add(v), and the same Sum but for a rounding tie
// (both sums are kept to about 106 bits, within 2^-76 of the exact one
// for up to 2^30 additions, before rounding to a float64). k ≤ 0 adds
// nothing. A value that is
// negative, NaN or infinite is not added: it is counted k times in
// Rejected only.
func (s *Sketch) AddN(v float64, k int) {
	if k <= 0 {
		return
	}
	if !(v >= 0) || math.IsInf(v, 1) {
		s.rejected += uint64(k)
		return
	}
	n := uint64(k)
	if s.count == 0 {
		s.min, s.max = v, v
	} else if v < s.min {
		s.min = v
	} else if v > s.max {
		s.max = v
	}
	s.count += n
	s.addSum(v * float64(k))
	if k > 1 {
		s.addSum(math.FMA(v, float64(k), -v*float64(k))) // the product's rounding error
	}
	if v == 0 {
		s.zeros += n
		return
	}
	i := bucket(v)
	if j := i - s.offset; j >= 0 && j < len(s.counts) {
		s.counts[j] += n
		return
	}
	s.grow(i)
	s.counts[i-s.offset] += n
}

// addSum adds x to the double-double sum (Knuth's two-sum).
func (s *Sketch) addSum(x float64) {
	hi := s.sumHi + x
	bb := hi - s.sumHi
	err := (s.sumHi - (hi - bb)) + (x - bb)
	lo := s.sumLo + err
	s.sumHi = hi + lo
	s.sumLo = lo - (s.sumHi - hi)
}

// cover makes the buckets cover bucket i.
func (s *Sketch) cover(i int) {
	if j := i - s.offset; len(s.counts) == 0 || j < 0 || j >= len(s.counts) {
		s.grow(i)
	}
}

// grow extends the buckets to cover bucket i (not covered yet), with room
// for a quarter more on that side than the sketch spans already (at least
// an octave), so that a growing range reallocates O(log) times: the room
// on each side is at most a quarter of the length (or an octave), so the
// length stays at most twice the span plus two octaves.
func (s *Sketch) grow(i int) {
	if len(s.counts) == 0 {
		s.counts = make([]uint64, perOctave)
		s.offset = i - perOctave/2
		return
	}
	lo, hi := s.offset, s.offset+len(s.counts) // [lo, hi)
	slack := max(len(s.counts)/4, perOctave)
	if i < lo {
		lo = i - slack
	} else {
		hi = i + 1 + slack
	}
	c := make([]uint64, hi-lo)
	copy(c[s.offset-lo:], s.counts)
	s.counts, s.offset = c, lo
}

// Merge adds every value of o to s (o is unchanged): the counts as if
// o's values had been added to s one by one.
func (s *Sketch) Merge(o *Sketch) {
	s.rejected += o.rejected
	if o.count == 0 {
		return
	}
	if s.count == 0 {
		s.min, s.max = o.min, o.max
	} else {
		s.min, s.max = min(s.min, o.min), max(s.max, o.max)
	}
	s.count += o.count
	s.zeros += o.zeros
	s.addSum(o.sumHi)
	s.addSum(o.sumLo)
	first, last := -1, -1
	for j, c := range o.counts {
		if c != 0 {
			if first < 0 {
				first = j
			}
			last = j
		}
	}
	if first < 0 {
		return
	}
	s.cover(o.offset + first)
	s.cover(o.offset + last)
	for j := first; j <= last; j++ {
		s.counts[o.offset+j-s.offset] += o.counts[j]
	}
}

// Equal reports whether s and o hold the same values as far as a sketch
// tells them apart: the same count in every bucket, the same zeros,
// rejected values, Count, Min, Max and Sum (the rounded sum). Two
// sketches of the same values added in another order or grouping are
// Equal (but for Sum's rounding tie, see AddN) even where their buckets'
// memory was laid out differently, which reflect.DeepEqual would see.
func (s *Sketch) Equal(o *Sketch) bool {
	if s.count != o.count || s.zeros != o.zeros || s.rejected != o.rejected || s.Sum() != o.Sum() ||
		s.count > 0 && (s.min != o.min || s.max != o.max) {
		return false
	}
	lo, hi := min(s.offset, o.offset), max(s.offset+len(s.counts), o.offset+len(o.counts))
	at := func(k *Sketch, i int) uint64 {
		if j := i - k.offset; j >= 0 && j < len(k.counts) {
			return k.counts[j]
		}
		return 0
	}
	for i := lo; i < hi; i++ {
		if at(s, i) != at(o, i) {
			return false
		}
	}
	return true
}

// CDF returns the sketch's distribution as points (x, fraction of values
// ≤ x), x ascending: the zeros at 0, then each non-empty bucket at its
// upper end (the Max for the last), the fraction reaching 1 at the last.
// Empty for an empty sketch.
func (s *Sketch) CDF() (x, frac []float64) {
	if s.count == 0 {
		return nil, nil
	}
	n := float64(s.count)
	cum := s.zeros
	if s.zeros > 0 {
		x, frac = append(x, 0), append(frac, float64(cum)/n)
	}
	for j, c := range s.counts {
		if c == 0 {
			continue
		}
		cum += c
		_, hi := bounds(s.offset + j)
		x, frac = append(x, min(hi, s.max)), append(frac, float64(cum)/n)
	}
	return x, frac
}

// Reset empties the sketch, keeping its buckets' memory.
func (s *Sketch) Reset() {
	clear(s.counts)
	c, off := s.counts, s.offset
	*s = Sketch{counts: c, offset: off}
}

// Count is the number of values added (Rejected ones not included).
func (s *Sketch) Count() uint64 { return s.count }

// Rejected is the number of values not added: negative, NaN or infinite.
func (s *Sketch) Rejected() uint64 { return s.rejected }

// Sum is the sum of the values added (0 for none).
func (s *Sketch) Sum() float64 { return s.sumHi + s.sumLo }

// Mean is Sum / Count (NaN for no values).
func (s *Sketch) Mean() float64 {
	if s.count == 0 {
		return math.NaN()
	}
	return s.Sum() / float64(s.count)
}

// Min is the least value added, exactly (NaN for no values).
func (s *Sketch) Min() float64 {
	if s.count == 0 {
		return math.NaN()
	}
	return s.min
}

// Max is the largest value added, exactly (NaN for no values).
func (s *Sketch) Max() float64 {
	if s.count == 0 {
		return math.NaN()
	}
	return s.max
}

// Buckets is the number of buckets the sketch holds (its memory is about
// 8 bytes a bucket).
func (s *Sketch) Buckets() int { return len(s.counts) }

// Quantile returns the q-quantile (0 ≤ q ≤ 1) as slo.Percentile(100q)
// defines it on the sorted values — linear interpolation between the
// order statistics of ranks ⌊q(n − 1)⌋ and the next — with each order
// statistic replaced by its bucket's estimate (clamped to [Min, Max]):
// within RelativeError of the exact quantile. Quantile(0) and Quantile(1)
// are Min and Max exactly. It returns NaN for no values or q outside
// [0, 1]. It reads the buckets once: O(buckets).
func (s *Sketch) Quantile(q float64) float64 {
	if s.count == 0 || !(q >= 0 && q <= 1) {
		return math.NaN()
	}
	if q == 0 {
		return s.min
	}
	if q == 1 {
		return s.max
	}
	rank := q * float64(s.count-1)
	lo := uint64(math.Floor(rank))
	if lo+1 >= s.count {
		return s.max
	}
	a, b := s.orderStats(lo)
	f := rank - float64(lo)
	if f == 0 || a == b {
		return a
	}
	return a + f*(b-a)
}

// orderStats returns the estimates of the order statistics of ranks r and
// r + 1 (0-based; r + 1 < Count).
func (s *Sketch) orderStats(r uint64) (a, b float64) {
	seen := s.zeros
	j := 0
	if r < seen {
		if r+1 < seen {
			return 0, 0
		}
		// a is 0; b is the least value of the buckets.
	} else {
		for ; j < len(s.counts); j++ {
			if seen += s.counts[j]; seen > r {
				break
			}
		}
		a = s.clamp(estimate(s.offset + j))
		if r+1 < seen {
			return a, a
		}
		j++
	}
	for ; j < len(s.counts); j++ {
		if s.counts[j] != 0 {
			return a, s.clamp(estimate(s.offset + j))
		}
	}
	return a, s.max // (not reached: r + 1 < Count)
}

// clamp limits an estimate to [Min, Max], where every value lies.
func (s *Sketch) clamp(v float64) float64 { return min(max(v, s.min), s.max) }
