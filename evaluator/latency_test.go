package evaluator

import (
	"strings"
	"testing"
)

// TestLatenciesOnly: a simulation keeping only the latencies has the same
// ones as the full results, request by request, and the same run.
func TestLatenciesOnly(t *testing.T) {
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
	}
}

// TestDecodeWaitAbortsAlike: a limit on waits shorter than a decode
// iteration aborts the simulation at the first decode that waits for a
// running batch — where decodes join a lazy run as where every batch is
// formed — with the same request and wait reported.
func TestDecodeWaitAbortsAlike(t *testing.T) {
	cl := mustCluster(t, "HH", 20, 3, "bloom-176b", false)
	reqs := randomRequests(400, 10, 1500, 200, 11)
	opt := Options{AbortDelayS: 0.004}
	every := opt
	every.formEveryBatch = true
	lazy, err := Evaluate(cl, reqs, opt)
	if err != nil {
		t.Fatal(err)
	}
	formed, err := Evaluate(cl, reqs, every)
	if err != nil {
		t.Fatal(err)
	}
	if !lazy.Aborted || !strings.Contains(lazy.AbortReason, "for its decode") {
		t.Fatalf("aborted %v (%q), want an abort for a decode's wait", lazy.Aborted, lazy.AbortReason)
	}
	if lazy.AbortReason != formed.AbortReason || lazy.Completed != formed.Completed {
		t.Errorf("with lazy runs: %q after %d requests; forming every batch: %q after %d", lazy.AbortReason, lazy.Completed, formed.AbortReason, formed.Completed)
	}
}
