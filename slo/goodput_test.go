package slo

import (
	"fmt"
	"math"
	"reflect"
	"strings"
	"testing"

	"splitplan/evaluator"
)

// TestGoodputByHand: four requests against TTFT ≤ 0.25 s and TPOT ≤
// 0.1 s:
//
//	request 1: TTFT 0.20, TPOT 0.05         → meets both
//	request 2: TTFT 0.30, TPOT 0.05         → late first token
//	request 3: TTFT 0.25, TPOT 0.10         → meets both (limits inclusive)
//	request 4: TTFT 0.10, one output token  → no gap: meets the TPOT limit
//
// Three of four meet both: 0.75. TTFT is met by 3/4, TPOT by 4/4: TTFT binds.
func TestGoodputByHand(t *testing.T) {
	t.Parallel()
	reqs := []RequestValues{
		{TTFTS: 0.20, TPOTS: 0.05, StallS: 0.2, E2ES: 1, OutputTokens: 10},
		{TTFTS: 0.30, TPOTS: 0.05, StallS: 0.06, E2ES: 1, OutputTokens: 10},
		{TTFTS: 0.25, TPOTS: 0.10, StallS: 0.4, E2ES: 2, OutputTokens: 10},
		{TTFTS: 0.10, E2ES: 0.1, StallS: math.NaN(), OutputTokens: 1},
	}
	g := Goodput{Attainment: 0.75, Limits: []Limit{{TTFT, 0.25}, {TBT, 0.1}}}
	v, err := g.Judge(reqs[:3:3])
	if err != nil {
		t.Fatal(err) // (request 4's NaN stall is not read without a stall limit: tested below)
	}
	if v.Requests != 3 || v.Met != 2 || math.Abs(v.Attained-2.0/3) > 1e-15 || v.Pass {
		t.Errorf("three requests: %+v, want 2 of 3 met, failing 0.75", v)
	}
	reqs[3].StallS = 0 // (a one-token request: the value is not read)
	v, err = g.Judge(reqs)
	if err != nil {
		t.Fatal(err)
	}
	if v.Requests != 4 || v.Met != 3 || v.Attained != 0.75 || !v.Pass || v.Binding != 0 || v.PerLimit[0] != 0.75 || v.PerLimit[1] != 1 {
		t.Errorf("four requests: %+v, want 3 of 4 met, passing 0.75, TTFT binding", v)
	}
	if l := v.BindingLimit(g); l.Metric != TTFT || l.String() != "ttft ≤ 0.25 s" {
		t.Errorf("binding limit %v", l)
	}
	// At 0.9 the same run fails.
	g.Attainment = 0.9
	if v, _ := g.Judge(reqs); v.Pass {
		t.Error("0.75 attained passes 0.9")
	}
	// A stall limit of 0.3 s: request 3 (0.4 s) fails it, so 2 of 4 meet
	// all three; TTFT and Stall each 3/4 — the first of the tie, TTFT, binds.
	g = Goodput{Attainment: 0.5, Limits: []Limit{{TTFT, 0.25}, {TBT, 0.1}, {Stall, 0.3}}}
	v, err = g.Judge(reqs)
	if err != nil || v.Met != 2 || !v.Pass || v.Binding != 0 || v.PerLimit[2] != 0.75 {
		t.Errorf("with a stall limit: %+v, %v", v, err)
	}
	// An ITL limit is the same check per request: every gap within it.
	g.Limits[2].Metric = ITL
	if w, err := g.Judge(reqs); err != nil || w.Met != v.Met || w.PerLimit[2] != v.PerLimit[2] {
		t.Errorf("ITL limit %+v, stall limit %+v (%v)", w, v, err)
	}
	// Scaled by 2: every limit doubles; all four meet them.
	g2, err := g.Scaled(2)
	if err != nil || g2.Limits[0].S != 0.5 || g2.Limits[2].S != 0.6 || g.Limits[0].S != 0.25 {
		t.Fatalf("scaled %+v, %v (the original must not change)", g2, err)
	}
	if v, _ := g2.Judge(reqs); v.Met != 4 || v.Attained != 1 {
		t.Errorf("scaled by 2: %+v", v)
	}
	// E2E and queue limits.
	reqs[1].QueueS = 0.5
	g = Goodput{Attainment: 1, Limits: []Limit{{E2E, 1.5}, {Queue, 0.2}}}
	if v, _ := g.Judge(reqs); v.Met != 2 || v.Pass || v.Binding != 0 || v.PerLimit[0] != 0.75 || v.PerLimit[1] != 0.75 {
		t.Errorf("e2e and queue: %+v", v)
	}
	// No requests: nothing attained, no pass.
	if v, err := g.Judge(nil); err != nil || v.Pass || v.Attained != 0 || v.Requests != 0 {
		t.Errorf("no requests: %+v, %v", v, err)
	}
}

func TestGoodputValidation(t *testing.T) {
	t.Parallel()
	ok := []Limit{{TTFT, 2.5}, {TBT, 0.15}}
	for _, c := range []struct {
		g    Goodput
		want string
	}{
		{Goodput{Attainment: 0, Limits: ok}, "attainment must be a fraction of requests in (0, 1], e.g. 0.9, got 0"},
		{Goodput{Attainment: 1.2, Limits: ok}, "got 1.2"},
		{Goodput{Attainment: -0.5, Limits: ok}, "got -0.5"},
		{Goodput{Attainment: math.NaN(), Limits: ok}, "got NaN"},
		{Goodput{Attainment: 0.9}, "at least one per-request limit"},
		{Goodput{Attainment: 0.9, Limits: []Limit{{TTFT, -1}}}, "per-request ttft limit must be a positive number of seconds, got -1"},
		{Goodput{Attainment: 0.9, Limits: []Limit{{Stall, 0}}}, "stall limit must be a positive number of seconds, got 0"},
		{Goodput{Attainment: 0.9, Limits: []Limit{{E2E, math.Inf(1)}}}, "got +Inf"},
		{Goodput{Attainment: 0.9, Limits: []Limit{{TBT, 0.1}, {TBT, 0.2}}}, "tbt limit is given twice"},
		{Goodput{Attainment: 0.9, Limits: []Limit{{Metric(0), 1}}}, "invalid metric"},
	} {
		err := c.g.Validate()
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: %v, want %q", c.g, err, c.want)
		}
		if _, jerr := c.g.Judge([]RequestValues{{TTFTS: 1, OutputTokens: 1}}); jerr == nil || jerr.Error() != err.Error() {
			t.Errorf("Judge does not validate: %v", jerr)
		}
	}
	if err := (Goodput{Attainment: 1, Limits: ok}).Validate(); err != nil {
		t.Errorf("attainment 1: %v", err)
	}
	if _, err := (Goodput{Attainment: 0.9, Limits: ok}).Scaled(0); err == nil || !strings.Contains(err.Error(), "SLO scale") {
		t.Errorf("scale 0: %v", err)
	}
	// Bad values: a NaN stall (latencies only) under a stall limit, a
	// negative TTFT.
	g := Goodput{Attainment: 0.9, Limits: []Limit{{Stall, 1}}}
	if _, err := g.Judge([]RequestValues{{StallS: math.NaN(), OutputTokens: 5}}); err == nil || !strings.Contains(err.Error(), "request 1 has no longest gap") {
		t.Errorf("NaN stall: %v", err)
	}
	g = Goodput{Attainment: 0.9, Limits: []Limit{{TTFT, 1}}}
	if _, err := g.Judge([]RequestValues{{TTFTS: 0.1}, {TTFTS: -0.1}}); err == nil || !strings.Contains(err.Error(), "request 2 has a negative ttft") {
		t.Errorf("negative TTFT: %v", err)
	}
}

// TestRequestValuesOf: a simulation's requests as goodput reads them,
// with and without their gaps.
func TestRequestValuesOf(t *testing.T) {
	t.Parallel()
	res, _ := threeRequests()
	res.Requests = append(res.Requests, evaluator.RequestResult{ID: 3, PromptTokens: 100, OutputTokens: 5}) // unfinished
	v := RequestValuesOf(res)
	e2e, ttft := 0.5, 0.2 // (the TPOT as the simulator computes it: 0.1 rounded)
	if len(v) != 3 || v[0] != (RequestValues{TTFTS: 0.2, TPOTS: (e2e - ttft) / 3, StallS: 0.24, E2ES: 0.5, QueueS: 0.05, OutputTokens: 4}) || v[2].StallS != 0.08 || v[2].QueueS != 0.4 {
		t.Errorf("values %+v", v)
	}
	g := Goodput{Attainment: 0.6, Limits: []Limit{{TTFT, 0.5}, {Stall, 0.1}}}
	// Request 0: stall 0.24 fails; request 1: one token, meets; request 2:
	// TTFT 0.6 fails. One of three.
	if r, err := g.Judge(v); err != nil || r.Met != 1 || r.Pass {
		t.Errorf("verdict %+v, %v", r, err)
	}
	// A result that kept latencies only (the search's) keeps the longest
	// gap too.
	lat := &evaluator.Result{Latencies: []evaluator.RequestLatency{{TTFTS: 0.2, MaxGapS: 0.24, E2ES: 0.5, SchedDelayS: 0.05, OutputTokens: 4}}}
	lv := RequestValuesOf(lat)
	if len(lv) != 1 || lv[0] != v[0] {
		t.Errorf("latencies only: %+v, want %+v", lv, v[0])
	}
	// A StallS that is not a number cannot be judged.
	lv[0].StallS = math.NaN()
	if _, err := g.Judge(lv); err == nil {
		t.Error("a stall limit judged without gaps")
	}
}

// TestSpecGoodput: a spec whose only target is goodput (SetGoodput) judges
// the three-request run by the joint per-request limits: request 0 misses
// the stall limit, request 2 the TTFT one, so a third meets both — a miss
// fraction of 2/3, within 1 − 0.3 but not within 1 − 0.5. The target
// goes with its limits: a spec with one and not the other is invalid.
func TestSpecGoodput(t *testing.T) {
	t.Parallel()
	res, _ := threeRequests()
	ref := Reference{Perf: flat{}}
	for _, c := range []struct {
		attainment float64
		pass       bool
	}{{0.3, true}, {0.5, false}} {
		spec := Spec{DrainRiseS: 2}
		if err := spec.SetGoodput(Goodput{Attainment: c.attainment, Limits: []Limit{{TTFT, 0.5}, {Stall, 0.1}}}); err != nil {
			t.Fatal(err)
		}
		if err := spec.Validate(); err != nil {
			t.Fatal(err)
		}
		v := spec.Check(res, ref)
		f := v.BindingFigure()
		if v.Pass != c.pass || f.Key() != fmt.Sprintf("goodput_p%g", 100*c.attainment) || math.Abs(f.Measured-2.0/3) > 1e-12 {
			t.Errorf("attainment %v: pass %v, figure %+v", c.attainment, v.Pass, f)
		}
	}
	bad := Spec{Targets: []Target{{Metric: GoodputMiss, Percentile: 90, Factor: 0.1}}, DrainRiseS: 2}
	if bad.Validate() == nil {
		t.Error("a goodput target without its limits is valid")
	}
	bad = Default()
	bad.Goodput = &Goodput{Attainment: 0.9, Limits: []Limit{{TTFT, 1}}}
	if bad.Validate() == nil {
		t.Error("goodput limits without their target are valid")
	}
	if _, err := ParseMetric("goodput"); err == nil {
		t.Error("goodput parses as a latency metric")
	}
}

// TestStreamedResultFails: a streamed run (evaluator.Options.Streamed)
// kept no request, so no per-request SLO can pass on it.
func TestStreamedResultFails(t *testing.T) {
	t.Parallel()
	res := &evaluator.Result{Summary: &evaluator.Summary{Finished: 100}, Completed: 100}
	ref := Reference{Perf: flat{}}
	if v := Default().Check(res, ref); v.Pass || !math.IsNaN(v.Figures[0].Measured) {
		t.Errorf("a streamed run passed the paper's SLOs: %+v", v)
	}
}

// TestJudgeResult: judging a result in place is judging its requests'
// values collected first.
func TestJudgeResult(t *testing.T) {
	t.Parallel()
	res, _ := threeRequests()
	res.Requests = append(res.Requests, evaluator.RequestResult{ID: 3, PromptTokens: 100, OutputTokens: 5}) // unfinished
	g := Goodput{Attainment: 0.6, Limits: []Limit{{TTFT, 0.5}, {Stall, 0.1}, {TBT, 0.2}}}
	want, err := g.Judge(RequestValuesOf(res))
	if err != nil {
		t.Fatal(err)
	}
	got, err := g.JudgeResult(res)
	if err != nil || !reflect.DeepEqual(got, want) || got.Requests != 3 {
		t.Errorf("JudgeResult %+v, %v; Judge %+v", got, err, want)
	}
}
