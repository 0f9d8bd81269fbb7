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

// eventQueue is a binary min-heap of events keyed by (t, seq).
type eventQueue struct {
	ev  []event
	seq uint64
}

func (q *eventQueue) less(i, j int) bool {
	a, b := &q.ev[i], &q.ev[j]
	if a.t != b.t {
		return a.t < b.t
	}
	return a.seq < b.seq
}

func (q *eventQueue) push(e event) {
	e.seq = q.seq
	q.seq++
	q.ev = append(q.ev, e)
	i := len(q.ev) - 1
	for i > 0 {
		p := (i - 1) / 2
		if !q.less(i, p) {
			break
		}
		q.ev[i], q.ev[p] = q.ev[p], q.ev[i]
		i = p
	}
}

func (q *eventQueue) pop() event {
	top := q.ev[0]
	n := len(q.ev) - 1
	q.ev[0] = q.ev[n]
	q.ev = q.ev[:n]
	i := 0
	for {
		l := 2*i + 1
		if l >= n {
			break
		}
		m := l
		if r := l + 1; r < n && q.less(r, l) {
			m = r
		}
		if !q.less(m, i) {
			break
		}
		q.ev[i], q.ev[m] = q.ev[m], q.ev[i]
		i = m
	}
	return top
}
