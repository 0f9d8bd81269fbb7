package report

import (
	"math"
	"splitplan/resolve"
	"splitplan/traces"
	"strings"
	"testing"

	"splitplan/costpower"
	"splitplan/evaluator"
)

// waitRun is a run of n requests arriving one a second whose prompt wait
// (and decode wait) is prompt(t) (decode(t)) for a request arriving at t.
func waitRun(n int, prompt, decode func(t float64) float64) *evaluator.Result {
	res := &evaluator.Result{}
	for i := range n {
		t := float64(i)
		q := prompt(t)
		res.Requests = append(res.Requests, evaluator.RequestResult{ID: i, ArrivalS: t, QueueS: q, SchedDelayS: q + decode(t)})
	}
	return res
}

// arrivals is the workload of a waitRun: its requests' arrivals.
func arrivals(res *evaluator.Result) []traces.Request {
	reqs := make([]traces.Request, len(res.Requests))
	for i, r := range res.Requests {
		reqs[i] = traces.Request{ID: r.ID, Arrival: r.ArrivalS, PromptTokens: 1, OutputTokens: 1}
	}
	return reqs
}

func TestSaturationWarning(t *testing.T) {
	t.Parallel()
	split := resolve.Cluster{Cluster: costpower.Cluster{Design: costpower.Design{Name: "Splitwise-HH", Kind: costpower.KindSplitwise}, Prompt: 6, Token: 3}}
	base := resolve.Cluster{Cluster: costpower.Cluster{Design: costpower.Design{Name: "Baseline-H100", Kind: costpower.KindBaseline}, Prompt: 20}}
	steady := func(t float64) float64 { return 0.2 + 0.1*float64(int(t)%7) } // fluctuates about a level
	growing := func(t float64) float64 { return 0.3 * t }                    // a backlog growing with time
	for _, tc := range []struct {
		name   string
		cl     resolve.Cluster
		res    *evaluator.Result
		want   []string // substrings, none: no warning
		absent []string
	}{
		{"steady", split, waitRun(200, steady, steady), nil, nil},
		{"prompt grows", split, waitRun(200, growing, steady), []string{"the prompt pool (6 machines) cannot sustain", "--duration"}, []string{"token pool"}},
		{"token grows", split, waitRun(200, steady, growing), []string{"the token pool (3 machines) cannot sustain"}, []string{"prompt pool"}},
		{"both grow", split, waitRun(200, growing, growing), []string{"the prompt pool", "\nwarning   the token pool"}, nil},
		{"baseline", base, waitRun(200, growing, steady), []string{"the baseline pool (20 machines) cannot sustain"}, nil},
		// Waits doubling but by under a second: noise, not a backlog.
		{"small growth", split, waitRun(200, func(t float64) float64 { return 0.001 * t }, steady), nil, nil},
		// Too few requests per quarter to tell.
		{"short", split, waitRun(60, growing, growing), nil, nil},
	} {
		got := SaturationWarning(tc.cl, arrivals(tc.res), tc.res, false)
		if len(tc.want) == 0 && got != "" {
			t.Errorf("%s: warned %q", tc.name, got)
		}
		for _, w := range tc.want {
			if !strings.Contains(got, w) {
				t.Errorf("%s: %q lacks %q", tc.name, got, w)
			}
		}
		for _, a := range tc.absent {
			if strings.Contains(got, a) {
				t.Errorf("%s: %q has %q", tc.name, got, a)
			}
		}
	}
	// The medians (empirical: the lower middle of an even count) are over
	// the first and last quarters of the arrivals' span, 0-49 s and 150-199 s.
	run := waitRun(200, growing, steady)
	tr := WaitTrends(split, arrivals(run), run)
	if len(tr) != 2 || tr[0].Pool != "prompt" || math.Abs(tr[0].FirstS-0.3*24) > 1e-9 || math.Abs(tr[0].LastS-0.3*174) > 1e-9 {
		t.Errorf("trends %+v; want the prompt wait's medians 7.2 and 52.2 s", tr)
	}
}

// TestMachinesText: one machine is singular, and a plan's counts read
// as a baseline's machines or a Splitwise design's pools.
func TestMachinesText(t *testing.T) {
	for n, want := range map[int]string{0: "0 machines", 1: "1 machine", 2: "2 machines", 125: "125 machines"} {
		if got := MachinesText(n); got != want {
			t.Errorf("MachinesText(%d) = %q, want %q", n, got, want)
		}
	}
	for _, c := range []struct {
		baseline bool
		p, tk    int
		want     string
	}{{true, 1, 0, "1 machine"}, {true, 58, 0, "58 machines"}, {false, 27, 5, "27P/5T"}} {
		if got := PlanText(c.baseline, c.p, c.tk); got != c.want {
			t.Errorf("PlanText(%v, %d, %d) = %q, want %q", c.baseline, c.p, c.tk, got, c.want)
		}
	}
}
