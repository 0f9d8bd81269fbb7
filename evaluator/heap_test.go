package evaluator

import (
	"math/rand/v2"
	"testing"
)

// TestEventQueueOrder: whatever the interleaving of pushes, pops and
// reschedules of machines' run ends — also while the first event is held,
// where the first push takes its place — the queue pops the events a
// sorted list would, by time, ties in the order they were (re)scheduled,
// and knows where each machine's pending run end is.
func TestEventQueueOrder(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(3, 4))
	const machines = 6
	for trial := 0; trial < 500; trial++ {
		q := newEventQueue(machines, 0)
		var model []event // the live events, in no order
		var seq uint64
		pending := map[int32]bool{}
		now := 0.0
		// cut moves machine m's pending run end earlier (or as early),
		// no earlier than now, in the model and the queue.
		cut := func(m int32) {
			for i := range model {
				if model[i].kind == evIterEnd && model[i].who == m {
					model[i].t = now + float64(rng.IntN(int(model[i].t-now)+1))
					model[i].seq = seq
					seq++
					q.reschedule(m, model[i].t, 0)
				}
			}
		}
		for op := 0; op < 400 || len(model) > 0; op++ {
			switch k := rng.IntN(4); {
			case op < 400 && k == 0:
				// A transfer, at or after now; many ties.
				e := event{t: now + float64(rng.IntN(5)), who: int32(op), kind: evTransfer}
				q.push(e)
				e.seq = seq
				seq++
				model = append(model, e)
			case op < 400 && k == 1:
				m := int32(rng.IntN(machines))
				if pending[m] {
					cut(m)
				} else {
					e := event{t: now + float64(rng.IntN(8)), who: m, kind: evIterEnd}
					q.push(e)
					e.seq = seq
					seq++
					model = append(model, e)
					pending[m] = true
				}
			default:
				if len(model) == 0 {
					continue
				}
				best := 0
				for i := range model {
					if before(&model[i], &model[best]) {
						best = i
					}
				}
				want := model[best]
				model = append(model[:best], model[best+1:]...)
				held := rng.IntN(2) == 0
				var got event
				if held {
					got = q.ev[0]
					ht, hwho, hver, hkind := q.hold()
					if ht != got.t || hwho != got.who || hver != got.ver || hkind != got.kind {
						t.Fatalf("trial %d op %d: held (%v, %d, %d, %d), the top is %+v", trial, op, ht, hwho, hver, hkind, got)
					}
				} else {
					got = q.pop()
				}
				if got.t != want.t || got.seq != want.seq || got.who != want.who || got.kind != want.kind {
					t.Fatalf("trial %d op %d: popped %+v, want %+v", trial, op, got, want)
				}
				if got.kind == evIterEnd {
					delete(pending, got.who)
				}
				now = got.t
				if held {
					// While held: a transfer, maybe the machine's next run
					// end (which replaces it), then the release.
					if rng.IntN(2) == 0 {
						// (Now and then one earlier than the held event,
						// which the simulator never schedules: it must
						// still come first.)
						e := event{t: now + float64(rng.IntN(3)-rng.IntN(10)/9), who: int32(1000 + op), kind: evTransfer}
						q.push(e)
						e.seq = seq
						seq++
						model = append(model, e)
					}
					if m := int32(rng.IntN(machines)); pending[m] && rng.IntN(2) == 0 {
						cut(m) // another machine's run, cut while this is held
					}
					if got.kind == evIterEnd && rng.IntN(2) == 0 {
						e := event{t: now + float64(rng.IntN(3)), who: got.who, kind: evIterEnd}
						q.push(e)
						e.seq = seq
						seq++
						model = append(model, e)
						pending[got.who] = true
					}
					q.release()
				}
			}
			// The queue knows where each pending run end is, and only those.
			for m := int32(0); m < machines; m++ {
				i := q.at[m]
				if pending[m] != (i >= 0) || i >= 0 && (q.ev[i].kind != evIterEnd || q.ev[i].who != m) {
					t.Fatalf("trial %d op %d: machine %d pending %v, at %d", trial, op, m, pending[m], i)
				}
			}
		}
		if len(q.ev) != 0 {
			t.Fatalf("trial %d: %d events left", trial, len(q.ev))
		}
	}
}
