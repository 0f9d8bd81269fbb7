package evaluator

// event kinds.
const (
	evIterEnd  uint8 = iota // a machine's run of iterations ends
	evTransfer              // a KV-cache transfer completes
)

// event is one scheduled happening. Ties in time are broken by seq, the
// order in which events were scheduled, so runs are deterministic.
type event struct {
	t    float64
	seq  uint64
	who  int32  // machine (evIterEnd) or request (evTransfer)
	ver  uint32 // the machine's run version, to drop superseded run ends
	kind uint8
}

// eventQueue is a 4-ary min-heap of events keyed by (t, seq): shallower
// than a binary heap, so a push or a pop moves fewer events.
type eventQueue struct {
	ev  []event
	seq uint64
}

// before reports whether a comes before b: earlier, or as early and
// scheduled first.
func before(a, b *event) bool {
	if a.t != b.t {
		return a.t < b.t
	}
	return a.seq < b.seq
}

func (q *eventQueue) push(e event) {
	e.seq = q.seq
	q.seq++
	q.ev = append(q.ev, e)
	ev := q.ev
	i := len(ev) - 1
	for i > 0 {
		p := (i - 1) / 4
		if !before(&e, &ev[p]) {
			break
		}
		ev[i] = ev[p]
		i = p
	}
	ev[i] = e
}

func (q *eventQueue) pop() event {
	ev := q.ev
	top := ev[0]
	n := len(ev) - 1
	last := ev[n]
	q.ev = ev[:n]
	ev = ev[:n]
	i := 0
	for {
		c := 4*i + 1
		if c >= n {
			break
		}
		m := c
		for j := c + 1; j < c+4 && j < n; j++ {
			if before(&ev[j], &ev[m]) {
				m = j
			}
		}
		if !before(&ev[m], &last) {
			break
		}
		ev[i] = ev[m]
		i = m
	}
	if n > 0 {
		ev[i] = last
	}
	return top
}
