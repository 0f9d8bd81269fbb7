package slo

import (
	"math"
	"testing"

	"splitplan/evaluator"
)

func TestPercentile(t *testing.T) {
	t.Parallel()
	v := []float64{1, 2, 3, 4, 10}
	for _, tc := range []struct{ p, want float64 }{
		{0, 1}, {50, 3}, {90, 7.6}, {99, 9.76}, {100, 10}, {25, 2}, {12.5, 1.5},
	} {
		if got := Percentile(v, tc.p); math.Abs(got-tc.want) > 1e-12 {
			t.Errorf("P%v = %v, want %v", tc.p, got, tc.want)
		}
	}
	if got := Percentile([]float64{7}, 99); got != 7 {
		t.Errorf("one value: %v", got)
	}
	if !math.IsNaN(Percentile(nil, 50)) {
		t.Error("no values should give NaN")
	}
}

func TestSummarize(t *testing.T) {
	t.Parallel()
	res := &evaluator.Result{Requests: []evaluator.RequestResult{
		{TTFTS: 1, E2ES: 3, TBTS: 0.5, TBTReferenceS: 0.4, OutputTokens: 5},
		{TTFTS: 2, E2ES: 2, TBTS: 0, TBTReferenceS: 0, OutputTokens: 1},
		{TTFTS: 3, E2ES: 9, TBTS: 1.5, TBTReferenceS: 1.2, OutputTokens: 5},
	}}
	l := Summarize(res)
	if l.TTFT.P50 != 2 || l.E2E.Max != 9 || l.E2E.Mean != 14.0/3 {
		t.Errorf("TTFT/E2E: %+v %+v", l.TTFT, l.E2E)
	}
	// The single-token request has no time between tokens.
	if l.TBT.P50 != 1 || l.TBT.Max != 1.5 {
		t.Errorf("TBT: %+v", l.TBT)
	}
}
