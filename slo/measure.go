package slo

import (
	"fmt"
	"math"

	"splitplan/evaluator"
	"splitplan/internal/quantile"
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

// PaperSeries lists the paper's metrics (PaperMetrics) on both scales:
// what Measure builds when asked for no series.
func PaperSeries() []Series {
	var out []Series
	for _, m := range PaperMetrics() {
		out = append(out, Series{m, Seconds}, Series{m, Slowdown})
	}
	return out
}

// AllSeries lists every series a target can read: every metric on both
// scales, but the Queue in seconds only (it has no reference latency).
func AllSeries() []Series {
	var out []Series
	for _, m := range Metrics() {
		out = append(out, Series{m, Seconds})
		if m != Queue {
			out = append(out, Series{m, Slowdown})
		}
	}
	return out
}

// valid reports whether s is one of AllSeries().
func (s Series) valid() bool {
	return s.Metric.valid() && (s.Scale == Seconds || (s.Scale == Slowdown && s.Metric != Queue))
}

// Measurements are the latencies of one simulation per series, and what
// decides whether it drained. Measure builds them; SetSketch adds a
// streamed series (the ITL); Percentile reads them and Spec.Judge checks
// them. Percentile reorders a series' values in place (it selects rather
// than sorts), so one Measurements is not for concurrent use.
type Measurements struct {
	// sorted[metric index][scale] holds the series' values, in no
	// particular order; has says which series were measured.
	sorted [numMetrics][2][]float64
	has    [numMetrics][2]bool
	// sketch[metric index][scale], when set, holds a streamed series
	// (SetSketch) in place of values; div, when not 0, divides its
	// quantiles (the ITL's slowdowns: one reference for every gap).
	sketch [numMetrics][2]*quantile.Sketch
	div    [numMetrics][2]float64
	// miss is the fraction of requests that miss one of a Goodput's
	// limits (Spec.Measure; NaN when unknown).
	miss float64
	// sel[metric index][scale] is what earlier percentiles learned of the
	// series' order (shared by the copies of m, as the values are).
	sel   *[numMetrics][2]selection
	drain drainStats
}

// Measure collects the series of res's finished requests, each request
// compared with itself alone on the reference machine for the slowdowns.
// Only the series asked for are built; with none, the paper's
// (PaperSeries) are. The ITL is the simulator's sketch of every gap
// (evaluator.Result.ITL); as a slowdown, every gap over one reference:
// the reference machine's TBT for a request of the run's median prompt
// and output alone (a gap has no request of its own to compare with
// cheaply: the simulator adds a run's gaps at once). The Queue (the
// scheduling delay) is in seconds only. Has tells which series were
// built.
func Measure(res *evaluator.Result, ref Reference, series ...Series) Measurements {
	if len(series) == 0 {
		series = PaperSeries()
	}
	m := Measurements{miss: math.NaN()}
	itl := false // the ITL as a slowdown
	for _, sr := range series {
		switch {
		case !sr.valid():
		case sr.Metric == ITL && sr.Scale == Seconds:
			m.SetSketch(sr, &res.ITL)
		case sr.Metric == ITL:
			itl = true
		default:
			m.has[sr.Metric.index()][sr.Scale] = true
		}
	}
	if res.Summary != nil {
		// A streamed run kept no request: no per-request series (a
		// target on one is NaN and fails), only the ITL.
		for k := range m.has {
			if k != ITL.index() {
				m.has[k] = [2]bool{}
			}
		}
		itl = false
	}
	n := res.RequestCount()
	m.sel = new([numMetrics][2]selection)
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
	stall := m.has[Stall.index()][Seconds] || m.has[Stall.index()][Slowdown]
	queue := m.has[Queue.index()][Seconds]
	var prompts, outputs []float64 // (for the ITL's reference)
	for i := 0; i < n; i++ {
		r := res.Latency(i)
		if r.E2ES == 0 && r.TTFTS == 0 {
			continue // not finished (an aborted run)
		}
		if itl {
			prompts, outputs = append(prompts, float64(r.PromptTokens)), append(outputs, float64(r.OutputTokens))
		}
		rt, rb, re := ref.Latencies(int(r.PromptTokens), int(r.OutputTokens))
		add(TTFT.index(), r.TTFTS, rt)
		if ref.Compat {
			add(TBT.index(), r.TBTReference(), rb)
		} else if r.OutputTokens > 1 {
			add(TBT.index(), r.TBT(), rb)
		}
		add(E2E.index(), r.E2ES, re)
		if stall && r.OutputTokens > 1 {
			add(Stall.index(), r.MaxGapS, rb)
		}
		if queue {
			m.sorted[Queue.index()][Seconds] = append(m.sorted[Queue.index()][Seconds], r.SchedDelayS)
		}
	}
	if itl && len(prompts) > 0 {
		_, tbt, _ := ref.Latencies(int(percentileOf(prompts, 50)), max(int(percentileOf(outputs, 50)), 2))
		m.SetSketch(Series{ITL, Slowdown}, &res.ITL)
		m.div[ITL.index()][Slowdown] = tbt
	}
	m.drain = measureDrain(res)
	return m
}

// SetSketch gives m a series streamed into a sketch instead of measured
// request by request: the ITL, one value a gap (Measure sets the
// simulator's). Its percentiles are then the sketch's Quantile (within
// quantile.RelativeError of the exact ones; 0 for an empty sketch), and
// replace any values Measure built for the series. m keeps sk (not a
// copy); a nil sk or a series outside AllSeries is ignored.
func (m *Measurements) SetSketch(s Series, sk *quantile.Sketch) {
	if sk == nil || !s.valid() {
		return
	}
	m.sketch[s.Metric.index()][s.Scale] = sk
	m.has[s.Metric.index()][s.Scale] = true
}

// Has reports whether the series was measured (by Measure or SetSketch):
// a target reading a series m lacks is NaN and fails.
func (m Measurements) Has(s Series) bool {
	return s.valid() && m.has[s.Metric.index()][s.Scale]
}

// None reports that the series was measured and no request has the
// metric (no TBT when every request has one output token): its
// percentiles are then 0 for the SLO check (nothing over a limit), and a
// table shows none.
func (m Measurements) None(metric Metric, scale Scale) bool {
	if !m.Has(Series{metric, scale}) {
		return false
	}
	if sk := m.sketch[metric.index()][scale]; sk != nil {
		return sk.Count() == 0
	}
	return len(m.sorted[metric.index()][scale]) == 0
}

// Percentile returns the p-th percentile of the metric on the scale: 0
// when no request has the metric (e.g. no TBT with one-token outputs),
// NaN when the series was not measured.
func (m Measurements) Percentile(metric Metric, scale Scale, p float64) float64 {
	if !m.Has(Series{metric, scale}) {
		return math.NaN()
	}
	var v float64
	if sk := m.sketch[metric.index()][scale]; sk != nil {
		v = sk.Quantile(min(max(p, 0), 100) / 100)
		if d := m.div[metric.index()][scale]; d != 0 {
			v /= d
		}
	} else {
		// (Measure made sel with the series.)
		v = m.sel[metric.index()][scale].percentile(m.sorted[metric.index()][scale], p)
	}
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
	if sm := res.Summary; sm != nil && !res.Aborted && !res.Stopped {
		if sm.Finished < 20 {
			return drainStats{}
		}
		return drainStats{enough: true, first: sm.FirstHalf.Quantile(0.5), last: sm.LastTenth.Quantile(0.5)}
	}
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
