package evaluator

import (
	"context"
	"testing"
)

// checkCompatState runs s with the compat scheduler and checks its state
// at the end: every request's prompt produced one token and its decode
// exactly the rest, memory and the cluster scheduler's bookkeeping
// drained and never over capacity, every queue empty, every machine home.
func checkCompatState(t *testing.T, name string, s *sim) *Result {
	t.Helper()
	c := newCompatSim(s)
	if err := c.run(context.Background()); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	res := s.finishResult()
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
	return res
}
