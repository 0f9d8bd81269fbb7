package slo

import (
	"fmt"
	"math"
	"sort"
	"strings"

	"splitplan/evaluator"
	"splitplan/evaluator/perf"
)

// Metrics an SLO can bound.
const (
	TTFT = "ttft"
	TBT  = "tbt"
	E2E  = "e2e"
)

// Target bounds one percentile of one metric, either as a slowdown against
// the reference (Factor) or as an absolute latency in seconds (AbsoluteS).
type Target struct {
	// Metric is TTFT, TBT or E2E.
	Metric string `toml:"metric"`
	// Percentile is the percentile over requests, e.g. 99.
	Percentile float64 `toml:"percentile"`
	// Factor is the largest allowed slowdown (measured / reference).
	Factor float64 `toml:"factor"`
	// AbsoluteS, when positive, is the largest allowed latency in seconds
	// and replaces Factor.
	AbsoluteS float64 `toml:"absolute_s"`
}

// Name is the target's short name, e.g. "P99 TBT".
func (t Target) Name() string {
	return fmt.Sprintf("P%g %s", t.Percentile, strings.ToUpper(t.Metric))
}

// Key is the target's column-name form, e.g. "tbt_p99".
func (t Target) Key() string {
	return fmt.Sprintf("%s_p%g", t.Metric, t.Percentile)
}

// Spec is a complete set of SLOs: the targets that must all hold, and what
// makes a run sustainable.
type Spec struct {
	// Targets must all hold.
	Targets []Target `toml:"target"`
	// DrainRiseS is how far the median scheduling delay of the last tenth
	// of the requests (by arrival) may rise above that of the first half
	// before the run counts as not draining (queues growing without
	// bound). Default 2 s.
	DrainRiseS float64 `toml:"drain_rise_s"`
}

// Default returns the nine SLOs of the Splitwise paper: P50/P90/P99 of
// TTFT at 2×/3×/6× and of TBT and E2E at 1.25×/1.5×/5× the reference.
func Default() Spec {
	var t []Target
	for _, m := range []struct {
		metric  string
		factors [3]float64
	}{{TTFT, [3]float64{2, 3, 6}}, {TBT, [3]float64{1.25, 1.5, 5}}, {E2E, [3]float64{1.25, 1.5, 5}}} {
		for i, p := range []float64{50, 90, 99} {
			t = append(t, Target{Metric: m.metric, Percentile: p, Factor: m.factors[i]})
		}
	}
	return Spec{Targets: t, DrainRiseS: 2}
}

// Validate checks every target.
func (s Spec) Validate() error {
	if len(s.Targets) == 0 {
		return fmt.Errorf("slo: no targets")
	}
	seen := map[string]bool{}
	for i, t := range s.Targets {
		switch t.Metric {
		case TTFT, TBT, E2E:
		default:
			return fmt.Errorf("slo: target %d: metric must be ttft, tbt or e2e, got %q", i+1, t.Metric)
		}
		if !(t.Percentile > 0 && t.Percentile <= 100) {
			return fmt.Errorf("slo: target %d (%s): percentile must be in (0, 100], got %v", i+1, t.Metric, t.Percentile)
		}
		if seen[t.Key()] {
			return fmt.Errorf("slo: %s is given twice", t.Name())
		}
		seen[t.Key()] = true
		if t.AbsoluteS < 0 || math.IsNaN(t.AbsoluteS) || math.IsInf(t.AbsoluteS, 0) {
			return fmt.Errorf("slo: %s: absolute limit must be a positive number of seconds, got %v", t.Name(), t.AbsoluteS)
		}
		if t.AbsoluteS == 0 && (!(t.Factor > 0) || math.IsInf(t.Factor, 0)) {
			return fmt.Errorf("slo: %s: slowdown factor must be a positive number, got %v", t.Name(), t.Factor)
		}
	}
	if s.DrainRiseS < 0 || math.IsNaN(s.DrainRiseS) {
		return fmt.Errorf("slo: drain rise must be zero or positive seconds, got %v", s.DrainRiseS)
	}
	return nil
}

// Reference computes the latencies of a request alone on an uncontended
// reference machine (by default a DGX-A100) from its performance model.
type Reference struct {
	// Perf is the reference machine type's performance model.
	Perf perf.IterationModel
	// Compat reproduces the reference simulator's SLO check: its TBT
	// figure, (E2E − TTFT) / output, is compared against the token curve
	// evaluated at x = the prompt size.
	Compat bool
}

// Latencies returns the reference TTFT (the prompt iteration), TBT (one
// decode iteration at batch 1) and E2E (TTFT + (output − 1) × TBT) of a
// request, in seconds.
func (r Reference) Latencies(prompt, output int) (ttft, tbt, e2e float64) {
	ttft, _ = r.Perf.PromptTime(prompt)
	if r.Compat {
		tbt, _ = r.Perf.DecodeTime(prompt, 0)
	} else {
		tbt, _ = r.Perf.DecodeTime(1, int64(prompt)+1)
	}
	return ttft, tbt, ttft + float64(output-1)*tbt
}

// Figure is one target's outcome.
type Figure struct {
	Target
	// Measured is the percentile of the slowdowns (or of the latencies in
	// seconds, for an absolute target).
	Measured float64
	// Limit is the target's factor or absolute limit.
	Limit float64
	// Slack is (Limit − Measured) / Limit: negative when violated.
	Slack float64
}

// OK reports whether the figure meets its limit.
func (f Figure) OK() bool { return f.Measured <= f.Limit }

// Verdict is the outcome of checking a simulation against a Spec.
type Verdict struct {
	// Figures holds one entry per target, in the Spec's order.
	Figures []Figure
	// Drained reports whether the run was sustainable; DrainNote says why not.
	Drained   bool
	DrainNote string
	// Pass reports whether the run drained and every figure met its limit.
	Pass bool
	// Binding is the index in Figures of the least slack: the SLO that
	// binds (or fails worst).
	Binding int
}

// BindingFigure is the figure with the least slack.
func (v Verdict) BindingFigure() Figure { return v.Figures[v.Binding] }

// Check evaluates the simulation res against the SLOs, each request
// compared with itself alone on the reference machine.
func (s Spec) Check(res *evaluator.Result, ref Reference) Verdict {
	// series[metric][absolute] holds, sorted, the values the targets
	// need: slowdowns, or latencies in seconds for absolute targets. Only
	// the series some target reads are built (sorting is the cost here).
	metricIndex := map[string]int{TTFT: 0, TBT: 1, E2E: 2}
	var need [3][2]bool
	for _, t := range s.Targets {
		need[metricIndex[t.Metric]][boolIndex(t.AbsoluteS > 0)] = true
	}
	n := len(res.Requests)
	var series [3][2][]float64
	for k := range series {
		for a := range series[k] {
			if need[k][a] {
				series[k][a] = make([]float64, 0, n)
			}
		}
	}
	add := func(k int, measured, reference float64) {
		if need[k][0] {
			series[k][0] = append(series[k][0], measured/reference)
		}
		if need[k][1] {
			series[k][1] = append(series[k][1], measured)
		}
	}
	for i := range res.Requests {
		r := &res.Requests[i]
		if r.E2ES == 0 && r.TTFTS == 0 {
			continue // not finished (an aborted run)
		}
		rt, rb, re := ref.Latencies(r.PromptTokens, r.OutputTokens)
		add(0, r.TTFTS, rt)
		if ref.Compat {
			add(1, r.TBTReferenceS, rb)
		} else if r.OutputTokens > 1 {
			add(1, r.TBTS, rb)
		}
		add(2, r.E2ES, re)
	}
	for k := range series {
		for a := range series[k] {
			sort.Float64s(series[k][a])
		}
	}
	v := Verdict{Figures: make([]Figure, len(s.Targets)), Drained: true}
	v.Pass = true
	for i, t := range s.Targets {
		f := Figure{Target: t, Limit: t.Factor}
		vals := series[metricIndex[t.Metric]][0]
		if t.AbsoluteS > 0 {
			vals, f.Limit = series[metricIndex[t.Metric]][1], t.AbsoluteS
		}
		f.Measured = Percentile(vals, t.Percentile)
		if math.IsNaN(f.Measured) {
			f.Measured = 0 // no request has this metric (e.g. no TBT with one-token outputs)
		}
		f.Slack = (f.Limit - f.Measured) / f.Limit
		if !f.OK() {
			v.Pass = false
		}
		if f.Slack < v.Figures[v.Binding].Slack || i == 0 {
			v.Binding = i
		}
		v.Figures[i] = f
	}
	v.Drained, v.DrainNote = s.drained(res)
	if !v.Drained {
		v.Pass = false
	}
	return v
}

// drained decides whether the run was sustainable: not aborted, and the
// median scheduling delay of the last tenth of the requests no more than
// DrainRiseS above that of the first half.
func (s Spec) drained(res *evaluator.Result) (bool, string) {
	if res.Aborted {
		return false, res.AbortReason
	}
	n := len(res.Requests)
	if n < 20 {
		return true, ""
	}
	med := func(rs []evaluator.RequestResult) float64 {
		v := make([]float64, len(rs))
		for i := range rs {
			v[i] = rs[i].SchedDelayS
		}
		sort.Float64s(v)
		return Percentile(v, 50)
	}
	first, last := med(res.Requests[:n/2]), med(res.Requests[n-n/10:])
	if last-first > s.DrainRiseS {
		return false, fmt.Sprintf("queues grow: the median scheduling delay rose from %.2f s (first half of the requests) to %.2f s (last tenth)", first, last)
	}
	return true, ""
}

func boolIndex(b bool) int {
	if b {
		return 1
	}
	return 0
}
