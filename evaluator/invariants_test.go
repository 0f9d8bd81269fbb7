package evaluator

import (
	"context"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"splitplan/traces"
)

// randomRequests makes n requests at rate rps with sizes drawn uniformly
// from [1, maxPrompt] and [1, maxOutput].
func randomRequests(n int, rps float64, maxPrompt, maxOutput int, seed uint64) []traces.Request {
	rng := rand.New(rand.NewPCG(seed, 1))
	reqs := make([]traces.Request, n)
	t := 0.0
	for i := range reqs {
		t += rng.ExpFloat64() / rps
		reqs[i] = traces.Request{ID: i, Arrival: t, PromptTokens: 1 + rng.IntN(maxPrompt), OutputTokens: 1 + rng.IntN(maxOutput)}
	}
	return reqs
}

// checkInvariants runs the simulation and checks conservation and memory.
func checkInvariants(t *testing.T, name string, cl Cluster, reqs []traces.Request, opt Options) *Result {
	t.Helper()
	opt.RecordBatchTokens = true // the policy tests read the histogram
	s, err := newSim(cl, reqs, opt)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	if opt.Compat && cl.Policy.IsDefault() {
		res, stalled := checkCompatState(t, name, s)
		if stalled {
			return res
		}
		return checkResult(t, name, res, len(reqs))
	}
	s.run(context.Background())
	res := s.finishResult()
	checkDefaultState(t, name, s, res)
	return checkResult(t, name, res, len(reqs))
}

// checkDefaultState is checkInvariants' check of the default scheduler's
// state after its run.
func checkDefaultState(t *testing.T, name string, s *sim, res *Result) {
	t.Helper()
	if len(s.free) != len(s.st) {
		t.Errorf("%s: %d of %d request slots still live at the end", name, len(s.st)-len(s.free), len(s.st))
	}
	for i := range s.st { // each slot's last request
		st := &s.st[i]
		if st.phase != phDone || st.generated != st.output {
			t.Errorf("%s: request %d phase %d generated %d of %d tokens", name, i, st.phase, st.generated, st.output)
			break
		}
	}
	for i := range s.m {
		m := &s.m[i]
		if l := s.load[i]; m.used != 0 || m.committed != 0 || l[byMemory] != 0 || l[byPending] != 0 {
			t.Errorf("%s: machine %d drained with used %d committed %d sched %d pending %d",
				name, i, m.used, m.committed, l[byMemory], l[byPending])
		}
		if m.peak > m.capacity {
			t.Errorf("%s: machine %d peak memory %d over capacity %d", name, i, m.peak, m.capacity)
		}
		if len(m.queue)+len(m.preempted)+len(m.batch)+len(m.waitXfer) != 0 || m.busy {
			t.Errorf("%s: machine %d not idle at the end", name, i)
		}
		if m.pool != m.home {
			t.Errorf("%s: machine %d ended in pool %d, home %d", name, i, m.pool, m.home)
		}
	}
}

// checkResult checks the per-request figures of any run.
func checkResult(t *testing.T, name string, res *Result, n int) *Result {
	t.Helper()
	if res.Completed != n {
		t.Errorf("%s: %d of %d requests completed", name, res.Completed, n)
	}
	for _, r := range res.Requests {
		if r.TTFTS <= 0 || r.E2ES < r.TTFTS || r.QueueS < 0 || r.TTFTS < r.QueueS {
			t.Errorf("%s: request %d has TTFT %v E2E %v queue %v", name, r.ID, r.TTFTS, r.E2ES, r.QueueS)
			break
		}
		if r.OutputTokens > 1 && r.MaxGapS < r.TBTS-1e-12 {
			t.Errorf("%s: request %d max gap %v below its mean gap %v", name, r.ID, r.MaxGapS, r.TBTS)
			break
		}
	}
	checkITL(t, name, res)
	return res
}

// checkITL checks the ITL sketch of a run that kept its requests and ran
// to its end against them: one gap for each output token after the
// first, the gaps of a request adding up to its E2E − TTFT, the largest
// the largest request's MaxGapS, the smallest no smaller than any
// request's mean gap allows.
func checkITL(t *testing.T, name string, res *Result) {
	t.Helper()
	if res.Aborted || res.Stopped || res.Requests == nil {
		if res.ITL.Count() != 0 && (res.Aborted || res.Stopped) {
			t.Errorf("%s: a run cut short has %d ITL gaps", name, res.ITL.Count())
		}
		return
	}
	var gaps uint64
	var sum, largest float64
	for _, r := range res.Requests {
		if r.OutputTokens > 1 {
			gaps += uint64(r.OutputTokens - 1)
			sum += r.E2ES - r.TTFTS
			largest = max(largest, r.MaxGapS)
		}
	}
	itl := &res.ITL
	if itl.Count() != gaps || math.Abs(itl.Sum()-sum) > 1e-9*max(sum, 1) || itl.Max() != largest && gaps > 0 {
		t.Errorf("%s: ITL of %d gaps adding up to %v s, largest %v; the requests' %d gaps add up to %v s, largest %v",
			name, itl.Count(), itl.Sum(), itl.Max(), gaps, sum, largest)
	}
}

func TestConservationAndMemory(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name          string
		design        string
		prompt, token int
		model         string
		compat        bool
		kvTokens      int64
		rps           float64
	}{
		{"baseline", "Baseline-A100", 4, 0, "bloom-176b", false, 0, 20},
		{"baseline tight memory", "Baseline-H100", 2, 0, "bloom-176b", true, 9000, 20},
		{"HH", "HH", 3, 2, "bloom-176b", true, 0, 25},
		{"HA tight memory", "HA", 2, 2, "llama2-70b", false, 8000, 30},
		{"HHcap overloaded", "HHcap", 1, 1, "bloom-176b", false, 0, 40},
		{"AA tiny token pool", "AA", 4, 1, "bloom-176b", true, 6000, 30},
	} {
		reqs := randomRequests(600, tc.rps, 4000, 300, 7)
		cl := mustCluster(t, tc.design, tc.prompt, tc.token, tc.model, tc.compat)
		checkInvariants(t, tc.name, cl, reqs, Options{Compat: tc.compat, KVCapacityTokens: tc.kvTokens})
	}
}

func TestRoutingInvariants(t *testing.T) {
	t.Parallel()
	reqs := randomRequests(500, 30, 3000, 200, 3)
	base := checkInvariants(t, "baseline", mustCluster(t, "Baseline-H100", 5, 0, "bloom-176b", false), reqs, Options{})
	for _, r := range base.Requests {
		if r.Transferred || r.PromptMachine != r.TokenMachine || r.Borrowed {
			t.Fatalf("baseline request transferred or borrowed: %+v", r)
		}
	}
	for _, m := range base.Machines {
		if m.Pool != PoolBaseline || m.PoolMoves != 0 {
			t.Fatalf("baseline machine %+v", m)
		}
	}
	// A tight Splitwise cluster borrows, and every request transfers
	// unless both phases ran on one machine.
	res := checkInvariants(t, "splitwise", mustCluster(t, "HH", 2, 1, "bloom-176b", false), reqs, Options{})
	moves, borrowed := 0, 0
	for _, r := range res.Requests {
		same := r.PromptMachine == r.TokenMachine
		if r.OutputTokens > 1 && r.Transferred == same {
			t.Fatalf("request %d: transferred %v with prompt machine %d, token machine %d", r.ID, r.Transferred, r.PromptMachine, r.TokenMachine)
		}
		if r.Borrowed {
			borrowed++
		}
	}
	for _, m := range res.Machines {
		moves += m.PoolMoves
		if m.PoolMoves%2 != 0 {
			t.Errorf("machine %d moved %d times: it did not return home", m.ID, m.PoolMoves)
		}
	}
	if moves == 0 || borrowed == 0 || moves != res.PoolMoves {
		t.Errorf("expected borrowing in a tight cluster: %d moves (%d), %d borrowed requests", moves, res.PoolMoves, borrowed)
	}
}

func TestEvaluateErrors(t *testing.T) {
	t.Parallel()
	cl := mustCluster(t, "HH", 1, 1, "bloom-176b", false)
	ok := []traces.Request{{ID: 0, Arrival: 0, PromptTokens: 10, OutputTokens: 2}}
	bad := cl
	bad.Token = 0
	for _, tc := range []struct {
		name string
		cl   Cluster
		reqs []traces.Request
		opt  Options
		want string
	}{
		{"empty", cl, nil, Options{}, "no requests"},
		{"no token pool", bad, ok, Options{}, "needs positive machine counts"},
		{"zero output", cl, []traces.Request{{ID: 0, PromptTokens: 3, OutputTokens: 0}}, Options{}, "at least 1 token"},
		{"backwards", cl, []traces.Request{{ID: 0, Arrival: 2, PromptTokens: 3, OutputTokens: 1}, {ID: 1, Arrival: 1, PromptTokens: 3, OutputTokens: 1}}, Options{}, "request 1: arrival 1"},
		{"unservable", cl, []traces.Request{{ID: 0, PromptTokens: 90000, OutputTokens: 10}}, Options{}, "request 0 is unservable"},
		{"transfer mode", cl, ok, Options{Transfer: 9}, "transfer mode"},
		{"negative limit", cl, ok, Options{MaxBatchTokens: -1}, "max batch tokens must be at least 1"},
	} {
		_, err := Evaluate(tc.cl, tc.reqs, tc.opt)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want it to say %q", tc.name, err, tc.want)
		}
	}
}

func TestStarvationGuardAndPreemption(t *testing.T) {
	t.Parallel()
	// A burst of 30 prompts of 2048 tokens (the whole budget) onto one
	// baseline machine while request 0 decodes: every prompt iteration
	// leaves its decode out. After 4 left-outs the starvation guard puts
	// it (first in the pending queue) ahead of the next prompt, in a
	// decode-only iteration with the burst's own decodes, so it keeps
	// making progress every few prompts instead of waiting out the burst.
	var reqs []traces.Request
	reqs = append(reqs, traces.Request{ID: 0, Arrival: 0, PromptTokens: 100, OutputTokens: 200})
	for i := 1; i <= 30; i++ {
		reqs = append(reqs, traces.Request{ID: i, Arrival: 0.5 + float64(i)*0.001, PromptTokens: 2048, OutputTokens: 5})
	}
	// The default scheduler (SPEC §5) on the reference's curves; compat's
	// guard never sees running decodes (TestCompatStarvationGuard).
	cl := onRefCurves(t, "Baseline-A100", 1, 0, "bloom-176b")
	res := checkInvariants(t, "burst", cl, reqs, Options{})
	r0 := res.Requests[0]
	if r0.Preemptions < 4 {
		t.Errorf("request 0 was preempted %d times by the burst of 2048-token prompts", r0.Preemptions)
	}
	p, _ := cl.PromptType.Perf.PromptTime(2048)
	if r0.MaxGapS > 8*p {
		t.Errorf("request 0 waited %.2f s between tokens, the burst takes %.2f s: the starvation guard should let it run every few prompts (< %.2f s)",
			r0.MaxGapS, 30*p, 8*p)
	}
	if r0.MaxGapS < 4*p {
		t.Errorf("request 0's longest gap %.2f s is shorter than 4 prompt iterations (%.2f s): it was not preempted 4 times in a row", r0.MaxGapS, 4*p)
	}
}

// TestPromptsCutDecodeRuns: a prompt arriving at a decode run cuts it at
// the next iteration boundary, whether or not it fits the token budget
// (SPEC §5; the reference simulator lets a prompt longer than the budget
// wait for the run to end, which TestCompatOverBudgetPromptWaits checks).
func TestPromptsCutDecodeRuns(t *testing.T) {
	t.Parallel()
	cl := onRefCurves(t, "Baseline-H100", 1, 0, "bloom-176b")
	d, _ := cl.PromptType.Perf.DecodeTime(1, 0)
	p0, _ := cl.PromptType.Perf.PromptTime(100)
	for _, prompt := range []int{2048, 2049, 6000} {
		reqs := []traces.Request{
			{ID: 0, Arrival: 0, PromptTokens: 100, OutputTokens: 101},
			{ID: 1, Arrival: 1, PromptTokens: prompt, OutputTokens: 2},
		}
		res := mustEval(t, cl, reqs, Options{})
		boundary := p0 + math.Ceil((1-p0)/d-1e-9)*d
		near(t, "prompt start at the cut", 1+res.Requests[1].QueueS, boundary, 1e-9)
	}
}

func TestAbortOnUnsustainableLoad(t *testing.T) {
	t.Parallel()
	// One A100 at 30 req/s of 3000-token prompts is hopelessly overloaded.
	reqs := randomRequests(3000, 30, 3000, 50, 5)
	cl := mustCluster(t, "Baseline-A100", 1, 0, "bloom-176b", false)
	res := mustEval(t, cl, reqs, Options{AbortDelayS: 10})
	if !res.Aborted || res.Completed >= len(reqs) || !strings.Contains(res.AbortReason, "not sustainable") {
		t.Fatalf("aborted %v after %d of %d: %s", res.Aborted, res.Completed, len(reqs), res.AbortReason)
	}
	full := mustEval(t, cl, reqs, Options{})
	if full.Aborted || full.Completed != len(reqs) || full.Events <= res.Events {
		t.Errorf("without the abort: aborted %v, %d completed, %d events (aborted run %d)", full.Aborted, full.Completed, full.Events, res.Events)
	}
	// A light load never aborts, and its scheduling delays are small.
	light := mustEval(t, mustCluster(t, "HH", 4, 2, "bloom-176b", false), randomRequests(300, 5, 2000, 100, 5), Options{AbortDelayS: 10})
	if light.Aborted {
		t.Fatal(light.AbortReason)
	}
	for _, r := range light.Requests {
		if r.SchedDelayS < r.QueueS-1e-12 || r.SchedDelayS > 5 {
			t.Fatalf("request %d: sched delay %v, queue %v", r.ID, r.SchedDelayS, r.QueueS)
		}
	}
}
