package evaluator

import (
	"math/rand/v2"
	"testing"
)

// TestEventQueueOrder: whatever the interleaving of pushes and pops, the
// queue pops its events by time, ties in the order they were pushed.
func TestEventQueueOrder(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for trial := 0; trial < 500; trial++ {
		var q eventQueue
		var last event
		popped := false
		now := 0.0
		for op := 0; op < 400; op++ {
			if len(q.ev) == 0 || rng.IntN(3) > 0 {
				// Times at or after the last pop, with many ties.
				q.push(event{t: now + float64(rng.IntN(5)), who: int32(op)})
				continue
			}
			e := q.pop()
			if popped && before(&e, &last) {
				t.Fatalf("trial %d: popped (%v, %d) after (%v, %d)", trial, e.t, e.seq, last.t, last.seq)
			}
			last, popped, now = e, true, e.t
		}
		for len(q.ev) > 0 {
			e := q.pop()
			if popped && before(&e, &last) {
				t.Fatalf("trial %d: draining popped (%v, %d) after (%v, %d)", trial, e.t, e.seq, last.t, last.seq)
			}
			last, popped = e, true
		}
	}
}
