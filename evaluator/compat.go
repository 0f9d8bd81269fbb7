package evaluator

import (
	"context"
	"fmt"
	"math"
	"sort"

	"splitplan/evaluator/perf"
	"splitplan/traces"
)

// The compat scheduler: `--compat splitwise-sim` with mixed batching runs
// this machine- and cluster-level scheduler instead of the default one. It
// mirrors the reference simulator's (SplitwiseSim's) queues and rules, one
// by one (see ../shared/COMPAT.md and docs/compat.md):
//
//   - per machine a pending queue of tasks ordered by (preemptions,
//     arrival), kept by a binary-search insertion that reads each queued
//     task's current count; a queue of waiting prompts; a queue of
//     preempted decodes; the pending requests in arrival order;
//   - batch formation: the starvation guard walks the pending queue from
//     its front and stops at the first task with fewer than
//     MaxPreemptions; waiting prompts, the first whatever its length; the
//     preempted decodes; the previous batch; the first task of every other
//     pending request; the kept tasks of the previous batch run first;
//   - a busy machine cuts its run at the next boundary when an arriving
//     task fits the token budget (a prompt: the batch's prompt tokens plus
//     its own), and when a KV transfer leaving it completes while its
//     batch holds fewer than MaxBatchTokens tokens;
//   - memory is admitted by actual allocation: a task needs its own
//     KV-cache when it starts, a transfer the request's when it starts
//     (retried every compatRetryS while it does not fit), an idle machine
//     ignores an arrival that does not fit;
//   - events are ordered by time alone in a binary heap like Python's
//     heapq (cHeap); the performance curves are evaluated as scipy's
//     interp1d does, and a cut run's completed iterations with Python's
//     floor division.
//
// The reference crashes when a request with a one-token output is cut
// into a run (its zero-token decode leaves no completion event); compat
// keeps the default rule there: the request finishes with its prompt.

// compatRetryS is how long a KV transfer that does not fit its
// destination's memory waits before it tries again (the reference's
// link retry delay).
const compatRetryS = 1.0

// Task states, as the reference names them.
const (
	ctNone uint8 = iota
	ctQueued
	ctRunning
	ctBlocked
	ctCompleted
)

// cReq is a request's compat state. Its prompt task is 2r, its decode
// (token) task 2r+1.
type cReq struct {
	promptStart, lastToken float64
	firstToken, maxGap     float64
	decodeReady, xfer      float64
	decodeStart            float64
	promptMem, tokenMem    int64 // KV bytes of prompt+1 and output−1 tokens
	mem                    int64 // KV bytes the request holds (request.memory)
	prompt, output         int32
	pm, tm                 int32
	preempts               int32
	flowRunning            bool
	transferred, borrowed  bool
}

// cTask is a task's compat state.
type cTask struct {
	np         int32 // preemptions counted on this task
	generated  int32
	generating int32
	old, sel   uint32 // in the previous / newly formed batch (stamps)
	state      uint8
}

// cInst is a machine's compat state (the reference's instance).
type cInst struct {
	m            *machine
	used         int64   // KV bytes allocated
	schedMem     int64   // the cluster scheduler's memory bookkeeping
	schedPending int64   // the cluster scheduler's pending tokens
	pending      []int32 // pending queue: tasks, by (preemptions, arrival)
	prompts      []int32 // waiting prompt tasks, in arrival order
	blocked      []int32 // preempted decodes, in preemption order
	batch        []int32
	spare        []int32
	reqs         []int32 // pending requests, by arrival
	nPrompt      int     // prompt tasks in the batch
	batchTokens  int
	iterDur      float64
	iters        float64 // contiguous iterations of the run (a float, as in the reference)
	runStart     float64
	ev           int32 // the run's completion event (-1: none)
	pausing      bool
	extrap       bool
	pool         int8
}

type compatSim struct {
	s     *sim
	r     []cReq
	t     []cTask
	in    []cInst
	pools [3][]int32
	q     cHeap
	now   float64
	stamp uint32
	maxB  int
	maxT  int
	maxP  int32
	refs  []refCurves // per machine
	// mark[r] is the stamp of the batch formation that took request r (a
	// dense array: batch formation reads it for every pending request).
	mark    []uint32
	scratch []int32
	// arrivalsLeft and flowsRunning tell a stuck simulation (stuck).
	arrivalsLeft, flowsRunning int
	// lastProgress is the time of the last event other than a retry.
	lastProgress float64
}

// refCurves are a machine type's reference curves (ok false: use the
// machine's IterationModel instead).
type refCurves struct {
	prompt, token perf.Curve
	penalty       float64
	ok            bool
}

// evaluateCompat runs the compat scheduler (Options.Compat with mixed
// batching).
func evaluateCompat(ctx context.Context, cl Cluster, reqs []traces.Request, opts Options) (*Result, error) {
	s, err := newSim(cl, reqs, opts)
	if err != nil {
		return nil, err
	}
	c := newCompatSim(s)
	if err := c.run(ctx); err != nil {
		return nil, err
	}
	return s.finishResult(), nil
}

func newCompatSim(s *sim) *compatSim {
	c := &compatSim{s: s, maxB: s.opt.MaxBatchRequests, maxT: s.opt.MaxBatchTokens, maxP: int32(s.opt.MaxPreemptions)}
	c.r = make([]cReq, len(s.reqs))
	c.t = make([]cTask, 2*len(s.reqs))
	c.mark = make([]uint32, len(s.reqs))
	for i := range c.r {
		req := &s.reqs[i]
		c.r[i] = cReq{prompt: int32(req.PromptTokens), output: int32(req.OutputTokens),
			promptMem: s.promptKV(req.PromptTokens), tokenMem: s.outputKV(req.OutputTokens)}
	}
	c.in = make([]cInst, len(s.m))
	c.refs = make([]refCurves, len(s.m))
	for i := range s.m {
		m := &s.m[i]
		c.in[i] = cInst{m: m, ev: -1, pool: m.home}
		if m.home != poolBaseline {
			c.pools[m.home] = append(c.pools[m.home], int32(i))
		}
		if rc, ok := m.perf.(perf.ReferenceCurves); ok {
			p, t, pen := rc.ReferenceCurves()
			c.refs[i] = refCurves{prompt: p, token: t, penalty: pen, ok: p.Len() > 0 && t.Len() > 0}
		}
	}
	// The reference schedules every arrival before it starts.
	c.q = newCHeap(len(s.reqs) + 2*len(s.m) + 16)
	for i := range c.r {
		c.q.push(s.reqs[i].Arrival, cevArrival, int32(i))
	}
	c.arrivalsLeft = len(c.r)
	return c
}

// schedule runs fn now when delay is zero (as the reference does) and
// otherwise pushes an event; it returns the event (-1 when run now).
func (c *compatSim) schedule(delay float64, kind uint8, who int32) int32 {
	if delay == 0 {
		c.dispatch(kind, who)
		return -1
	}
	return c.q.push(c.now+delay, kind, who)
}

func (c *compatSim) run(ctx context.Context) error {
	s := c.s
	for n := 1; !s.abort && len(c.q.h) > 0; n++ {
		if n%ctxCheckEvents == 0 {
			if s.opt.Progress != nil {
				s.opt.Progress(c.now)
			}
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		e := c.q.pop()
		if e.deleted {
			continue
		}
		c.now = e.t
		s.out.Events++
		if e.kind != cevFlowRetry {
			c.lastProgress = c.now
		}
		c.dispatch(e.kind, e.who)
	}
	if !s.abort && s.done < len(s.reqs) {
		c.stall()
	}
	return nil
}

// compatStallReason starts the abort reason of a run that stalled.
const compatStallReason = "stalled"

// stall records a run in which nothing is left to happen while requests
// are unfinished: every machine is idle or waiting for memory that its
// over-committed KV-caches hold. The reference simulator stalls the same
// way (its transfers retry forever, its idle machines wait for an event
// that never comes); splitplan reports the load as not sustainable.
func (c *compatSim) stall() {
	s := c.s
	s.abort = true
	s.out.Aborted = true
	s.out.AbortReason = fmt.Sprintf("%s with %d of %d requests unfinished: the machines' memory is over-committed to KV-caches whose decodes cannot start (the reference simulator stalls the same way): the load is not sustainable",
		compatStallReason, len(s.reqs)-s.done, len(s.reqs))
}

func (c *compatSim) dispatch(kind uint8, who int32) {
	switch kind {
	case cevArrival:
		c.arrivalsLeft--
		c.arrive(who)
	case cevIterEnd:
		c.in[who].ev = -1
		c.completeIteration(who)
	case cevFlowDone:
		c.flowDone(who)
	case cevFlowRetry:
		c.flowRetry(who)
	}
}

// taskMem is the KV-cache a task allocates when it starts.
func (c *compatSim) taskMem(t int32) int64 {
	if t&1 == 0 {
		return c.r[t>>1].promptMem
	}
	return c.r[t>>1].tokenMem
}

// tokensPerIter is a task's tokens in an iteration: a prompt its length,
// a decode 1.
func (c *compatSim) tokensPerIter(t int32) int {
	if t&1 == 0 {
		return int(c.r[t>>1].prompt)
	}
	return 1
}

// arrive routes request r (the cluster-level scheduler) and submits its
// prompt task (and its decode, when both run on one machine).
func (c *compatSim) arrive(r int32) {
	s, rq := c.s, &c.r[r]
	var pm, tm int32
	if s.cl.Baseline {
		pm = 0
		for i := 1; i < len(c.in); i++ {
			if c.in[i].schedPending < c.in[pm].schedPending {
				pm = int32(i)
			}
		}
		tm = pm
		c.in[pm].schedPending += int64(rq.prompt) + 1
		c.in[pm].schedMem += rq.promptMem + rq.tokenMem
	} else {
		pm, tm = c.route(rq)
		if pm != tm {
			c.in[pm].schedMem += rq.promptMem
			c.in[tm].schedMem += rq.promptMem + rq.tokenMem
		} else {
			c.in[pm].schedMem += rq.promptMem + rq.tokenMem
		}
		c.in[pm].schedPending += int64(rq.prompt)
		c.in[tm].schedPending++
	}
	rq.pm, rq.tm = pm, tm
	if s.opt.AbortDelayS > 0 {
		if p := c.in[pm].prompts; len(p) > 0 {
			c.checkWait(p[0]>>1, c.now-c.arrival(p[0]>>1), "prompt")
		}
	}
	c.taskArrival(pm, 2*r)
	if pm == tm && rq.output > 1 {
		c.taskArrival(tm, 2*r+1)
	}
}

// route is the reference's mixed-pool cluster scheduler.
func (c *compatSim) route(rq *cReq) (pm, tm int32) {
	need := rq.promptMem + rq.tokenMem
	pm, tm = -1, -1
	for _, pool := range [2]int8{poolPrompt, poolMixed} {
		if m := c.leastPending(pool); m >= 0 {
			in := &c.in[m]
			if !(len(in.pending) > 0 && in.schedPending+int64(rq.prompt) > int64(c.s.opt.PromptQueueTokens)) {
				pm = m
				break
			}
		}
	}
	for _, pool := range [2]int8{poolToken, poolMixed} {
		if m := c.leastMemory(pool); m >= 0 {
			in := &c.in[m]
			if !(in.schedMem+need >= in.m.capacity) {
				tm = m
				break
			}
		}
	}
	if pm < 0 && len(c.pools[poolToken]) > 0 {
		pm = c.leastPending(poolToken)
		c.move(pm, poolMixed)
	}
	if tm < 0 && len(c.pools[poolPrompt]) > 0 {
		tm = c.leastMemory(poolPrompt)
		c.move(tm, poolMixed)
	}
	if pm < 0 || tm < 0 {
		pm = -1
		for _, pool := range [3]int8{poolPrompt, poolMixed, poolToken} {
			for _, id := range c.pools[pool] {
				if pm < 0 || c.in[id].schedPending < c.in[pm].schedPending {
					pm = id
				}
			}
		}
		tm = pm
	}
	rq.borrowed = c.in[pm].pool == poolMixed || c.in[tm].pool == poolMixed
	return pm, tm
}

func (c *compatSim) leastPending(pool int8) int32 {
	return leastOf(c.pools[pool], func(id int32) int64 { return c.in[id].schedPending })
}

func (c *compatSim) leastMemory(pool int8) int32 {
	return leastOf(c.pools[pool], func(id int32) int64 { return c.in[id].schedMem })
}

// move takes machine id out of its pool and appends it to pool to.
func (c *compatSim) move(id int32, to int8) {
	in := &c.in[id]
	p := c.pools[in.pool]
	for i, x := range p {
		if x == id {
			c.pools[in.pool] = append(p[:i], p[i+1:]...)
			break
		}
	}
	c.pools[to] = append(c.pools[to], id)
	in.pool = to
	in.m.moves++
	c.s.out.PoolMoves++
}

// notifyFree returns an idle mixed-pool machine to its home pool.
func (c *compatSim) notifyFree(id int32) {
	if in := &c.in[id]; in.pool == poolMixed {
		c.move(id, in.m.home)
	}
}

// taskArrival is a task arriving at machine id: it joins the machine's
// queues; an idle machine starts if the task's memory fits; a busy one
// cuts its run when the task fits the token budget.
func (c *compatSim) taskArrival(id, t int32) {
	in := &c.in[id]
	c.t[t].state = ctQueued
	c.addToPool(id, t)
	c.addPending(id, t, false)
	if len(in.batch) == 0 {
		if in.used+c.taskMem(t) > in.m.capacity {
			return
		}
		c.startIteration(id)
		return
	}
	if len(in.batch) < c.maxB && in.batchTokens+c.tokensPerIter(t) <= c.maxT {
		c.pause(id)
		return
	}
	if t&1 == 0 {
		decodes := len(in.batch) - in.nPrompt
		if in.nPrompt < len(in.batch) && in.batchTokens-decodes+int(c.r[t>>1].prompt) <= c.maxT {
			c.pause(id)
		}
	}
}

// addToPool adds t's request to the machine's pending requests unless
// another of its tasks is there (its prompt, for a decode on the same
// machine).
func (c *compatSim) addToPool(id, t int32) {
	r := t >> 1
	rq := &c.r[r]
	if t&1 == 1 && rq.pm == id && c.t[2*r].state != ctCompleted {
		return
	}
	in := &c.in[id]
	a := c.arrival(r)
	i := sort.Search(len(in.reqs), func(k int) bool { return a < c.arrival(in.reqs[k]) }) // bisect_right
	in.reqs = append(in.reqs, 0)
	copy(in.reqs[i+1:], in.reqs[i:])
	in.reqs[i] = r
}

// removeFromPool drops completed task t's request from the machine's
// pending requests when it has no other task there.
func (c *compatSim) removeFromPool(id, t int32) {
	r := t >> 1
	rq := &c.r[r]
	if t&1 == 0 && rq.tm == id && rq.output > 1 {
		return // its decode is queued here
	}
	in := &c.in[id]
	a := c.arrival(r)
	i := sort.Search(len(in.reqs), func(k int) bool { return c.arrival(in.reqs[k]) >= a })
	for ; i < len(in.reqs); i++ {
		if in.reqs[i] == r {
			in.reqs = append(in.reqs[:i], in.reqs[i+1:]...)
			return
		}
	}
}

// arrival is request r's arrival time (kept once, in the trace).
func (c *compatSim) arrival(r int32) float64 { return c.s.reqs[r].Arrival }

// firstTask is request r's first task at machine id (its prompt until
// that completes).
func (c *compatSim) firstTask(id, r int32) int32 {
	if c.r[r].pm == id && c.t[2*r].state != ctCompleted {
		return 2 * r
	}
	return 2*r + 1
}

// pendLess is the pending queue's key comparison: (preemptions, arrival)
// of task a before that of task b, read now.
func (c *compatSim) pendLess(a, b int32) bool {
	na, nb := c.t[a].np, c.t[b].np
	if na != nb {
		return na < nb
	}
	return c.arrival(a>>1) < c.arrival(b>>1)
}

// addPending inserts t into the pending queue by the reference's binary
// search (bisect.insort, right), whose comparisons read the queued tasks'
// current preemption counts; a preempted decode also joins the blocked
// queue and a prompt the prompt queue.
func (c *compatSim) addPending(id, t int32, preempted bool) {
	in := &c.in[id]
	lo, hi := 0, len(in.pending)
	for lo < hi {
		mid := (lo + hi) / 2
		if c.pendLess(t, in.pending[mid]) {
			hi = mid
		} else {
			lo = mid + 1
		}
	}
	in.pending = append(in.pending, 0)
	copy(in.pending[lo+1:], in.pending[lo:])
	in.pending[lo] = t
	if preempted {
		in.blocked = append(in.blocked, t)
	}
	if t&1 == 0 {
		in.prompts = append(in.prompts, t)
	}
}

// removeFirst removes the first occurrence of t from q, keeping the order.
func removeFirst(q []int32, t int32) []int32 {
	for i, x := range q {
		if x == t {
			return append(q[:i], q[i+1:]...)
		}
	}
	return q
}

// removePending removes t from the pending queues.
func (c *compatSim) removePending(id, t int32) {
	in := &c.in[id]
	in.pending = removeFirst(in.pending, t)
	if c.t[t].state == ctBlocked {
		in.blocked = removeFirst(in.blocked, t)
	}
	if t&1 == 0 {
		in.prompts = removeFirst(in.prompts, t)
	}
}

// startIteration forms machine id's next batch and schedules the end of
// its run (the reference's start_iteration and select_batch).
func (c *compatSim) startIteration(id int32) {
	in := &c.in[id]
	c.stamp++
	stamp := c.stamp
	for _, t := range in.batch {
		c.t[t].old = stamp
	}
	next := in.spare[:0]
	tokens := 0
	mem := in.used
	capacity := in.m.capacity
	add := func(t int32) {
		next = append(next, t)
		c.mark[t>>1] = stamp
		c.t[t].sel = stamp
		tokens += c.tokensPerIter(t)
	}
	// (1) starvation guard: the pending queue's front, while starved.
	for _, t := range in.pending {
		if c.t[t].np < c.maxP {
			break
		}
		if len(next) == c.maxB || len(next) > 0 && tokens+c.tokensPerIter(t) > c.maxT {
			break
		}
		if c.mark[t>>1] == stamp {
			continue
		}
		if c.t[t].state == ctBlocked {
			add(t)
			continue
		}
		if m := c.taskMem(t); m+mem <= capacity {
			add(t)
			mem += m
		}
	}
	// (2) waiting prompts, the first whatever its length.
	for _, t := range in.prompts {
		if len(next) == c.maxB || len(next) > 0 && tokens+c.tokensPerIter(t) > c.maxT {
			break
		}
		if c.mark[t>>1] == stamp {
			continue
		}
		m := c.taskMem(t)
		if m+mem > capacity {
			break
		}
		add(t)
		mem += m
	}
	// (3) preempted decodes, then (4) the previous batch.
	for _, list := range [2][]int32{in.blocked, in.batch} {
		for _, t := range list {
			if len(next) == c.maxB || len(next) > 0 && tokens+1 > c.maxT {
				break
			}
			if c.mark[t>>1] == stamp {
				continue
			}
			add(t)
		}
	}
	// (5) the first task of every other pending request.
	for _, r := range in.reqs {
		if len(next) == c.maxB {
			break
		}
		if c.mark[r] == stamp {
			continue
		}
		t := c.firstTask(id, r)
		if len(next) > 0 && tokens+c.tokensPerIter(t) > c.maxT {
			break
		}
		if c.t[t].state == ctBlocked {
			add(t)
			continue
		}
		m := c.taskMem(t)
		if m+mem > capacity {
			break
		}
		add(t)
		mem += m
	}
	in.batchTokens = tokens

	// The kept tasks of the previous batch first, in their order; the
	// others are preempted; then the new tasks in the order taken.
	batch := c.scratch[:0]
	for _, t := range in.batch {
		if c.t[t].sel == stamp {
			batch = append(batch, t)
			continue
		}
		c.t[t].state = ctBlocked
		c.addPending(id, t, true)
	}
	in.nPrompt = 0
	for _, t := range next {
		if c.t[t].old != stamp {
			c.removePending(id, t)
			batch = append(batch, t)
		}
	}
	for _, t := range batch {
		if t&1 == 0 {
			in.nPrompt++
		}
	}
	// in.batch's storage becomes the scratch of the next formation.
	c.scratch, in.batch, in.spare = in.batch[:0], batch, next[:0]
	// Every pending request left out counts one preemption on its first task.
	for _, r := range in.reqs {
		t := c.firstTask(id, r)
		if c.t[t].sel != stamp {
			c.t[t].np++
			c.r[r].preempts++
		}
	}
	if len(in.batch) == 0 {
		if len(in.reqs) == 0 {
			c.notifyFree(id)
		}
		return
	}
	in.iterDur, in.extrap = c.iterationDuration(id)
	n := int32(1)
	if in.nPrompt == 0 {
		n = math.MaxInt32
		for _, t := range in.batch {
			if left := c.r[t>>1].output - 1 - c.t[t].generated; left < n {
				n = left
			}
		}
	}
	in.iters = float64(n)
	for _, t := range in.batch {
		ts := &c.t[t]
		ts.generating = n
		switch ts.state {
		case ctQueued:
			c.runTask(id, t)
		case ctBlocked:
			ts.state = ctRunning
		}
	}
	in.runStart = c.now
	in.ev = c.schedule(in.iterDur*in.iters, cevIterEnd, id)
}

// runTask starts task t on machine id: it allocates its KV-cache.
func (c *compatSim) runTask(id, t int32) {
	in, rq := &c.in[id], &c.r[t>>1]
	c.t[t].state = ctRunning
	m := c.taskMem(t)
	in.used += m
	rq.mem += m
	if in.used > in.m.peak {
		in.m.peak = in.used
	}
	r := t >> 1
	if t&1 == 0 {
		rq.promptStart = c.now
		c.checkWait(r, c.now-c.arrival(r), "prompt")
	} else {
		rq.decodeStart = c.now
		c.checkWait(r, c.now-rq.decodeReady, "decode")
	}
}

// iterationDuration is the reference's iteration time of machine id's
// batch: the prompt curve at the batch's tokens for a prompt-only batch,
// the token curve at the number of decodes for a decode-only one, the
// prompt curve times the penalty for a mixed one.
func (c *compatSim) iterationDuration(id int32) (float64, bool) {
	in := &c.in[id]
	tokens := in.batchTokens // the batch's tokens, counted as it was formed
	decodes := len(in.batch) - in.nPrompt
	rc := &c.refs[id]
	var d float64
	var ex bool
	switch {
	case !rc.ok:
		d, ex = iterTime(in.m.perf, tokens-decodes, decodes, 0)
	case decodes == 0:
		d, ex = refInterp(rc.prompt, float64(tokens))
	case in.nPrompt == 0:
		d, ex = refInterp(rc.token, float64(tokens))
	default:
		d, ex = refInterp(rc.prompt, float64(tokens))
		d *= rc.penalty
	}
	if !(d > 0) || math.IsInf(d, 0) {
		// The reference asserts a positive time; keep time moving forward
		// rather than loop forever.
		d = perf.MinSeconds
	}
	return d, ex
}

// refInterp evaluates curve c at x as scipy's interp1d (linear, extrapolating)
// does: the segment found by a left binary search clipped to the ends,
// slope × (x − x_lo) + y_lo.
func refInterp(c perf.Curve, x float64) (float64, bool) {
	n := len(c.X)
	if n == 1 {
		return c.Y[0], x != c.X[0]
	}
	i := sort.SearchFloat64s(c.X, x)
	i = min(max(i, 1), n-1)
	x0, x1, y0, y1 := c.X[i-1], c.X[i], c.Y[i-1], c.Y[i]
	slope := (y1 - y0) / (x1 - x0)
	return float64(slope*(x-x0)) + y0, x < c.X[0] || x > c.X[n-1]
}

// pyFloorDiv is Python's float floor division a // b (b > 0).
func pyFloorDiv(a, b float64) float64 {
	mod := math.Mod(a, b)
	div := (a - mod) / b
	if mod != 0 && (b < 0) != (mod < 0) {
		div--
	}
	if div == 0 {
		return math.Copysign(0, a/b)
	}
	f := math.Floor(div)
	if div-f > 0.5 {
		f++
	}
	return f
}

// pause cuts machine id's decode run at its next iteration boundary (the
// reference's pause_iteration; once per run).
func (c *compatSim) pause(id int32) {
	in := &c.in[id]
	if in.pausing || in.nPrompt > 0 || in.ev < 0 {
		return
	}
	in.pausing = true
	oldT := c.q.ev[in.ev].t
	start := oldT - in.iterDur*in.iters
	elapsed := c.now - start
	n := pyFloorDiv(c.now-start, in.iterDur) + 1
	in.iters = n
	for _, t := range in.batch {
		c.t[t].generating = int32(n)
	}
	remaining := in.iterDur*n - elapsed
	c.q.cancel(in.ev)
	in.ev = -1
	// The reference reschedules at clock + remaining; a run that already
	// ended (remaining 0) completes now.
	if ev := c.schedule(remaining, cevIterEnd, id); ev >= 0 && in.ev < 0 {
		in.ev = ev
	}
}

// completeIteration ends machine id's run: its tasks advance, completed
// ones leave, and the next batch is formed.
func (c *compatSim) completeIteration(id int32) {
	in := &c.in[id]
	m := in.m
	k := int(in.iters)
	d := in.iterDur
	// Energy as the reference times it: no context (energy.go). Every
	// prompt task has at least one token, so prompt tokens > 0 iff the
	// batch holds a prompt.
	decodes := len(in.batch) - in.nPrompt
	c.s.recordRun(m, in.batchTokens-decodes, decodes, 0, k, d, c.now-in.runStart, in.extrap)
	firstEnd := in.runStart + d
	fromStart, gaps := 0, 0 // decodes whose last token came at the run's start; later gaps
	done := c.scratch[:0]
	for _, t := range in.batch {
		ts := &c.t[t]
		ts.generated += ts.generating
		ts.generating = 0
		rq := &c.r[t>>1]
		if t&1 == 0 {
			if ts.generated == 1 {
				done = append(done, t)
			}
			continue
		}
		g := firstEnd - rq.lastToken
		if rq.lastToken == in.runStart {
			fromStart++ // (the usual case: counted after the loop)
		} else {
			c.s.gap(g)
		}
		gaps += k - 1
		if g > rq.maxGap {
			rq.maxGap = g
		}
		if k > 1 && d > rq.maxGap {
			rq.maxGap = d
		}
		rq.lastToken = c.now
		if ts.generated >= rq.output-1 {
			done = append(done, t)
		}
	}
	c.s.gaps(firstEnd-in.runStart, fromStart)
	c.s.gaps(d, gaps)
	if len(done) > 0 {
		keep := in.batch[:0]
		j := 0
		for _, t := range in.batch {
			if j < len(done) && done[j] == t {
				j++
				continue
			}
			keep = append(keep, t)
		}
		in.batch = keep
		in.nPrompt = 0
		for _, t := range keep {
			if t&1 == 0 {
				in.nPrompt++
			}
		}
		// Completions form no batch (a transfer or a retry is scheduled
		// ahead), so done (c.scratch's storage) stays intact.
		for _, t := range done {
			c.taskCompletion(id, t)
		}
	}
	in.pausing = false
	c.startIteration(id)
}

// taskCompletion completes task t on machine id.
func (c *compatSim) taskCompletion(id, t int32) {
	in, r := &c.in[id], t>>1
	rq := &c.r[r]
	c.t[t].state = ctCompleted
	c.removeFromPool(id, t)
	if t&1 == 1 {
		in.schedPending--
		in.used -= rq.mem
		in.schedMem -= rq.mem
		rq.mem = 0
		c.finish(r)
		return
	}
	in.schedPending -= int64(rq.prompt)
	rq.firstToken, rq.lastToken = c.now, c.now
	switch {
	case rq.output == 1:
		// The default rule (the reference crashes on such requests once
		// a run is cut): done with the prompt, nothing transferred.
		in.used -= rq.mem
		in.schedMem -= rq.mem
		rq.mem = 0
		tm := &c.in[rq.tm]
		if rq.tm != id {
			tm.schedMem -= rq.promptMem
		}
		tm.schedPending--
		c.finish(r)
	case rq.tm == id:
		rq.decodeReady = c.now // its decode is queued here already
	default:
		rq.xfer = float64(int64(rq.prompt)*c.s.kv) / c.s.opt.CompatBandwidthBytesPerS
		rq.decodeReady = c.now + rq.xfer
		c.flowArrival(r)
	}
}

// flowArrival submits r's KV transfer: it starts when the destination's
// allocated memory has room for the request's KV-cache, else it retries.
func (c *compatSim) flowArrival(r int32) {
	rq := &c.r[r]
	dst := &c.in[rq.tm]
	if dst.used+rq.mem <= dst.m.capacity {
		c.runFlow(r)
		return
	}
	c.schedule(compatRetryS, cevFlowRetry, r)
}

func (c *compatSim) flowRetry(r int32) {
	rq := &c.r[r]
	if rq.flowRunning {
		return
	}
	dst := &c.in[rq.tm]
	if dst.used+rq.mem <= dst.m.capacity {
		c.runFlow(r)
		return
	}
	if c.stuck() {
		return
	}
	c.schedule(compatRetryS, cevFlowRetry, r)
}

// stuck reports, and records as a stall, a simulation that can no longer
// change: no arrival, transfer or run is left, only transfers retrying
// for memory that nothing will free.
func (c *compatSim) stuck() bool {
	if c.arrivalsLeft > 0 || c.flowsRunning > 0 || c.now-c.lastProgress <= compatRetryS {
		return false // every waiting transfer has tried since the last change
	}
	for i := range c.in {
		if c.in[i].ev >= 0 {
			return false
		}
	}
	c.stall()
	return true
}

func (c *compatSim) runFlow(r int32) {
	rq := &c.r[r]
	rq.flowRunning = true
	rq.transferred = true
	c.flowsRunning++
	dst := &c.in[rq.tm]
	dst.used += rq.mem
	if dst.used > dst.m.peak {
		dst.m.peak = dst.used
	}
	c.s.out.Transfers++
	c.schedule(rq.xfer, cevFlowDone, r)
}

// flowDone frees the source's copy, submits the decode to its machine,
// then wakes the source (the reference's NOTIFY).
func (c *compatSim) flowDone(r int32) {
	rq := &c.r[r]
	c.flowsRunning--
	src := &c.in[rq.pm]
	src.used -= rq.mem
	src.schedMem -= rq.mem
	c.taskArrival(rq.tm, 2*r+1)
	c.notifyFlowCompletion(rq.pm)
}

// notifyFlowCompletion: an idle source starts if its pending queue's
// first task fits; a busy one cuts its run when its batch has room.
func (c *compatSim) notifyFlowCompletion(id int32) {
	in := &c.in[id]
	if len(in.pending) == 0 {
		return
	}
	if len(in.batch) == 0 {
		if in.used+c.taskMem(in.pending[0]) > in.m.capacity {
			return
		}
		c.startIteration(id)
		return
	}
	if len(in.batch) < c.maxB && in.batchTokens < c.maxT {
		c.pause(id)
	}
}

// checkWait aborts the simulation when request r has waited longer than
// Options.AbortDelayS for its prompt or its decode to start.
func (c *compatSim) checkWait(r int32, wait float64, what string) {
	if c.s.waitedTooLong(wait) {
		c.s.abortWaited(r, wait, what)
	}
}

// finish records request r, done now.
func (c *compatSim) finish(r int32) {
	s, rq := c.s, &c.r[r]
	s.done++
	req := &s.reqs[r]
	arrival := req.Arrival
	e2e := c.now - arrival
	ttft := rq.firstToken - arrival
	rr := RequestResult{
		ID: req.ID, ArrivalS: arrival, PromptTokens: req.PromptTokens, OutputTokens: req.OutputTokens,
		QueueS: rq.promptStart - arrival, TTFTS: ttft, E2ES: e2e,
		SchedDelayS:   rq.promptStart - arrival,
		TBTReferenceS: RequestLatency{TTFTS: ttft, E2ES: e2e, OutputTokens: rq.output}.TBTReference(),
		MaxGapS:       rq.maxGap,
		PromptMachine: int(rq.pm), TokenMachine: int(rq.tm),
		Transferred: rq.transferred, TransferS: rq.xfer, Borrowed: rq.borrowed, Preemptions: int(rq.preempts),
	}
	if rq.output > 1 {
		rr.TBTS = RequestLatency{TTFTS: ttft, E2ES: e2e, OutputTokens: rq.output}.TBT()
		rr.SchedDelayS += rq.decodeStart - rq.decodeReady
	}
	if rr.Preemptions > 0 {
		s.out.Preempted++
	}
	if rr.Borrowed {
		s.out.Borrowed++
	}
	s.record(r, &rr)
	if c.now > s.out.EndS {
		s.out.EndS = c.now
	}
}
