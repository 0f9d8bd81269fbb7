package slo

import (
	"math"
	"reflect"
	"strings"
	"testing"

	"splitplan/evaluator"
	"splitplan/internal/quantile"
)

// TestNewMetricNames: the new metrics read and write their names, "tpot"
// is the TBT, and the paper's metrics and Default are as before.
func TestNewMetricNames(t *testing.T) {
	t.Parallel()
	for s, want := range map[string]Metric{"itl": ITL, "STALL": Stall, " queue": Queue, "tpot": TBT, "TPOT": TBT, "tbt": TBT} {
		if m, err := ParseMetric(s); err != nil || m != want {
			t.Errorf("ParseMetric(%q) = %v, %v; want %v", s, m, err, want)
		}
	}
	if got := (Target{Metric: Stall, Percentile: 99}).Key(); got != "stall_p99" {
		t.Errorf("stall key %q", got)
	}
	if got := (Target{Metric: ITL, Percentile: 90}).Name(); got != "P90 ITL" {
		t.Errorf("ITL name %q", got)
	}
	if !reflect.DeepEqual(PaperMetrics(), []Metric{TTFT, TBT, E2E}) || len(Metrics()) != 6 {
		t.Errorf("metrics %v, paper %v", Metrics(), PaperMetrics())
	}
	d := Default()
	if len(d.Targets) != 9 || d.Targets[0].Key() != "ttft_p50" || d.Targets[8].Key() != "e2e_p99" || d.Targets[8].Factor != 5 {
		t.Errorf("Default changed: %+v", d.Targets)
	}
}

func keys(s Spec) string {
	var k []string
	for _, t := range s.Targets {
		k = append(k, t.Key())
	}
	return strings.Join(k, ",")
}

func TestSets(t *testing.T) {
	t.Parallel()
	if !reflect.DeepEqual(SetNames(), []string{"paper", "tokens", "goodput"}) {
		t.Errorf("set names %v", SetNames())
	}
	paper, err := ParseSet("paper")
	if err != nil || !reflect.DeepEqual(paper, Default()) {
		t.Errorf("paper set %+v, %v; want Default()", paper, err)
	}
	tok, err := ParseSet("Tokens")
	if err != nil || keys(tok) != "ttft_p50,ttft_p90,ttft_p99,itl_p50,itl_p90,itl_p99,stall_p50,stall_p90,stall_p99" {
		t.Fatalf("tokens set %s, %v", keys(tok), err)
	}
	for i, f := range []float64{2, 3, 6, 1.25, 1.5, 5, 2, 3, 6} {
		if tok.Targets[i].Factor != f || tok.Targets[i].AbsoluteS != 0 {
			t.Errorf("%s factor %v, want %v", tok.Targets[i].Key(), tok.Targets[i].Factor, f)
		}
	}
	if err := tok.Validate(); err != nil || tok.DrainRiseS != 2 {
		t.Errorf("tokens set: %v (drain %v)", err, tok.DrainRiseS)
	}
	gp, err := ParseSet("goodput")
	if err != nil || keys(gp) != "ttft_p90,tbt_p90" || gp.Targets[0].Factor != 3 || gp.Targets[1].Factor != 1.5 || gp.Validate() != nil {
		t.Errorf("goodput set %+v, %v", gp, err)
	}
	// An explicit list, tpot read as tbt; a percentile without a default
	// factor and the queue wait for an absolute limit.
	l, err := ParseSet("ttft_p99, tpot_p90,stall_p95,queue_p99")
	if err != nil || keys(l) != "ttft_p99,tbt_p90,stall_p95,queue_p99" || l.Targets[0].Factor != 6 || l.Targets[1].Factor != 1.5 || l.Targets[2].Factor != 0 || l.Targets[3].Factor != 0 {
		t.Fatalf("list %+v, %v", l, err)
	}
	if err := l.Validate(); err == nil || !strings.Contains(err.Error(), "P95 STALL: slowdown factor must be a positive number") {
		t.Errorf("stall_p95 without a limit: %v", err)
	}
	if err := l.SetAbsolute("STALL_P95", 1.5); err != nil {
		t.Fatal(err)
	}
	if err := l.Validate(); err == nil || !strings.Contains(err.Error(), "P99 QUEUE: the scheduling delay has no reference latency") || !strings.Contains(err.Error(), "queue_p99=2") {
		t.Errorf("queue without an absolute limit: %v", err)
	}
	if err := l.SetAbsolute("queue_p99", 4); err != nil || l.Validate() != nil || l.Targets[3].AbsoluteS != 4 || l.Targets[2].AbsoluteS != 1.5 {
		t.Errorf("after SetAbsolute: %+v, %v", l, err)
	}
	// A queue target with a factor is still an error: it has no reference.
	q := Spec{Targets: []Target{{Metric: Queue, Percentile: 50, Factor: 2}}}
	if err := q.Validate(); err == nil || !strings.Contains(err.Error(), "no reference latency") {
		t.Errorf("queue slowdown: %v", err)
	}
	for _, c := range []struct{ in, want string }{
		{"fast", `unknown SLO set "fast": want a set (paper, tokens or goodput) or a list of METRIC_pNN keys`},
		{"ttft_p99,gap_p99", `unknown metric "gap" (want ttft, tbt (or tpot), e2e, itl, stall or queue) (or a set: paper, tokens or goodput)`},
		{"itl_p0", `the percentile must be a number in (0, 100], got "0"`},
		{"itl_p101", `got "101"`},
		{"itl_pxx", `got "xx"`},
		{"itl_p99,", "empty key"},
		{"tbt_p99,tpot_p99", "P99 TBT is given twice"},
		{"ttft,itl_p99", `"ttft" is not an SLO key: want METRIC_pNN`},
	} {
		if _, err := ParseSet(c.in); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("ParseSet(%q): %v, want an error with %q", c.in, err, c.want)
		}
	}
	if _, err := NamedSet("tokenz"); err == nil || !strings.Contains(err.Error(), "paper, tokens or goodput") {
		t.Errorf("NamedSet(tokenz): %v", err)
	}
	d := Default()
	if err := d.SetAbsolute("itl_p99", 0.1); err == nil || !strings.Contains(err.Error(), "no target itl_p99 among the SLOs (ttft_p50, ttft_p90, ttft_p99, tbt_p50") {
		t.Errorf("SetAbsolute on a missing key: %v", err)
	}
	for _, v := range []float64{0, -1, math.NaN(), math.Inf(1)} {
		if err := d.SetAbsolute("tbt_p99", v); err == nil || !strings.Contains(err.Error(), "positive number of seconds") {
			t.Errorf("SetAbsolute(tbt_p99, %v): %v", v, err)
		}
	}
	if err := d.SetAbsolute("tpot_p99", 0.2); err != nil || d.Targets[5].AbsoluteS != 0.2 {
		t.Errorf("SetAbsolute(tpot_p99): %v, %+v", err, d.Targets[5])
	}
	if f, ok := DefaultFactor(Queue, 99); ok || f != 0 {
		t.Errorf("queue default factor %v %v", f, ok)
	}
	if f, ok := DefaultFactor(E2E, 90); !ok || f != 1.5 {
		t.Errorf("e2e P90 default factor %v %v", f, ok)
	}
}

// threeRequests is a hand-made run: three requests of 100 prompt tokens
// (reference TTFT 0.1 s, TBT 0.01 s with the flat model), of 4, 1 and 3
// output tokens, with their token times:
//
//	request 0: arrival 0, sched delay 0.05; tokens at 0.2, 0.23, 0.26, 0.50 → gaps 0.03, 0.03, 0.24; longest 0.24
//	request 1: arrival 1, sched delay 0;    one token at 1.1 → no gap
//	request 2: arrival 2, sched delay 0.4;  tokens at 2.6, 2.62, 2.70 → gaps 0.02, 0.08; longest 0.08
func threeRequests() (*evaluator.Result, [][]float64) {
	gaps := [][]float64{{0.03, 0.03, 0.24}, nil, {0.02, 0.08}}
	res := &evaluator.Result{Requests: []evaluator.RequestResult{
		{ID: 0, ArrivalS: 0, PromptTokens: 100, OutputTokens: 4, SchedDelayS: 0.05, TTFTS: 0.2, E2ES: 0.5, TBTS: 0.3 / 3, MaxGapS: 0.24},
		{ID: 1, ArrivalS: 1, PromptTokens: 100, OutputTokens: 1, SchedDelayS: 0, TTFTS: 0.1, E2ES: 0.1},
		{ID: 2, ArrivalS: 2, PromptTokens: 100, OutputTokens: 3, SchedDelayS: 0.4, TTFTS: 0.6, E2ES: 0.7, TBTS: 0.1 / 2, MaxGapS: 0.08},
	}}
	return res, gaps
}

// TestMeasureNewMetrics: the stall, queue and ITL series of a three-
// request run, by hand.
func TestMeasureNewMetrics(t *testing.T) {
	t.Parallel()
	res, gaps := threeRequests()
	for _, g := range gaps {
		for _, x := range g {
			res.ITL.Add(x) // as the simulator streams them
		}
	}
	ref := Reference{Perf: flat{}}
	m := Measure(res, ref, AllSeries()...)
	near := func(what string, got, want float64) {
		t.Helper()
		if math.Abs(got-want) > 1e-12 {
			t.Errorf("%s = %v, want %v", what, got, want)
		}
	}
	// Stall over the two requests with a gap: {0.08, 0.24}; P50 0.16.
	near("P50 stall", m.Percentile(Stall, Seconds, 50), 0.16)
	near("P100 stall", m.Percentile(Stall, Seconds, 100), 0.24)
	near("P50 stall slowdown", m.Percentile(Stall, Slowdown, 50), 16) // over the reference TBT 0.01 s
	// Queue over all three: {0, 0.05, 0.4}; P50 0.05, P90 0.05 + 0.8 × 0.35 = 0.33.
	near("P50 queue", m.Percentile(Queue, Seconds, 50), 0.05)
	near("P90 queue", m.Percentile(Queue, Seconds, 90), 0.33)
	if m.Has(Series{Queue, Slowdown}) || !math.IsNaN(m.Percentile(Queue, Slowdown, 50)) {
		t.Error("the queue has a slowdown series")
	}
	// Five gaps, token-weighted: {0.02, 0.03, 0.03, 0.08, 0.24}; P50 0.03,
	// P90 0.08 + 0.6 × 0.16 = 0.176, within the sketch's error; as
	// slowdowns, over the reference TBT of the median request (100
	// prompt, 3 output tokens: 0.01 s).
	for _, c := range []struct {
		scale     Scale
		p, want   float64
		whatScale string
	}{{Seconds, 50, 0.03, "s"}, {Seconds, 90, 0.176, "s"}, {Seconds, 100, 0.24, "s"}, {Slowdown, 50, 3, "slowdown"}, {Slowdown, 90, 17.6, "slowdown"}} {
		if got := m.Percentile(ITL, c.scale, c.p); math.Abs(got-c.want) > c.want*quantile.RelativeError {
			t.Errorf("P%g ITL (%s) = %v, want %v", c.p, c.whatScale, got, c.want)
		}
	}
	// A spec on the new metrics judges them; the ITL binds.
	spec, err := ParseSet("itl_p90,stall_p99,queue_p90")
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range map[string]float64{"itl_p90": 0.15, "stall_p99": 0.3, "queue_p90": 0.5} {
		if err := spec.SetAbsolute(k, v); err != nil {
			t.Fatal(err)
		}
	}
	if err := spec.Validate(); err != nil {
		t.Fatal(err)
	}
	v := spec.Judge(m)
	if v.Pass || v.BindingFigure().Key() != "itl_p90" || !v.Figures[1].OK() || !v.Figures[2].OK() {
		t.Errorf("verdict %+v", v)
	}
	// The paper's series by default, as before.
	def := Measure(res, ref)
	if def.Has(Series{Stall, Seconds}) || def.Has(Series{Queue, Seconds}) || !def.Has(Series{TTFT, Slowdown}) || !def.Has(Series{E2E, Seconds}) {
		t.Error("Measure with no series built other than the paper's")
	}
	// A result that kept latencies only (the search's) keeps each
	// request's longest gap: the same stall and queue series.
	lat := &evaluator.Result{}
	for i := range res.Requests {
		lat.Latencies = append(lat.Latencies, evaluator.RequestLatency{TTFTS: res.Requests[i].TTFTS, QueueS: res.Requests[i].QueueS, MaxGapS: res.Requests[i].MaxGapS,
			E2ES: res.Requests[i].E2ES, SchedDelayS: res.Requests[i].SchedDelayS, PromptTokens: 100, OutputTokens: int32(res.Requests[i].OutputTokens)})
	}
	lm := Measure(lat, ref, AllSeries()...)
	if !lm.Has(Series{Stall, Seconds}) || !lm.Has(Series{Queue, Seconds}) || lm.Percentile(Queue, Seconds, 90) != m.Percentile(Queue, Seconds, 90) ||
		lm.Percentile(Stall, Seconds, 99) != m.Percentile(Stall, Seconds, 99) {
		t.Error("latencies-only result: want the same queue and stall series")
	}
	// An empty sketch (lat's ITL: no gaps streamed) reads 0, as a series
	// without values; nil and invalid series are ignored.
	var empty quantile.Sketch
	lm.SetSketch(Series{Queue, Slowdown}, &empty)
	lm.SetSketch(Series{ITL, Seconds}, nil)
	if lm.Percentile(ITL, Seconds, 99) != 0 || lm.Percentile(ITL, Slowdown, 99) != 0 || lm.Has(Series{Queue, Slowdown}) {
		t.Error("empty, invalid or nil sketches")
	}
}
