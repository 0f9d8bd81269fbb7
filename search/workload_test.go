package search

import (
	"errors"
	"fmt"
	"testing"

	"splitplan/evaluator"
	"splitplan/traces"
)

// TestWorkloadSource checks that every request drawn from a trace's sizes
// names the trace request it took them from, at any rate.
func TestWorkloadSource(t *testing.T) {
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
