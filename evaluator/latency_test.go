package evaluator

import (
	"reflect"
	"strings"
	"testing"

	"splitplan/traces"
)

// TestLatenciesOnly: a simulation keeping only the latencies has the same
// ones as the full results, request by request, and the same run.
func TestLatenciesOnly(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		cl   Cluster
		opt  Options
		rps  float64
	}{
		{"HH 2P/1T", mustCluster(t, "HH", 2, 1, "bloom-176b", false), Options{}, 30},
		{"Baseline-H100 compat, tight memory", mustCluster(t, "Baseline-H100", 2, 0, "bloom-176b", true), Options{Compat: true, KVCapacityTokens: 9000}, 20},
		{"HH 1P/1T aborted", mustCluster(t, "HH", 1, 1, "bloom-176b", false), Options{AbortDelayS: 2}, 40},
	} {
		reqs := randomRequests(300, tc.rps, 3000, 200, 3)
		full := mustEval(t, tc.cl, reqs, tc.opt)
		opt := tc.opt
		opt.LatenciesOnly = true
		lean := mustEval(t, tc.cl, reqs, opt)
		if lean.Requests != nil || len(lean.Latencies) != len(reqs) || lean.RequestCount() != full.RequestCount() {
			t.Fatalf("%s: lean result holds %d requests and %d latencies", tc.name, len(lean.Requests), len(lean.Latencies))
		}
		if lean.EndS != full.EndS || lean.Completed != full.Completed || lean.Events != full.Events || lean.Aborted != full.Aborted {
			t.Errorf("%s: lean run differs: end %v/%v, completed %d/%d, events %d/%d", tc.name,
				lean.EndS, full.EndS, lean.Completed, full.Completed, lean.Events, full.Events)
		}
		for i := range reqs {
			if lean.Latency(i) != full.Latency(i) {
				t.Fatalf("%s: request %d: lean %+v, full %+v", tc.name, i, lean.Latency(i), full.Latency(i))
			}
		}
		if tc.opt.AbortDelayS > 0 && !full.Aborted {
			t.Errorf("%s: expected an aborted run", tc.name)
		}
		// Given room left dirty by another run (Options.Latencies), longer
		// than the requests: the same result, in that room.
		room := make([]RequestLatency, len(reqs)+7)
		for i := range room {
			room[i] = RequestLatency{TTFTS: 1, E2ES: 2, PromptTokens: 3, OutputTokens: 4}
		}
		opt.Latencies = room
		again := mustEval(t, tc.cl, reqs, opt)
		if !reflect.DeepEqual(again, lean) || &again.Latencies[0] != &room[0] {
			t.Errorf("%s: a run given used room differs from a fresh one (or took other room)", tc.name)
		}
		// Without the ITL (Options.NoITL): the same run, its sketch empty.
		opt.Latencies, opt.NoITL = nil, true
		noITL := mustEval(t, tc.cl, reqs, opt)
		if noITL.ITL.Count() != 0 || (!lean.Aborted && !tc.opt.Compat && lean.ITL.Count() == 0) {
			t.Errorf("%s: %d gaps in the ITL without it, %d with it", tc.name, noITL.ITL.Count(), lean.ITL.Count())
		}
		noITL.ITL = lean.ITL
		if !reflect.DeepEqual(noITL, lean) {
			t.Errorf("%s: a run without the ITL differs from one with it but in its sketch", tc.name)
		}
		opt.NoITL = false
		opt.Latencies = room[: len(reqs)-1 : len(reqs)-1] // too small: not taken
		if again := mustEval(t, tc.cl, reqs, opt); !reflect.DeepEqual(again, lean) || &again.Latencies[0] == &room[0] {
			t.Errorf("%s: a run given too little room differs from a fresh one (or took it)", tc.name)
		}
	}
}

// TestWaitAbortsAlike: a limit on waits aborts the simulation at the first
// task over it, with the same request and wait reported whether decodes
// join lazy runs or every batch is formed — a decode that waits for a
// running batch (a limit shorter than a decode iteration), and a prompt
// that starts late after every request has arrived (a burst on one prompt
// machine: no later arrival looks at the queue).
func TestWaitAbortsAlike(t *testing.T) {
	t.Parallel()
	burst := make([]traces.Request, 20)
	for i := range burst {
		burst[i] = traces.Request{ID: i, Arrival: 0.0001 * float64(i), PromptTokens: 4000, OutputTokens: 20}
	}
	for _, tc := range []struct {
		name string
		cl   Cluster
		reqs []traces.Request
		opt  Options
		want string
	}{
		{"a decode waits for a running batch", mustCluster(t, "HH", 20, 3, "bloom-176b", false), randomRequests(400, 10, 1500, 200, 11), Options{AbortDelayS: 0.004}, "for its decode"},
		{"a prompt starts late", mustCluster(t, "HH", 1, 1, "bloom-176b", false), burst, Options{AbortDelayS: 0.5}, "for its prompt"},
	} {
		s := againstEveryBatch(t, tc.name+": lazy runs", tc.cl, tc.reqs, tc.opt)
		if res := s.out; !res.Aborted || !strings.Contains(res.AbortReason, tc.want) {
			t.Errorf("%s: aborted %v (%q), want an abort %s", tc.name, res.Aborted, res.AbortReason, tc.want)
		}
	}
}
