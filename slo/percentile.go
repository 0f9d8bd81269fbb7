package slo

import (
	"math"
	"slices"
	"sort"
	"splitplan/internal/quantile"

	"splitplan/evaluator"
	"splitplan/internal/prefault"
)

// Percentile returns the p-th percentile (0 ≤ p ≤ 100) of sorted values by
// linear interpolation between order statistics (numpy's default "linear"
// method): rank = p/100 × (n − 1). It returns NaN for no values.
func Percentile(sorted []float64, p float64) float64 {
	n := len(sorted)
	if n == 0 {
		return math.NaN()
	}
	if p <= 0 {
		return sorted[0]
	}
	if p >= 100 {
		return sorted[n-1]
	}
	rank := p / 100 * float64(n-1)
	lo := int(math.Floor(rank))
	if lo+1 >= n {
		return sorted[n-1]
	}
	f := rank - float64(lo)
	return sorted[lo] + f*(sorted[lo+1]-sorted[lo])
}

// CertainlyOver is the number of a series' n values that, once all over
// a limit, put its p-th percentile (Percentile's) over the limit too,
// whatever the other values: the percentile interpolates between the
// order statistics of ranks lo = ⌊p/100 × (n − 1)⌋ and lo + 1, and is at
// least the first, which is over the limit when n − lo values are. (The
// minimum for p ≤ 0: all n; the maximum for p ≥ 100: one.)
func CertainlyOver(n int, p float64) int {
	switch {
	case n <= 0:
		return 1
	case p <= 0:
		return n
	case p >= 100:
		return 1
	}
	lo := int(math.Floor(p / 100 * float64(n-1)))
	if lo+1 >= n {
		return 1 // Percentile returns the maximum
	}
	return n - lo
}

// percentileOf returns Percentile(sorted values, p) without sorting:
// it selects the one or two order statistics the percentile interpolates
// between (quickselect, O(n) on average), so the result is exactly the
// sorted one, ties included. It reorders values. A series holding NaN
// (which the sort puts first) is sorted instead.
func percentileOf(values []float64, p float64) float64 {
	n := len(values)
	if n == 0 {
		return math.NaN()
	}
	for _, v := range values {
		if v != v {
			sort.Float64s(values)
			return Percentile(values, p)
		}
	}
	if p <= 0 {
		return minOf(values)
	}
	if p >= 100 {
		return maxOf(values)
	}
	rank := p / 100 * float64(n-1)
	lo := int(math.Floor(rank))
	if lo+1 >= n {
		return maxOf(values)
	}
	a := selectKth(values, lo)
	b := minOf(values[lo+1:]) // everything after the lo-th is at least it
	f := rank - float64(lo)
	return a + f*(b-a)
}

func minOf(v []float64) float64 {
	m := v[0]
	for _, x := range v[1:] {
		if x < m {
			m = x
		}
	}
	return m
}

func maxOf(v []float64) float64 {
	m := v[0]
	for _, x := range v[1:] {
		if x > m {
			m = x
		}
	}
	return m
}

// selectKth reorders v (no NaN) so that v[k] is the value sorting would
// put there, every value before it no greater and every value after it no
// smaller, and returns v[k]. Quickselect with a median-of-three pivot; it
// sorts the rest when the partitions stop shrinking (a bad pivot run), so
// it never takes more than O(n log n).
func selectKth(v []float64, k int) float64 {
	lo, hi := 0, len(v)-1
	for budget := 2 * bitsLen(len(v)); hi > lo; budget-- {
		if budget == 0 || hi-lo < 16 {
			sort.Float64s(v[lo : hi+1])
			break
		}
		// Median of three as the pivot.
		mid := lo + (hi-lo)/2
		if v[mid] < v[lo] {
			v[mid], v[lo] = v[lo], v[mid]
		}
		if v[hi] < v[lo] {
			v[hi], v[lo] = v[lo], v[hi]
		}
		if v[hi] < v[mid] {
			v[hi], v[mid] = v[mid], v[hi]
		}
		pivot := v[mid]
		// Hoare partition: v[lo..j] <= pivot <= v[j+1..hi].
		i, j := lo-1, hi+1
		for {
			for i++; v[i] < pivot; i++ {
			}
			for j--; v[j] > pivot; j-- {
			}
			if i >= j {
				break
			}
			v[i], v[j] = v[j], v[i]
		}
		if k <= j {
			hi = j
		} else {
			lo = j + 1
		}
	}
	return v[k]
}

// bitsLen is the number of bits of n.
func bitsLen(n int) int {
	b := 0
	for ; n > 0; n >>= 1 {
		b++
	}
	return b
}

// Dist is the distribution of one metric over requests.
type Dist struct {
	Mean, P50, P90, P99, Max float64
}

// NewDist summarizes values (which it reorders: it selects the
// percentiles rather than sorting, each higher one among the values the
// one before left above it).
func NewDist(values []float64) Dist {
	if len(values) == 0 {
		nan := math.NaN()
		return Dist{nan, nan, nan, nan, nan}
	}
	sum := 0.0
	for _, v := range values {
		sum += v
	}
	var sel selection
	return Dist{Mean: sum / float64(len(values)),
		P50: sel.percentile(values, 50), P90: sel.percentile(values, 90), P99: sel.percentile(values, 99),
		Max: sel.percentile(values, 100)}
}

// Latency summarizes the latencies of a simulation's requests.
type Latency struct {
	// TTFT, TBT, E2E are the time to first token, the mean time between
	// tokens (requests with one output token have none and are left out)
	// and the end-to-end latency, in seconds.
	TTFT, TBT, E2E Dist
	// TBTReference is the reference simulator's TBT, (E2E − TTFT) / output.
	TBTReference Dist
	// Queue is the queueing delay (arrival to the prompt's start);
	// SchedDelay the scheduling delay (the Queue SLO metric: the queueing
	// delay plus the wait of the decode to start once it could); MaxGap
	// each request's longest gap between tokens (the Stall metric).
	Queue, SchedDelay, MaxGap Dist
	// ITL is every gap between consecutive tokens of every request, from
	// the simulation's sketch (quantiles within 0.78%; mean and max exact).
	ITL Dist
}

// SketchDist summarizes a sketch as a Dist: its quantiles (within
// quantile.RelativeError), exact mean and max; NaNs when it is empty.
func SketchDist(sk *quantile.Sketch) Dist {
	if sk.Count() == 0 {
		nan := math.NaN()
		return Dist{nan, nan, nan, nan, nan}
	}
	return Dist{Mean: sk.Mean(), P50: sk.Quantile(0.5), P90: sk.Quantile(0.9), P99: sk.Quantile(0.99), Max: sk.Max()}
}

// Summarize computes the latency distributions of res's requests, from
// its requests or, when it kept latencies only, from those (the same
// figures: the TBTs are computed as the simulator computes them); of a
// streamed run, its Summary's sketches (within 0.78%).
func Summarize(res *evaluator.Result) Latency {
	if sm := res.Summary; sm != nil {
		// A streamed run (evaluator.Options.Streamed): its sketches.
		return Latency{TTFT: SketchDist(&sm.TTFT), TBT: SketchDist(&sm.TBT), E2E: SketchDist(&sm.E2E),
			TBTReference: SketchDist(&sm.TBTReference), Queue: SketchDist(&sm.Queue), SchedDelay: SketchDist(&sm.SchedDelay),
			MaxGap: SketchDist(&sm.MaxGap), ITL: SketchDist(&res.ITL)}
	}
	n := res.RequestCount()
	buf := make([]float64, 0, n)
	prefault.Slice(buf) // filled seven times over
	pick := func(f func(r evaluator.RequestLatency) (float64, bool)) Dist {
		buf = buf[:0]
		for i := 0; i < n; i++ {
			if v, ok := f(res.Latency(i)); ok {
				buf = append(buf, v)
			}
		}
		return NewDist(buf)
	}
	return Latency{
		TTFT:         pick(func(r evaluator.RequestLatency) (float64, bool) { return r.TTFTS, true }),
		TBT:          pick(func(r evaluator.RequestLatency) (float64, bool) { return r.TBT(), r.OutputTokens > 1 }),
		E2E:          pick(func(r evaluator.RequestLatency) (float64, bool) { return r.E2ES, true }),
		TBTReference: pick(func(r evaluator.RequestLatency) (float64, bool) { return r.TBTReference(), true }),
		Queue:        pick(func(r evaluator.RequestLatency) (float64, bool) { return r.QueueS, true }),
		SchedDelay:   pick(func(r evaluator.RequestLatency) (float64, bool) { return r.SchedDelayS, true }),
		MaxGap:       pick(func(r evaluator.RequestLatency) (float64, bool) { return r.MaxGapS, r.OutputTokens > 1 }),
		ITL:          SketchDist(&res.ITL),
	}
}

// selection is what the percentiles already read from one series have
// left known of its order, so that the next selects among fewer values:
// the ranks (order statistics) already in place, ascending. The value at
// such a rank q is the one sorting puts there, every value before it no
// greater and every value after it no smaller; so the values between two
// known ranks are exactly the order statistics between them, and a rank
// among them is selected there alone. A spec's targets read a series'
// P50, P90 and P99 in turn: the P90 selects among the upper half, the
// P99 among the upper tenth, instead of each among all.
type selection struct {
	checked bool // the series was checked for NaN: nan says whether it has one
	nan     bool
	known   []int
}

// percentile is percentileOf(values, p), values being the series s has
// seen before (reordered only by s) or a new one for the zero s.
func (s *selection) percentile(values []float64, p float64) float64 {
	n := len(values)
	if !s.checked {
		s.checked = true
		for _, v := range values {
			if v != v {
				s.nan = true
				break
			}
		}
	}
	if n == 0 || s.nan || p <= 0 || p >= 100 {
		return percentileOf(values, p) // (a NaN series is sorted there)
	}
	rank := p / 100 * float64(n-1)
	lo := int(math.Floor(rank))
	if lo+1 >= n {
		return maxOf(values)
	}
	a := s.at(values, lo)
	// The next order statistic is the least of those after lo: among
	// values[lo+1:] up to the next known rank, which is no greater than
	// any after it.
	to := n
	if i := s.after(lo); i < len(s.known) {
		to = s.known[i] + 1
	}
	b := minOf(values[lo+1 : to])
	f := rank - float64(lo)
	return a + f*(b-a)
}

// after is the index in s.known of the first known rank above k.
func (s *selection) after(k int) int {
	i := sort.SearchInts(s.known, k)
	if i < len(s.known) && s.known[i] == k {
		i++
	}
	return i
}

// at returns the k-th order statistic of values, selecting it between the
// known ranks around k, and records k as known.
func (s *selection) at(values []float64, k int) float64 {
	i := sort.SearchInts(s.known, k)
	if i < len(s.known) && s.known[i] == k {
		return values[k]
	}
	from, to := 0, len(values)
	if i > 0 {
		from = s.known[i-1] + 1
	}
	if i < len(s.known) {
		to = s.known[i]
	}
	v := selectKth(values[from:to], k-from)
	s.known = slices.Insert(s.known, i, k)
	return v
}
