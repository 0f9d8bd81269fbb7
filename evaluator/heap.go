package evaluator

// event kinds.
const (
	evIterEnd  uint8 = iota // a machine's run of iterations ends
	evTransfer              // a KV-cache transfer completes
)

// event is one scheduled happening. Ties in time are broken by seq, the
// order in which events were scheduled, so runs are deterministic.
type event struct {
	t   float64
	seq uint64
	who int32  // machine (evIterEnd) or request (evTransfer)
	ver uint32 // the machine's run version, to drop superseded run ends
	// slot is where in eventQueue.at the event's index is kept: its
	// machine for a run end, a slot nobody reads for the rest (set by
	// push, so that moving an event stores its index without a branch).
	slot int32
	kind uint8
}

// eventQueue is a 4-ary min-heap of events keyed by (t, seq): shallower
// than a binary heap, so a push or a pop moves fewer events. It knows
// where each machine's run-end event is, so that cutting a run moves that
// event earlier (reschedule) instead of leaving it behind, superseded:
// the heap holds one event per machine and transfer in flight, not every
// cut's leftover.
type eventQueue struct {
	ev  []event
	seq uint64
	// at[m] is the index in ev of machine m's run-end event, or -1; its
	// last entry, none, is written for the other events and never read.
	at   []int32
	none int32
	// held reports that ev[0] is being handled (see hold).
	held bool
}

// newEventQueue returns a queue for machines machines, with room for
// capacity events.
func newEventQueue(machines, capacity int) eventQueue {
	q := eventQueue{ev: make([]event, 0, capacity), at: make([]int32, machines+1), none: int32(machines)}
	for i := range q.at {
		q.at[i] = -1
	}
	return q
}

// before reports whether a comes before b: earlier, or as early and
// scheduled first.
func before(a, b *event) bool {
	if a.t != b.t {
		return a.t < b.t
	}
	return a.seq < b.seq
}

// place puts e at index i.
func (q *eventQueue) place(i int, e event) {
	q.ev[i] = e
	q.at[e.slot] = int32(i)
}

// up moves e, whose place is at i (a hole), towards the root.
func (q *eventQueue) up(i int, e event) {
	ev := q.ev
	for i > 0 {
		p := (i - 1) / 4
		if !before(&e, &ev[p]) {
			break
		}
		q.place(i, ev[p])
		i = p
	}
	q.place(i, e)
}

// down moves e, whose place is at i (a hole), towards the leaves.
func (q *eventQueue) down(i int, e event) {
	ev := q.ev
	n := len(ev)
	for {
		c := 4*i + 1
		if c >= n {
			break
		}
		m := c
		if c+3 < n {
			// Four children (the usual case): unrolled, bounds checked once.
			ch := ev[c : c+4 : c+4]
			k := 0
			if before(&ch[1], &ch[k]) {
				k = 1
			}
			if before(&ch[2], &ch[k]) {
				k = 2
			}
			if before(&ch[3], &ch[k]) {
				k = 3
			}
			m = c + k
		} else {
			for j := c + 1; j < n; j++ {
				if before(&ev[j], &ev[m]) {
					m = j
				}
			}
		}
		if !before(&ev[m], &e) {
			break
		}
		q.place(i, ev[m])
		i = m
	}
	q.place(i, e)
}

func (q *eventQueue) push(e event) {
	e.seq = q.seq
	q.seq++
	e.slot = e.who
	if e.kind != evIterEnd {
		e.slot = q.none
	}
	if !q.held {
		q.ev = append(q.ev, e)
		q.up(len(q.ev)-1, e)
		return
	}
	// The held event leaves when its handling ends: the new event takes
	// its place at the root and sinks to its own, one sift instead of a
	// pop and a push (the same events, so the same order: (t, seq) orders
	// them totally; an event earlier than the held one stays on top).
	q.at[q.ev[0].slot] = -1
	q.held = false
	q.down(0, e)
}

// hold returns what the event loop reads of the first event (its time,
// who, run version and kind), leaving it at the top of the queue until
// release or until the next push, which takes its place (a cut that would
// move a run end above it releases it first).
func (q *eventQueue) hold() (t float64, who int32, ver uint32, kind uint8) {
	q.held = true
	e := &q.ev[0]
	return e.t, e.who, e.ver, e.kind
}

// release removes the held event unless a push replaced it.
func (q *eventQueue) release() {
	if q.held {
		q.held = false
		q.pop()
	}
}

func (q *eventQueue) pop() event {
	top := q.ev[0]
	q.at[top.slot] = -1
	n := len(q.ev) - 1
	last := q.ev[n]
	q.ev = q.ev[:n]
	if n > 0 {
		q.down(0, last)
	}
	return top
}

// reschedule gives machine who's run-end event the time t and the run
// version ver, as if it were pushed anew (it takes the next seq); the
// machine must have one pending.
func (q *eventQueue) reschedule(who int32, t float64, ver uint32) {
	if q.held && t <= q.ev[0].t {
		q.release() // it must not rise above the held event
	}
	i := int(q.at[who])
	e := q.ev[i]
	e.t, e.ver, e.seq = t, ver, q.seq
	q.seq++
	if i > 0 && before(&e, &q.ev[(i-1)/4]) {
		q.up(i, e)
	} else {
		q.down(i, e)
	}
}
