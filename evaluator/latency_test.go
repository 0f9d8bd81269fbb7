package evaluator

import "testing"

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
