package evaluator

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"strings"
	"testing"

	"splitplan/traces"
)

// checkCompatState runs s with the compat scheduler and checks its state
// at the end: every request's prompt produced one token and its decode
// exactly the rest, memory and the cluster scheduler's bookkeeping
// drained and never over capacity, every queue empty, every machine home.
//
// A run that stalls (its memory over-committed, as the reference's can)
// must say so, and then every unfinished request must still be held
// somewhere: queued, batched or transferring; stalled reports it.
func checkCompatState(t *testing.T, name string, s *sim) (res *Result, stalled bool) {
	t.Helper()
	c := newCompatSim(s)
	if err := c.run(context.Background()); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	res = s.finishResult()
	for i := range c.in {
		if in := &c.in[i]; in.m.peak > in.m.capacity || in.used < 0 || in.used > in.m.capacity {
			t.Errorf("%s: machine %d memory used %d peak %d over capacity %d", name, i, in.used, in.m.peak, in.m.capacity)
		}
	}
	if res.Aborted {
		if !strings.HasPrefix(res.AbortReason, compatStallReason) || res.Completed == len(s.reqs) {
			t.Errorf("%s: aborted with %d of %d completed: %s", name, res.Completed, len(s.reqs), res.AbortReason)
		}
		held := 0
		for r := range c.r {
			if c.t[2*r+1].state == ctCompleted || (c.r[r].output == 1 && c.t[2*r].state == ctCompleted) {
				continue
			}
			if c.t[2*r].state == ctNone {
				t.Errorf("%s: request %d never reached its machine", name, r)
			}
			held++
		}
		if held+res.Completed != len(s.reqs) {
			t.Errorf("%s: %d unfinished + %d completed != %d requests", name, held, res.Completed, len(s.reqs))
		}
		t.Logf("%s: %s", name, res.AbortReason)
		return res, true
	}
	for r := range c.r {
		rq := &c.r[r]
		p, d := &c.t[2*r], &c.t[2*r+1]
		if p.state != ctCompleted || p.generated != 1 {
			t.Errorf("%s: request %d prompt state %d generated %d", name, r, p.state, p.generated)
			break
		}
		if rq.output > 1 && (d.state != ctCompleted || d.generated != rq.output-1) {
			t.Errorf("%s: request %d decode state %d generated %d of %d", name, r, d.state, d.generated, rq.output-1)
			break
		}
		if rq.output == 1 && d.state != ctNone {
			t.Errorf("%s: request %d has one output token but its decode ran", name, r)
			break
		}
	}
	for i := range c.in {
		in := &c.in[i]
		if in.used != 0 || in.schedMem != 0 || in.schedPending != 0 {
			t.Errorf("%s: machine %d drained with used %d sched memory %d pending %d", name, i, in.used, in.schedMem, in.schedPending)
		}
		if in.m.peak > in.m.capacity {
			t.Errorf("%s: machine %d peak memory %d over capacity %d", name, i, in.m.peak, in.m.capacity)
		}
		if len(in.pending)+len(in.prompts)+len(in.blocked)+len(in.batch)+len(in.reqs) != 0 || in.ev >= 0 {
			t.Errorf("%s: machine %d not idle at the end", name, i)
		}
		if in.pool != in.m.home {
			t.Errorf("%s: machine %d ended in pool %d, home %d", name, i, in.pool, in.m.home)
		}
	}
	return res, false
}

// TestCompatHeapTies: the event queue breaks ties as Python's heapq does
// (by the heap's shape), not by insertion order. The expected order is
// Python's: seven events pushed a..g at t = 1 except e at 0.5 pop as
// "ecfgbad".
func TestCompatHeapTies(t *testing.T) {
	t.Parallel()
	var q cHeap
	for i, n := range "abcdefg" {
		tm := 1.0
		if n == 'e' {
			tm = 0.5
		}
		q.push(tm, 0, int32(i))
	}
	got := ""
	for len(q.h) > 0 {
		got += string(rune('a' + q.pop().who))
	}
	if got != "ecfgbad" {
		t.Errorf("pop order %q, heapq's is %q", got, "ecfgbad")
	}
	// Popped slots are reused; a cancelled event still pops, flagged.
	a := q.push(2, 0, 1)
	q.cancel(a)
	q.push(1, 0, 2)
	if e := q.pop(); e.who != 2 || e.deleted {
		t.Errorf("first pop %+v", e)
	}
	if e := q.pop(); e.who != 1 || !e.deleted {
		t.Errorf("second pop %+v", e)
	}
	if len(q.ev) != 7 {
		t.Errorf("arena grew to %d events, want the 7 slots reused", len(q.ev))
	}
}

// TestCompatFloorDiv: Python's float floor division, which differs from
// math.Floor(a/b) when the quotient rounds up to an integer (values from
// CPython).
func TestCompatFloorDiv(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ a, b, want float64 }{
		{1.0, 0.1, 9}, {0.7, 0.1, 6}, {5.3, 1.1, 4}, {2.0, 0.5, 4}, {1e-300, 3.0, 0},
	} {
		if got := pyFloorDiv(c.a, c.b); got != c.want {
			t.Errorf("%v // %v = %v, Python says %v", c.a, c.b, got, c.want)
		}
	}
}

// TestCompatOverBudgetPromptWaits: in compat mode a prompt that fits the
// token budget with the batch's prompt tokens (2048) cuts a decode run at
// the next boundary; a longer one waits for the run to end (the default
// scheduler cuts for it too: TestPromptsCutDecodeRuns). The prompt comes
// alone (a one-token output) to a token machine borrowed into the mixed
// pool while it decodes request 0: the prompt machine's queue is long
// (two prompts of 8000 tokens).
func TestCompatOverBudgetPromptWaits(t *testing.T) {
	t.Parallel()
	cl := mustCluster(t, "HH", 1, 1, "bloom-176b", true)
	d, _ := cl.TokenType.Perf.DecodeTime(1, 0)
	for _, prompt := range []int{2048, 2049, 6000} {
		reqs := []traces.Request{
			{ID: 0, Arrival: 0, PromptTokens: 100, OutputTokens: 101},
			{ID: 1, Arrival: 0.5, PromptTokens: 8000, OutputTokens: 1},
			{ID: 2, Arrival: 0.5001, PromptTokens: 8000, OutputTokens: 1},
			{ID: 3, Arrival: 1, PromptTokens: prompt, OutputTokens: 1},
		}
		res := checkInvariants(t, "over budget", cl, reqs, Options{Compat: true})
		r0, r4 := res.Requests[0], res.Requests[3]
		if r0.TokenMachine != 1 || r4.PromptMachine != 1 || !r4.Borrowed {
			t.Fatalf("setup: request 0 decodes on %d, request 3's prompt on %d (borrowed %v); want both on machine 1",
				r0.TokenMachine, r4.PromptMachine, r4.Borrowed)
		}
		runStart := r0.TTFTS + r0.TransferS
		want := runStart + 100*d // the end of request 0's run
		if prompt <= 2048 {
			want = runStart + math.Ceil((1-runStart)/d)*d
		}
		near(t, fmt.Sprintf("prompt of %d starts", prompt), 1+r4.QueueS, want, 1e-9)
	}
}

// TestCompatStarvationGuard: the reference's starvation guard walks its
// pending queue, ordered by preemptions then arrival, from the front and
// stops at the first task preempted fewer than 4 times; a decode
// preempted by a burst of full-budget prompts sits behind the fresh
// prompts, so the guard does not rescue it: it waits out most of the
// burst (the default scheduler lets it run every few prompts:
// TestStarvationGuardAndPreemption).
func TestCompatStarvationGuard(t *testing.T) {
	t.Parallel()
	var reqs []traces.Request
	reqs = append(reqs, traces.Request{ID: 0, Arrival: 0, PromptTokens: 100, OutputTokens: 200})
	for i := 1; i <= 30; i++ {
		reqs = append(reqs, traces.Request{ID: i, Arrival: 0.5 + float64(i)*0.001, PromptTokens: 2048, OutputTokens: 5})
	}
	cl := mustCluster(t, "Baseline-A100", 1, 0, "bloom-176b", true)
	r0 := checkInvariants(t, "burst", cl, reqs, Options{Compat: true}).Requests[0]
	p, _ := cl.PromptType.Perf.PromptTime(2048)
	if r0.Preemptions < 8 || r0.MaxGapS < 8*p {
		t.Errorf("request 0 preempted %d times, longest gap %.2f s: want it left out well past 4 times (gap over %.2f s)", r0.Preemptions, r0.MaxGapS, 8*p)
	}
}

// TestCompatConservation: in compat mode, on clusters whose memory is not
// over-committed, every request finishes once with exactly its output
// (one-token outputs included), memory and bookkeeping drain, machines
// return home, and two runs are byte-identical.
func TestCompatConservation(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		design        string
		prompt, token int
		rps           float64
		borrows       bool
	}{
		{"Baseline-A100", 4, 0, 20, false},
		{"Baseline-H100", 1, 0, 6, false},
		{"HH", 3, 2, 25, true},
		{"HH", 2, 1, 30, true},
		{"HA", 2, 2, 30, true},
		{"HHcap", 1, 1, 40, true},
		{"AA", 4, 1, 30, true},
	} {
		name := fmt.Sprintf("%s %dP/%dT at %g req/s", tc.design, tc.prompt, tc.token, tc.rps)
		reqs := randomRequests(600, tc.rps, 4000, 300, 11)
		cl := mustCluster(t, tc.design, tc.prompt, tc.token, "bloom-176b", true)
		res := checkInvariants(t, name, cl, reqs, Options{Compat: true})
		if res.Aborted {
			t.Errorf("%s: %s", name, res.AbortReason)
			continue
		}
		ones, borrowed := 0, 0
		for i, r := range res.Requests {
			if r.ID != reqs[i].ID || r.OutputTokens != reqs[i].OutputTokens {
				t.Fatalf("%s: request %d reported as %+v", name, i, r)
			}
			if r.OutputTokens == 1 {
				ones++
				if r.E2ES != r.TTFTS || r.Transferred {
					t.Errorf("%s: one-token request %d: E2E %v TTFT %v transferred %v", name, i, r.E2ES, r.TTFTS, r.Transferred)
				}
			}
			if r.Borrowed {
				borrowed++
			}
		}
		if ones == 0 {
			t.Errorf("%s: no one-token output in the workload", name)
		}
		if tc.borrows != (borrowed > 0) {
			t.Errorf("%s: %d requests borrowed into the mixed pool", name, borrowed)
		}
		var a, b bytes.Buffer
		if err := WriteRequestsCSV(&a, res); err != nil {
			t.Fatal(err)
		}
		if err := WriteRequestsCSV(&b, mustEval(t, cl, reqs, Options{Compat: true})); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(a.Bytes(), b.Bytes()) {
			t.Errorf("%s: two runs differ", name)
		}
	}
}
