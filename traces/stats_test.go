package traces

import "testing"

func TestSummarize(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		reqs []Request
		want Stats
	}{
		{"none", nil, Stats{}},
		{"one", []Request{{0, 5, 100, 7}}, Stats{Requests: 1,
			Prompt: Summary{Mean: 100, P50: 100, P90: 100, P99: 100, Max: 100},
			Output: Summary{Mean: 7, P50: 7, P90: 7, P99: 7, Max: 7}}},
		{"same time", []Request{{0, 2, 1, 1}, {1, 2, 1, 1}}, Stats{Requests: 2,
			Prompt: Summary{Mean: 1, P50: 1, P90: 1, P99: 1, Max: 1},
			Output: Summary{Mean: 1, P50: 1, P90: 1, P99: 1, Max: 1}}},
		{"interpolated", []Request{{0, 1, 40, 4}, {1, 2, 10, 1}, {2, 3, 30, 3}, {3, 5, 20, 2}}, Stats{
			Requests: 4, DurationS: 4, RateRPS: 1,
			// sorted 10 20 30 40: h = 3p, P50 at h = 1.5, P90 at 2.7, P99 at 2.97
			Prompt: Summary{Mean: 25, P50: 25, P90: 37, P99: 39.7, Max: 40},
			Output: Summary{Mean: 2.5, P50: 2.5, P90: 3.7, P99: 3.97, Max: 4}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Summarize(tt.reqs)
			if !statsNear(got, tt.want) {
				t.Errorf("Summarize = %+v, want %+v", got, tt.want)
			}
		})
	}
}

func statsNear(a, b Stats) bool {
	near := func(x, y float64) bool { return x-y < 1e-9 && y-x < 1e-9 }
	sum := func(x, y Summary) bool {
		return near(x.Mean, y.Mean) && near(x.P50, y.P50) && near(x.P90, y.P90) && near(x.P99, y.P99) && x.Max == y.Max
	}
	return a.Requests == b.Requests && near(a.DurationS, b.DurationS) && near(a.RateRPS, b.RateRPS) &&
		sum(a.Prompt, b.Prompt) && sum(a.Output, b.Output)
}
