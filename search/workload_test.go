package search

import (
	"errors"
	"fmt"
	"math"
	"testing"

	"splitplan/evaluator"
	"splitplan/traces"
)

// TestWorkloadSource checks that every request drawn from a trace's sizes
// names the trace request it took them from, at any rate.
func TestWorkloadSource(t *testing.T) {
	t.Parallel()
	var reqs []traces.Request
	for i := 0; i < 50; i++ {
		// Distinct sizes, so the pair names its request.
		reqs = append(reqs, traces.Request{ID: i, Arrival: float64(i), PromptTokens: 100 + i, OutputTokens: 1 + 2*i})
	}
	w := &Workload{Sizes: traces.FromRequests("t.csv", reqs), DurationS: 60, Seed: 4}
	for _, rate := range []float64{0.5, 3, 40} {
		got, err := w.At(rate)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range got {
			src := w.Source(r.ID)
			if src < 0 || src >= len(reqs) || reqs[src].PromptTokens != r.PromptTokens || reqs[src].OutputTokens != r.OutputTokens {
				t.Fatalf("rate %g: request %+v has source %d", rate, r, src)
			}
		}
	}
	err := w.traceSource(fmt.Errorf("x: %w", &evaluator.UnservableError{RequestID: 3}))
	var de *DrawnRequestError
	if !errors.As(err, &de) || de.Source != w.Source(3) {
		t.Errorf("traceSource: %v", err)
	}
	ind := &Workload{Sizes: traces.FromRequests("t.csv", reqs), DurationS: 60, Independent: true}
	if _, err := ind.At(2); err != nil {
		t.Fatal(err)
	}
	if s := ind.Source(0); s != -1 {
		t.Errorf("independent sizes have source %d, want -1", s)
	}
}

// TestWorkloadProfile: with a rate profile, At gives at every mean rate
// the same requests in the same order (a higher rate a longer prefix,
// every arrival earlier), the expected count over the duration, and the
// profile's shape: more arrivals in its high half than in its low half.
func TestWorkloadProfile(t *testing.T) {
	t.Parallel()
	sizes, err := traces.Builtin("coding")
	if err != nil {
		t.Fatal(err)
	}
	prof, err := traces.ParseDiurnal("diurnal:peak=90,trough=10,period=1h,phase=30m")
	if err != nil {
		t.Fatal(err)
	}
	w := &Workload{Sizes: sizes, DurationS: 3600, Seed: 4, Arrivals: traces.Arrivals{Profile: prof}}
	lo, err := w.At(20)
	if err != nil {
		t.Fatal(err)
	}
	hi, err := w.At(40)
	if err != nil {
		t.Fatal(err)
	}
	if len(hi) <= len(lo) {
		t.Fatalf("%d requests at 40 req/s, %d at 20", len(hi), len(lo))
	}
	for i, r := range lo {
		h := hi[i]
		if h.PromptTokens != r.PromptTokens || h.OutputTokens != r.OutputTokens || h.Arrival > r.Arrival {
			t.Fatalf("request %d: %+v at 40 req/s, %+v at 20", i, h, r)
		}
	}
	if n := float64(len(lo)); math.Abs(n-20*3600) > 5*math.Sqrt(20*3600) {
		t.Errorf("%v requests in an hour at a mean of 20 req/s", n)
	}
	middle := 0
	for _, r := range lo {
		if r.Arrival >= 900 && r.Arrival < 2700 {
			middle++
		}
	}
	// The middle half holds the peak: ∫ of 50 + 40·cos over it is
	// 50·1800 + 40·3600/π of the hour's 50·3600, about 0.755.
	want := (50*1800 + 40*3600/math.Pi) / (50 * 3600)
	if f := float64(middle) / float64(len(lo)); math.Abs(f-want) > 0.02 {
		t.Errorf("%.3f of the requests in the half around the peak", f)
	}
}
