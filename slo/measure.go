package slo

import (
	"fmt"
	"math"

	"splitplan/evaluator"
)

// Scale is how a series measures a latency: as a slowdown against the
// reference machine, or in seconds.
type Scale int

// Scales.
const (
	// Slowdown is the latency over the request's latency alone on the
	// reference machine.
	Slowdown Scale = iota
	// Seconds is the latency itself.
	Seconds
)

// String is "slowdown" or "s", the suffix of the scale's CSV columns.
func (s Scale) String() string {
	if s == Seconds {
		return "s"
	}
	return "slowdown"
}

// Series names one distribution over requests: a metric on a scale.
type Series struct {
	Metric Metric
	Scale  Scale
}

// AllSeries lists every metric on both scales.
func AllSeries() []Series {
	var out []Series
	for _, m := range Metrics() {
		out = append(out, Series{m, Seconds}, Series{m, Slowdown})
	}
	return out
}

// Measurements are the latencies of one simulation per series, and what
// decides whether it drained. Measure builds them; Percentile reads them
// and Spec.Judge checks them. Percentile reorders a series' values in
// place (it selects rather than sorts), so one Measurements is not for
// concurrent use.
type Measurements struct {
	// sorted[metric index][scale] holds the series' values, in no
	// particular order; has says which series were measured.
	sorted [3][2][]float64
	has    [3][2]bool
	// sel[metric index][scale] is what earlier percentiles learned of the
	// series' order (shared by the copies of m, as the values are).
	sel   *[3][2]selection
	drain drainStats
}

// Measure collects the series of res's finished requests, each request
// compared with itself alone on the reference machine for the slowdowns.
// Only the series asked for are built; with none, every series is.
func Measure(res *evaluator.Result, ref Reference, series ...Series) Measurements {
	if len(series) == 0 {
		series = AllSeries()
	}
	var m Measurements
	for _, sr := range series {
		if sr.Metric.valid() && (sr.Scale == Slowdown || sr.Scale == Seconds) {
			m.has[sr.Metric.index()][sr.Scale] = true
		}
	}
	n := res.RequestCount()
	m.sel = new([3][2]selection)
	for k := range m.sorted {
		for a := range m.sorted[k] {
			if m.has[k][a] {
				m.sorted[k][a] = make([]float64, 0, n)
			}
		}
	}
	add := func(k int, measured, reference float64) {
		if m.has[k][Slowdown] {
			m.sorted[k][Slowdown] = append(m.sorted[k][Slowdown], measured/reference)
		}
		if m.has[k][Seconds] {
			m.sorted[k][Seconds] = append(m.sorted[k][Seconds], measured)
		}
	}
	for i := 0; i < n; i++ {
		r := res.Latency(i)
		if r.E2ES == 0 && r.TTFTS == 0 {
			continue // not finished (an aborted run)
		}
		rt, rb, re := ref.Latencies(int(r.PromptTokens), int(r.OutputTokens))
		add(TTFT.index(), r.TTFTS, rt)
		if ref.Compat {
			add(TBT.index(), r.TBTReferenceS, rb)
		} else if r.OutputTokens > 1 {
			add(TBT.index(), r.TBTS, rb)
		}
		add(E2E.index(), r.E2ES, re)
	}
	m.drain = measureDrain(res)
	return m
}

// Percentile returns the p-th percentile of the metric on the scale: 0
// when no request has the metric (e.g. no TBT with one-token outputs),
// NaN when the series was not measured.
func (m Measurements) Percentile(metric Metric, scale Scale, p float64) float64 {
	if !metric.valid() || (scale != Slowdown && scale != Seconds) || !m.has[metric.index()][scale] {
		return math.NaN()
	}
	// (Measure made sel with the series.)
	v := m.sel[metric.index()][scale].percentile(m.sorted[metric.index()][scale], p)
	if math.IsNaN(v) {
		return 0
	}
	return v
}

// Drained decides whether the run res was sustainable: not aborted, and
// the median scheduling delay of the last tenth of the requests (by
// arrival) no more than riseS above that of the first half. When not, the
// note says why.
func Drained(res *evaluator.Result, riseS float64) (ok bool, note string) {
	return measureDrain(res).judge(riseS)
}

// drainStats is what the drain check reads from a run.
type drainStats struct {
	aborted     bool
	abortReason string
	// enough reports whether the run had enough requests (20) to judge
	// the rise; first and last are the median scheduling delays of the
	// first half and the last tenth, in seconds.
	enough      bool
	first, last float64
}

func measureDrain(res *evaluator.Result) drainStats {
	if res.Aborted {
		return drainStats{aborted: true, abortReason: res.AbortReason}
	}
	if res.Stopped {
		// Stopped once a latency limit's failure was certain: it fails,
		// and the rest of its requests were never finished.
		return drainStats{aborted: true, abortReason: res.StopReason}
	}
	n := res.RequestCount()
	if n < 20 {
		return drainStats{}
	}
	buf := make([]float64, 0, n/2+1)
	med := func(from, to int) float64 {
		v := buf[:0]
		for i := from; i < to; i++ {
			v = append(v, res.Latency(i).SchedDelayS)
		}
		return percentileOf(v, 50)
	}
	return drainStats{enough: true, first: med(0, n/2), last: med(n-n/10, n)}
}

func (d drainStats) judge(riseS float64) (bool, string) {
	if d.aborted {
		return false, d.abortReason
	}
	if d.enough && d.last-d.first > riseS {
		return false, fmt.Sprintf("queues grow: the median scheduling delay rose from %.2f s (first half of the requests) to %.2f s (last tenth)", d.first, d.last)
	}
	return true, ""
}
