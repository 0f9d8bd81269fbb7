package evaluator

// Compat event kinds.
const (
	cevArrival   uint8 = iota // a request arrives (who: request)
	cevIterEnd                // a machine's run of iterations ends (who: machine)
	cevFlowDone               // a KV-cache transfer completes (who: request)
	cevFlowRetry              // a transfer waiting for memory retries (who: request)
)

// cEvent is one event of the compat simulator. A cancelled event stays in
// the heap, flagged, until it is popped, as the reference's do.
type cEvent struct {
	t       float64
	who     int32
	kind    uint8
	deleted bool
}

// cHeap is the reference simulator's event queue: Python's heapq over
// events compared by time alone. Ties are broken by the heap's shape, not
// by insertion order; to reproduce them, push and pop follow heapq's
// algorithms (siftdown on push; on pop, siftup to a leaf then siftdown)
// step for step, and cancelled events keep their places. Events live in
// an arena and the heap holds their indices; popped slots are reused.
type cHeap struct {
	ev   []cEvent
	free []int32
	h    []cSlot
}

// newCHeap returns a queue with room for n events at once: its arena,
// heap and free list never grow while it holds no more. The free list
// gets the same room: every slot an event held is freed when the event
// is popped, so after the arrivals scheduled up front it holds as many
// as there were (grown by appends, it allocated four times the bytes).
func newCHeap(n int) cHeap {
	return cHeap{ev: make([]cEvent, 0, n), free: make([]int32, 0, n), h: make([]cSlot, 0, n)}
}

// cSlot is a heap entry: the event's time (compared without reaching into
// the arena) and its index.
type cSlot struct {
	t float64
	i int32
}

// push schedules an event at time t and returns its index (for cancel).
func (q *cHeap) push(t float64, kind uint8, who int32) int32 {
	var i int32
	if n := len(q.free); n > 0 {
		i = q.free[n-1]
		q.free = q.free[:n-1]
	} else {
		i = int32(len(q.ev))
		q.ev = append(q.ev, cEvent{})
	}
	q.ev[i] = cEvent{t: t, who: who, kind: kind}
	q.h = append(q.h, cSlot{t, i})
	q.siftdown(0, len(q.h)-1)
	return i
}

// cancel flags event i; it is dropped when popped.
func (q *cHeap) cancel(i int32) { q.ev[i].deleted = true }

// pop removes the earliest event (heapq.heappop) and returns a copy; its
// slot is freed.
func (q *cHeap) pop() cEvent {
	n := len(q.h) - 1
	last := q.h[n]
	q.h = q.h[:n]
	top := last
	if n > 0 {
		top = q.h[0]
		q.h[0] = last
		q.siftup(0)
	}
	e := q.ev[top.i]
	q.free = append(q.free, top.i)
	return e
}

// siftdown is heapq._siftdown: move the item at pos up towards start
// while it is smaller than its parent.
func (q *cHeap) siftdown(start, pos int) {
	h := q.h
	item := h[pos]
	for pos > start {
		parent := (pos - 1) >> 1
		if item.t < h[parent].t {
			h[pos] = h[parent]
			pos = parent
			continue
		}
		break
	}
	h[pos] = item
}

// siftup is heapq._siftup: move the smaller child up until a leaf, put
// the item there, then siftdown.
func (q *cHeap) siftup(pos int) {
	h := q.h
	end := len(h)
	start := pos
	item := h[pos]
	child := 2*pos + 1
	for child < end {
		if right := child + 1; right < end && !(h[child].t < h[right].t) {
			child = right
		}
		h[pos] = h[child]
		pos = child
		child = 2*pos + 1
	}
	h[pos] = item
	q.siftdown(start, pos)
}
