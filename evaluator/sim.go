package evaluator

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math"
	"math/bits"
	"slices"
	"splitplan/internal/quantile"

	"splitplan/costpower"
	"splitplan/evaluator/perf"
	"splitplan/evaluator/perf/power"
	"splitplan/internal/prefault"
	"splitplan/traces"
)

// Request phases.
const (
	phWaiting  uint8 = iota // prompt queued at its prompt machine
	phPrompt                // prompt in a running iteration
	phTransfer              // waiting for, or in, its KV-cache transfer
	phQueued                // decode queued at its token machine
	phDecoding              // decoding (in a batch, or preempted)
	phDone
)

// Pool indices.
const (
	poolPrompt int8 = iota
	poolToken
	poolMixed
	poolBaseline
)

// UnservableError reports a request that no machine of the cluster can
// hold: its KV-cache alone is larger than a machine's capacity.
type UnservableError struct {
	// RequestID is the request's ID (its row in the workload, from 0).
	RequestID int
	// PromptTokens and OutputTokens are its sizes.
	PromptTokens, OutputTokens int
	// Machine names the machine type that cannot hold it.
	Machine string
	// CapacityTokens is that machine type's KV-cache capacity in tokens.
	CapacityTokens int64
}

func (e *UnservableError) Error() string {
	return fmt.Sprintf("request %d is unservable: its prompt (%d tokens) and output (%d tokens) need more KV-cache than a %s holds (%d tokens)",
		e.RequestID, e.PromptTokens, e.OutputTokens, e.Machine, e.CapacityTokens)
}

// reqState is a live request's progress. The simulator keeps one per
// request from its arrival to its end, in a slot of sim.st that the next
// arrival reuses; queues, batches and events name requests by slot.
type reqState struct {
	// Hot: read on every batch formation and iteration end; kept in the
	// first 64 bytes so one cache line serves the scheduler's loops.
	lastToken, maxGap                 float64
	promptKV, outputKV                int64
	prompt, output                    int32
	generated                         int32
	tm                                int32
	preempt                           int32
	mark                              uint32 // batch-formation stamp
	phase                             uint8
	outputHeld, transferred, borrowed bool
	req                               int32 // the request's index in the workload

	// Cold: written once or twice per request, or read only while its
	// prompt runs.
	arrival, promptStart, firstToken, xfer float64
	decodeReady, decodeStart               float64
	pm                                     int32
	// preemptTotal counts the left-outs of both tasks (preempt is the
	// current task's, as the reference counts them).
	preemptTotal     int32
	prefilled, chunk int32 // prompt tokens done; in the running iteration
}

// machine is one machine's scheduler state.
type machine struct {
	id       int32
	typ      *costpower.Machine
	perf     perf.IterationModel
	home     int8
	pool     int8
	capacity int64 // KV-cache bytes
	used     int64 // KV-cache bytes reserved (what the reference counts)
	// committed is used plus the output KV-cache promised to requests
	// whose decoding will start here; admission checks it, so a started
	// request can always finish (no memory deadlock).
	committed int64
	// The cluster scheduler's view of the machine is in sim.load[id].

	queue     []int32 // tasks that have not started here, in arrival order
	preempted []int32 // decodes left out of a batch
	batch     []int32 // the running batch
	spare     []int32
	waitXfer  []int32 // transfers in, waiting for memory (FIFO)

	busy bool
	// calm reports, while endRun has the next batch formed, that no task
	// of the previous one is starved (left out MaxPreemptions times).
	calm       bool
	runStart   float64
	iterDur    float64
	runIters   int
	runPrompts int // prompt tokens in the running iteration
	runDecodes int
	runExtrap  bool
	ver        uint32
	busyS      float64
	iters      [3]int64 // prompt, decode, mixed
	moves      int
	peak       int64
	// batchTokensS[n] is the time spent on iterations of n batched tokens.
	batchTokensS []float64
	// budget and limitS are the sarathi policy's token budget and
	// iteration-time limit (0: none) on this machine.
	budget int
	limitS float64
	// pw is the machine type's power model (nil: no energy); energyJ the
	// energy of its runs so far; runCtx the running decodes' context.
	pw      *power.Model
	energyJ float64
	runCtx  int64

	// Lazy decode progress. A run that ends with only started decodes in
	// its batch, nothing preempted and only decodes queued here runs the
	// same batch again, the queued decodes added (endRun's fast path).
	// While such runs follow each other (lazy), a member's generated,
	// lastToken and maxGap stay as they were when it entered them, at
	// decIters c0 = doneAt[i] − output + generated, and are brought up to
	// date when it leaves: it has run decIters − c0 more iterations, the
	// last ending now, and its largest gap since is gaps.since(c0). A run
	// end touches only the members that finish and the decodes that join.
	lazy bool
	// decIters counts the iterations of the machine's lazy runs.
	decIters int32
	// doneAt[i] is the decIters at which batch[i] will have generated its
	// whole output (lazy runs); minDone is the least of them.
	doneAt, doneSpare []int32
	minDone           int32
	// lazyPrompts counts the prompts in a lazy batch (see mixedJoin).
	lazyPrompts int
	// lazyStarved counts the starved decodes (left out MaxPreemptions
	// times) of a lazy batch under mixed batching: a prefix of the batch,
	// where the policy's starvation guard would put them, and no more
	// while the runs stay lazy (nothing is left out then).
	lazyStarved int
	// lazyCtx is the context (prompt and generated tokens) of the batch's
	// decodes during lazy runs.
	lazyCtx int64
	gaps    gapMax
	// firstGaps counts the decodes of the running lazy run whose first
	// gap foldFirstGaps counted (they joined it); its end counts the
	// first gap of the others, from the run's start.
	firstGaps int
}

// gapMax answers, for a sequence of runs, the largest gap between tokens
// of the runs since a point: it keeps (decIters after the run, the run's
// gap) of each run whose gap is larger than every later run's, so the
// gaps kept decrease and the first kept after a point is the largest
// since (max is exact: no sum, no rounding).
type gapMax struct {
	at []int32
	g  []float64
}

func (q *gapMax) reset() {
	q.at, q.g = q.at[:0], q.g[:0]
}

// add appends a run that ended at decIters at with largest gap g.
func (q *gapMax) add(at int32, g float64) {
	n := len(q.g)
	for n > 0 && q.g[n-1] <= g {
		n--
	}
	q.at = append(q.at[:n], at)
	q.g = append(q.g[:n], g)
}

// since is the largest gap of the runs that ended after decIters c0, −Inf
// when none did.
func (q *gapMax) since(c0 int32) float64 {
	// The first kept run ending after c0 (at increases) is in
	// [lo, lo+size]; the steps are taken by multiplication, which the
	// compiler turns into conditional moves, not branches to guess.
	at := q.at
	if len(at) > 0 && at[0] > c0 {
		return q.g[0] // every kept run ended after c0 (the usual case)
	}
	lo, size := 0, len(at)
	for size > 1 {
		half := size >> 1
		le := 0
		if at[lo+half-1] <= c0 {
			le = 1
		}
		lo += half * le
		size -= half
	}
	if lo < len(at) && at[lo] <= c0 {
		lo++
	}
	if lo == len(at) {
		return math.Inf(-1)
	}
	return q.g[lo]
}

type sim struct {
	cl  Cluster
	opt Options
	// quarter holds the ends of the first and the start of the last
	// quarter of the arrivals' span (Options.Streamed: Summary's waits).
	quarter [2]float64
	reqs    []traces.Request
	// st holds the live requests' states; free lists its free slots.
	st   []reqState
	free []int32
	m    []machine
	// load[i] is machine i's load as the cluster scheduler sees it, kept
	// apart from the machines so that its scans over a pool stay in a
	// few cache lines.
	load []machineLoad
	// unloaded has bit id set when machine id has no pending tokens
	// (load[id][byPending] == 0): the least-pending machine of a pool then
	// is its first such machine, found a word at a time.
	unloaded []uint64
	// pools[p] lists pool p's machines in the pool's order (a baseline's
	// every machine in pools[poolBaseline]).
	pools [4][]int32
	// inOrder[p] reports that pools[p] lists consecutive ids, as it does
	// until a machine moves: its scans then read load directly.
	inOrder [4]bool
	// indexed[p] reports that pool p, of indexMin machines or more,
	// keeps its blocks' least loads in blocks (loadindex.go), which
	// leastLoaded reads instead of scanning the pool; anyIndexed reports
	// some pool indexed.
	indexed    [4]bool
	anyIndexed bool
	q          eventQueue
	stamp      uint32
	out        *Result
	done       int
	// policy is the batching policy of baseline and mixed-pool machines;
	// mixed reports that it is mixed batching (as policyFor is then for
	// every machine).
	policy batchPolicy
	mixed  bool
	// abort is set when a wait exceeded Options.AbortDelayS, or when
	// Options.Stop stops the run.
	abort bool
	// stop is the progress against Options.Stop (nil without); the event
	// loop looks at it at most every stopCheckEvents events (checkStop).
	stop *stopState
	// kv is the KV-cache size of one token in bytes.
	kv int64
	// fin is finishLazy's list of the members that finish; joining
	// mixedJoin's of the queued decodes that join.
	fin, joining []int32
	// onStopCheck, when set (by the tests), is told at every check of
	// Options.Stop of each live request and its latency bounds.
	onStopCheck func(st *reqState, ttft, e2e float64)
	// onRun, when set (by the tests), is told of every run started, its
	// batch in m.batch in order.
	onRun func(m *machine, now float64)
	// lazyStarvedStarts counts the lazy runs started with starved decodes
	// (for the tests: the equivalence test checks it exercises them).
	lazyStarvedStarts int
	// starvedPromptJoins counts the joins (mixedJoin) that took or left
	// out starved prompts (for the tests, likewise).
	starvedPromptJoins int
	// base reports a baseline design (cl.Design.IsBaseline, read at every
	// arrival: the method copies the design to answer).
	base bool
	// links[a][b] is costpower.LinkBetween of machine types a and b (0:
	// the prompt machines' type, 1: the token machines'); in compat mode
	// every link has Options.CompatBandwidthBytesPerS.
	links [2][2]struct{ bytesPerS, layerwiseS float64 }
	// layerwiseFrom is the smallest prompt whose transfer goes layer by
	// layer (transferTime): every prompt, none, or from
	// Options.LayerwiseMinPromptTokens, as Options.Transfer says.
	layerwiseFrom int
	blocks        blockIndex
}

// Evaluate simulates cluster cl serving reqs (sorted by arrival) and
// returns what every request and machine did. It is deterministic: the
// same inputs give the same result. It is EvaluateContext without a
// context.
func Evaluate(cl Cluster, reqs []traces.Request, opts Options) (*Result, error) {
	return EvaluateContext(context.Background(), cl, reqs, opts)
}

// ctxCheckEvents is how many events the event loop handles between two
// looks at its context: a few milliseconds of simulation at most.
const ctxCheckEvents = 1 << 12

// EvaluateContext is Evaluate stopping, with ctx's error and no result,
// soon after ctx is done (it looks every ctxCheckEvents events). A
// machine type whose tensor parallelism is below its GPUs is simulated as
// its replicas (Cluster.Simulated): the result's machines are replicas.
func EvaluateContext(ctx context.Context, cl Cluster, reqs []traces.Request, opts Options) (*Result, error) {
	if err := ctx.Err(); err != nil {
		// Done already: a search's queued simulations stop here, before
		// the setup (each machine's memory plan) that precedes the
		// event loop's first look at ctx.
		return nil, err
	}
	cl = cl.Simulated() // a machine serving several replicas runs them as machines
	if opts.Compat && cl.Policy.IsDefault() {
		return evaluateCompat(ctx, cl, reqs, opts) // compat.go
	}
	s, err := newSim(cl, reqs, opts)
	if err != nil {
		return nil, err
	}
	if err := s.run(ctx); err != nil {
		return nil, err
	}
	return s.finishResult(), nil
}

// checkWait aborts the simulation when the request of state st has
// waited, at now, longer than Options.AbortDelayS for its task to start:
// its decode, since it was ready to decode, when its phase is decoding,
// else its prompt, since it arrived. It inlines to one test of the option
// at every start of a prompt or a decode; the rest (lateWait) runs only
// with a limit set.
func (s *sim) checkWait(st *reqState, now float64) {
	if s.opt.AbortDelayS > 0 {
		s.lateWait(st, now)
	}
}

// lateWait is checkWait with a limit set.
func (s *sim) lateWait(st *reqState, now float64) {
	what, wait := "prompt", now-st.arrival
	if st.phase == phDecoding {
		what, wait = "decode", now-st.decodeReady
	}
	if s.waitedTooLong(wait) {
		s.abortWaited(st.req, wait, what)
	}
}

// waitedTooLong reports whether a wait of wait seconds for a phase to
// start aborts a simulation that has not aborted yet.
func (s *sim) waitedTooLong(wait float64) bool {
	return s.opt.AbortDelayS > 0 && wait > s.opt.AbortDelayS && !s.abort
}

// abortWaited aborts the simulation because request i of the trace waited
// wait seconds for its what ("prompt" or "decode") to start.
func (s *sim) abortWaited(i int32, wait float64, what string) {
	s.abort = true
	s.out.Aborted = true
	s.out.AbortReason = fmt.Sprintf("request %d waited %.1f s for its %s to start (more than %g s): the load is not sustainable",
		s.reqs[i].ID, wait, what, s.opt.AbortDelayS)
}

func newSim(cl Cluster, reqs []traces.Request, opts Options) (*sim, error) {
	opts = opts.withDefaults()
	if err := opts.validate(); err != nil {
		return nil, err
	}
	if cl.PromptPerf == nil || cl.TokenPerf == nil {
		return nil, errors.New("cluster has no performance model")
	}
	base := cl.Design.IsBaseline()
	if cl.Prompt <= 0 || (!base && cl.Token <= 0) || (base && cl.Token != 0) {
		return nil, fmt.Errorf("%s: needs positive machine counts (got %d prompt, %d token)", cl.Design.Name, cl.Prompt, cl.Token)
	}
	if len(reqs) == 0 {
		return nil, errors.New("the workload has no requests")
	}
	if err := cl.Policy.validate(); err != nil {
		return nil, err
	}
	s := &sim{cl: cl, opt: opts, reqs: reqs, policy: policyTable[cl.Policy.Kind].p, base: base}
	_, s.mixed = s.policy.(mixedPolicy)
	if st := opts.Stop; st != nil && len(st.Limits) > 0 {
		if err := st.validate(len(reqs)); err != nil {
			return nil, err
		}
		s.stop = newStopState(st)
	}
	if err := s.init(); err != nil {
		return nil, err
	}
	if err := s.setBudgets(); err != nil {
		return nil, err
	}
	return s, nil
}

func (s *sim) init() error {
	kv := s.cl.Model.KVBytesPerToken(s.opt.Compat)
	s.kv = kv
	capOf := func(mc *costpower.Machine) int64 {
		if s.opt.KVCapacityTokens > 0 {
			return s.opt.KVCapacityTokens * kv
		}
		return s.cl.Model.KVCapacityBytes(*mc, s.opt.Compat)
	}
	pt, tt := &s.cl.PromptType, &s.cl.TokenType
	for a, ma := range []*costpower.Machine{pt, tt} {
		for b, mb := range []*costpower.Machine{pt, tt} {
			l := &s.links[a][b]
			l.bytesPerS, l.layerwiseS = costpower.LinkBetween(*ma, *mb)
			if s.opt.Compat {
				l.bytesPerS = s.opt.CompatBandwidthBytesPerS // (the reference's one bandwidth)
			}
		}
	}
	switch {
	case s.opt.Compat:
		s.layerwiseFrom = math.MaxInt
	case s.opt.Transfer == TransferLayerwise:
		s.layerwiseFrom = 0
	case s.opt.Transfer == TransferAuto:
		s.layerwiseFrom = s.opt.LayerwiseMinPromptTokens
	default: // serialized
		s.layerwiseFrom = math.MaxInt
	}
	for _, mc := range []*costpower.Machine{pt, tt} {
		if !s.opt.Compat && s.opt.KVCapacityTokens == 0 {
			if _, err := s.cl.Model.Memory(*mc); err != nil {
				return fmt.Errorf("machine type %s: %w", mc.Name, err) // the sizes, from the memory model
			}
		}
		if capOf(mc) <= 0 {
			return fmt.Errorf("%s (%d bytes of weights) does not fit in a %s (%d bytes of GPU memory)",
				s.cl.Model.Name, s.cl.Model.WeightBytes, mc.Name, mc.MemoryBytes())
		}
	}
	n := s.cl.Prompt + s.cl.Token
	s.m = make([]machine, n)
	s.load = make([]machineLoad, n)
	s.unloaded = make([]uint64, (n+63)/64)
	for i := range n {
		s.unloaded[i>>6] |= 1 << (i & 63)
	}
	for i := range s.m {
		m := &s.m[i]
		m.id = int32(i)
		if i < s.cl.Prompt {
			m.typ, m.perf, m.home, m.pw = pt, s.cl.PromptPerf, poolPrompt, s.cl.PromptPower
		} else {
			m.typ, m.perf, m.home, m.pw = tt, s.cl.TokenPerf, poolToken, s.cl.TokenPower
		}
		if !s.opt.Energy {
			m.pw = nil // no energy asked for: no power model at run ends
		}
		if s.base {
			m.home = poolBaseline
		}
		m.pool = m.home
		m.capacity = capOf(m.typ)
		s.pools[m.home] = append(s.pools[m.home], m.id)
	}
	for p := range s.pools {
		s.setInOrder(int8(p))
	}
	s.reindex()
	minCap, minName := s.m[0].capacity, pt.Name
	if c := s.m[n-1].capacity; c < minCap {
		minCap, minName = c, tt.Name
	}
	prev := math.Inf(-1)
	for _, r := range s.reqs {
		if r.PromptTokens < 1 || r.OutputTokens < 1 {
			return fmt.Errorf("request %d: prompt and output must be at least 1 token, got %d and %d", r.ID, r.PromptTokens, r.OutputTokens)
		}
		if math.IsNaN(r.Arrival) || math.IsInf(r.Arrival, 0) || r.Arrival < prev {
			return fmt.Errorf("request %d: arrival %v is not a finite time at or after the previous request's %v", r.ID, r.Arrival, prev)
		}
		prev = r.Arrival
		if s.promptKV(r.PromptTokens)+s.outputKV(r.OutputTokens) > minCap {
			return &UnservableError{RequestID: r.ID, PromptTokens: r.PromptTokens, OutputTokens: r.OutputTokens,
				Machine: minName, CapacityTokens: minCap / kv}
		}
	}
	// Every request's result is written: its pages are mapped at once.
	if s.opt.Streamed {
		s.out = &Result{Summary: &Summary{}}
		if n := len(s.reqs); n > 0 {
			t0, t1 := s.reqs[0].Arrival, s.reqs[n-1].Arrival
			s.quarter = [2]float64{t0 + (t1-t0)/4, t1 - (t1-t0)/4}
		}
	} else if s.opt.LatenciesOnly {
		s.out = &Result{Latencies: make([]RequestLatency, len(s.reqs))}
		prefault.Slice(s.out.Latencies)
	} else {
		s.out = &Result{Requests: make([]RequestResult, len(s.reqs))}
		prefault.Slice(s.out.Requests)
	}
	s.q = newEventQueue(n, 2*n+16)
	// Room for a few live requests a machine; admit grows it under load
	// (a cleared slab the run does not touch costs page faults anyway).
	s.st = make([]reqState, 0, min(len(s.reqs), 8*n))
	// The lazy runs' bookkeeping starts in one slab of room for 16
	// entries a machine (append moves a machine's out when it grows).
	const lazyRoom = 16
	keys := make([]int32, 4*lazyRoom*n)
	gaps := make([]float64, lazyRoom*n)
	for i := range s.m {
		m := &s.m[i]
		k := keys[4*lazyRoom*i:]
		m.doneAt, m.doneSpare, m.gaps.at = k[:0:lazyRoom], k[lazyRoom:lazyRoom:2*lazyRoom], k[2*lazyRoom:2*lazyRoom:4*lazyRoom]
		m.gaps.g = gaps[lazyRoom*i : lazyRoom*i : lazyRoom*(i+1)]
	}
	return nil
}

// promptKV is the KV-cache the prompt phase of a request of prompt tokens
// holds, and outputKV what its decode phase adds, in bytes: as the
// reference counts it, the prompt phase holds the KV-cache of the prompt
// and the first token, the decode phase that of the other output tokens.
func (s *sim) promptKV(prompt int) int64 { return int64(prompt+1) * s.kv }

func (s *sim) outputKV(output int) int64 { return int64(output-1) * s.kv }

// admit gives request i, arriving, a state slot and returns it.
func (s *sim) admit(i int) int32 {
	var slot int32
	if n := len(s.free); n > 0 {
		slot = s.free[n-1]
		s.free = s.free[:n-1]
	} else {
		s.st = append(s.st, reqState{})
		slot = int32(len(s.st) - 1)
	}
	r := &s.reqs[i]
	// (Cleared and written in place: a composite literal is built on the
	// stack and copied, twice the stores.)
	st := &s.st[slot]
	*st = reqState{}
	st.req, st.arrival = int32(i), r.Arrival
	st.prompt, st.output = int32(r.PromptTokens), int32(r.OutputTokens)
	st.promptKV, st.outputKV = s.promptKV(r.PromptTokens), s.outputKV(r.OutputTokens)
	// What the request's result knows already is written now, in arrival
	// order (a sequential stream the processor fetches ahead), so that its
	// record is in the cache when the request ends, in no particular
	// order, and recordState writes it whole.
	if s.opt.Streamed {
		// (recordState streams the request: nothing to write now.)
	} else if s.opt.LatenciesOnly {
		l := &s.out.Latencies[i]
		l.PromptTokens, l.OutputTokens = int32(r.PromptTokens), int32(r.OutputTokens)
	} else {
		rr := &s.out.Requests[i]
		rr.ID, rr.ArrivalS, rr.PromptTokens, rr.OutputTokens = r.ID, r.Arrival, r.PromptTokens, r.OutputTokens
	}
	return slot
}

// nextTime is the time of the next event or arrival (nextT: the next
// arrival's, +Inf when every request has arrived); nothing happens
// before it.
func (s *sim) nextTime(nextT float64) float64 {
	if len(s.q.ev) > 0 {
		return min(s.q.ev[0].t, nextT)
	}
	return nextT
}

// look is the event loop's look around, every stopCheckEvents events (n
// counts them; nextT is the next arrival's time): at Options.Stop's
// limits, when their check is due, and, every ctxCheckEvents events, at
// ctx, whose error it returns.
func (s *sim) look(ctx context.Context, n int, nextT float64) error {
	if s.stop != nil && n >= s.stop.next {
		s.checkStop(n, s.nextTime(nextT))
	}
	if n%ctxCheckEvents == 0 {
		if s.opt.Progress != nil {
			s.opt.Progress(s.nextTime(nextT))
		}
		return ctx.Err()
	}
	return nil
}

// run is the event loop: arrivals come in order from the workload, the
// rest from the queue; at equal times queued events go first.
func (s *sim) run(ctx context.Context) error {
	reqs := s.reqs
	next := 0
	// nextT is the arrival time of reqs[next], +Inf once every request
	// has arrived (nothing comes after an event at +Inf then either).
	nextT := math.Inf(1)
	if len(reqs) > 0 {
		nextT = reqs[0].Arrival
	}
	var events int64 // handled, kept local in the loop
	defer func() { s.out.Events += events }()
	for n := 1; !s.abort; n++ {
		if n%stopCheckEvents == 0 {
			if err := s.look(ctx, n, nextT); err != nil {
				return err
			}
			if s.abort {
				continue // stopped (the loop ends)
			}
		}
		if len(s.q.ev) == 0 || nextT < s.q.ev[0].t {
			if next == len(reqs) {
				break // every request arrived and nothing is left to happen
			}
			events++
			s.arrive(s.admit(next))
			next++
			nextT = math.Inf(1)
			if next < len(reqs) {
				nextT = reqs[next].Arrival
			}
			continue
		}
		// The first event stays at the top of the queue while it is
		// handled (everything it schedules comes after it); the first
		// event it schedules takes its place.
		t, who, ver, kind := s.q.hold()
		switch kind {
		case evIterEnd:
			m := &s.m[who]
			if ver != m.ver || !m.busy {
				break // superseded by a cut
			}
			events++
			s.endRun(m, t)
		case evTransfer:
			events++
			s.transferDone(who, t)
		}
		s.q.release()
	}
	return nil
}

// arrive routes request r (a state slot, just admitted) with the
// cluster-level scheduler and hands its prompt to its prompt machine.
func (s *sim) arrive(r int32) {
	st := &s.st[r]
	now := st.arrival
	var pm, tm *machine
	if s.base {
		pm = s.leastLoaded(poolBaseline, byPending) // the least pending of all
		tm = pm
	} else {
		pm, tm = s.route(st)
	}
	st.pm, st.tm = pm.id, tm.id
	if s.out.Requests != nil {
		rr := &s.out.Requests[st.req] // its second cache line (see admit)
		rr.PromptMachine, rr.TokenMachine = int(pm.id), int(tm.id)
	}
	s.addPending(pm.id, int64(st.prompt))
	s.addPending(tm.id, 1)
	if pm != tm {
		s.addSchedMem(pm.id, st.promptKV)
	}
	s.addSchedMem(tm.id, st.promptKV+st.outputKV)
	st.phase = phWaiting
	if !pm.busy && len(pm.batch)+len(pm.queue)+len(pm.preempted) == 0 && s.startAlone(pm, r, now) {
		// What notify and startRun come to for an arrival at an idle
		// machine with nothing else to do (its wait, 0, checks nothing),
		// without the queue.
		return
	}
	pm.queue = append(pm.queue, r)
	if s.opt.AbortDelayS > 0 {
		for _, q := range pm.queue {
			if s.st[q].phase == phWaiting {
				s.checkWait(&s.st[q], now)
				break
			}
		}
	}
	s.notify(pm, now, r)
}

// route is Splitwise's cluster-level scheduler (SPEC §5).
func (s *sim) route(st *reqState) (pm, tm *machine) {
	need := st.promptKV + st.outputKV
	queueLong := func(m *machine) bool {
		return len(m.queue)+len(m.preempted) > 0 && s.load[m.id][byPending]+int64(st.prompt) > int64(s.opt.PromptQueueTokens)
	}
	memLoaded := func(m *machine) bool { return s.load[m.id][byMemory]+need >= m.capacity }
	if m := s.leastPending(poolPrompt); m != nil && !queueLong(m) {
		pm = m
	}
	if pm == nil {
		if m := s.leastPending(poolMixed); m != nil && !queueLong(m) {
			pm = m
		}
	}
	if m := s.leastMemory(poolToken); m != nil && !memLoaded(m) {
		tm = m
	}
	if tm == nil {
		if m := s.leastMemory(poolMixed); m != nil && !memLoaded(m) {
			tm = m
		}
	}
	if pm == nil {
		if m := s.leastPending(poolToken); m != nil {
			s.move(m, poolMixed)
			pm = m
		}
	}
	if tm == nil {
		if m := s.leastMemory(poolPrompt); m != nil {
			s.move(m, poolMixed)
			tm = m
		}
	}
	if pm == nil || tm == nil {
		// Still none: the whole request on the least-loaded machine of
		// the prompt, mixed and token pools, in that order.
		pm = nil
		for _, pool := range [3]int8{poolPrompt, poolMixed, poolToken} {
			if m := s.leastPending(pool); m != nil && (pm == nil || s.load[m.id][byPending] < s.load[pm.id][byPending]) {
				pm = m
			}
		}
		tm = pm
	}
	st.borrowed = pm.pool == poolMixed || tm.pool == poolMixed
	return pm, tm
}

// machineLoad is what the cluster scheduler weighs a machine by, by kind
// of load: [byPending] the prompt tokens not yet prefilled plus the
// requests decoding, [byMemory] the cluster scheduler's bookkeeping of
// reserved memory. (An array, so that the scans for either take the kind
// as an index, not a test at every machine.)
type machineLoad [2]int64

// leastPending is the machine of pool with the fewest pending tokens, the
// first in the pool's order among equals; nil for an empty pool.
func (s *sim) leastPending(pool int8) *machine { return s.leastLoaded(pool, byPending) }

// leastMemory is the machine of pool with the least reserved memory, the
// first in the pool's order among equals; nil for an empty pool.
func (s *sim) leastMemory(pool int8) *machine { return s.leastLoaded(pool, byMemory) }

// leastLoaded is the machine of pool with the least load of kind k
// (byPending, byMemory): the first in the pool's order among equals; nil
// for an empty pool.
func (s *sim) leastLoaded(pool int8, k int) *machine {
	ids := s.pools[pool]
	if len(ids) == 0 {
		return nil
	}
	inOrder := s.inOrder[pool]
	if inOrder && k == byPending {
		// With pending tokens, a machine with none is the answer, found
		// in the bitmap a word at a time.
		if i := s.firstUnloaded(int(ids[0]), int(ids[0])+len(ids)); i >= 0 {
			return &s.m[i]
		}
	}
	switch {
	case s.indexed[pool]:
		return &s.m[ids[s.leastByBlock(pool, k)]]
	case inOrder:
		// Consecutive machines: straight from the dense load array.
		lo := int(ids[0])
		l := s.load[lo : lo+len(ids)]
		k &= 1 // (a kind is 0 or 1: the loop checks no bound on it)
		best, bv := 0, l[0][k]
		for i := 1; i < len(l); i++ {
			if v := l[i][k]; v < bv {
				best, bv = i, v
			}
		}
		return &s.m[lo+best]
	default:
		// Pools fall out of order under load, when machines move, in
		// every search.
		return &s.m[ids[s.leastAmong(ids, 0, len(ids), k)]]
	}
}

// leastAmong is the position of the first least load of kind k of the
// machines ids[lo:hi] (not empty).
func (s *sim) leastAmong(ids []int32, lo, hi int, k int) int {
	k &= 1 // (as leastLoaded's loop)
	best, bv := lo, s.load[ids[lo]][k]
	for p := lo + 1; p < hi; p++ {
		if v := s.load[ids[p]][k]; v < bv {
			best, bv = p, v
		}
	}
	return best
}

// addPending adds d to machine id's pending tokens.
func (s *sim) addPending(id int32, d int64) {
	p := &s.load[id][byPending]
	*p += d
	if s.anyIndexed {
		s.blocks.mark(id, byPending)
	}
	w, b := id>>6, uint64(1)<<(id&63)
	if *p == 0 {
		s.unloaded[w] |= b
	} else {
		s.unloaded[w] &^= b
	}
}

// firstUnloaded is the first machine of ids lo to hi−1 with no pending
// tokens, or −1.
func (s *sim) firstUnloaded(lo, hi int) int {
	for w := lo >> 6; w<<6 < hi; w++ {
		x := s.unloaded[w]
		if w == lo>>6 {
			x &^= 1<<(lo&63) - 1 // below lo
		}
		if x != 0 {
			if i := w<<6 + bits.TrailingZeros64(x); i < hi {
				return i
			}
			return -1
		}
	}
	return -1
}

// setInOrder updates inOrder for pool.
func (s *sim) setInOrder(pool int8) {
	ids := s.pools[pool]
	s.inOrder[pool] = true
	for i := 1; i < len(ids); i++ {
		if ids[i] != ids[0]+int32(i) {
			s.inOrder[pool] = false
			return
		}
	}
}

// leastOf is the id of ids with the least key, the first among equals; −1
// when ids is empty. The compat scheduler routes with it (the default
// one's leastLoaded loops without a call per machine).
func leastOf(ids []int32, key func(id int32) int64) int32 {
	best, v := int32(-1), int64(0)
	for _, id := range ids {
		if k := key(id); best < 0 || k < v {
			best, v = id, k
		}
	}
	return best
}

// move takes m out of its pool and appends it to pool to.
func (s *sim) move(m *machine, to int8) {
	p := s.pools[m.pool]
	for i, id := range p {
		if id == m.id {
			s.pools[m.pool] = append(p[:i], p[i+1:]...)
			break
		}
	}
	s.pools[to] = append(s.pools[to], m.id)
	s.setInOrder(m.pool)
	s.setInOrder(to)
	m.pool = to
	s.reindex()
	m.moves++
	s.out.PoolMoves++
}

// notify tells machine m that work arrived at time now: an idle machine
// starts, and a multi-iteration decode run is cut at its next iteration
// boundary when the batch has room (a prompt always cuts it).
func (s *sim) notify(m *machine, now float64, r int32) {
	if !m.busy {
		s.startRun(m, now)
		return
	}
	if m.runPrompts > 0 || m.runIters <= 1 {
		return // the run ends after its single iteration anyway
	}
	if s.mixedOn(m) {
		if !cutsOnAnyPrompt(s, m, r) { // (mixed batching's rule, without the call through its interface)
			return
		}
	} else if !s.policyFor(m).cuts(s, m, r) {
		return
	}
	n := int(math.Ceil((now-m.runStart)/m.iterDur - 1e-9))
	if n < 1 {
		n = 1
	}
	if n < m.runIters {
		m.runIters = n
		m.ver++
		s.q.reschedule(m.id, m.runStart+float64(n)*m.iterDur, m.ver)
	}
}

// startRun forms a batch on idle machine m and schedules the end of its
// run: one iteration when it holds a prompt, otherwise as many identical
// decode iterations as its shortest remaining output. The machine's
// batching policy forms the batch.
func (s *sim) startRun(m *machine, now float64) {
	if len(m.batch) == 0 && len(m.preempted) == 0 && len(m.queue) == 1 && s.startAlone(m, m.queue[0], now) {
		m.queue = m.queue[:0]
		return
	}
	if len(m.batch)+len(m.queue)+len(m.preempted) > 0 {
		s.policyFor(m).form(s, m) // (with nothing to take, every policy forms nothing)
	}
	m.calm = false
	if len(m.batch) == 0 {
		s.idle(m)
		return
	}
	s.begin(m, now)
}

// idle leaves m, its batch empty, with nothing to run: a machine the
// mixed pool borrowed goes back to its own pool when nothing waits there.
func (s *sim) idle(m *machine) {
	m.busy = false
	if m.pool == poolMixed && len(m.queue) == 0 && len(m.preempted) == 0 {
		s.move(m, m.home)
	}
}

// startAlone starts, under mixed batching, the run of an idle machine m
// whose only task is r, one whole prompt waiting (an arrival at an idle
// prompt machine, the common case): the prompt alone, as mixedPolicy.form
// forms it (the first prompt of a batch is taken whatever its length) and
// begin starts it, when its KV-cache fits. It reports false, having
// changed nothing, in every other case, left to the policy. (The caller
// takes r out of m's queue, or never puts it there: see arrive.)
func (s *sim) startAlone(m *machine, r int32, now float64) bool {
	st := &s.st[r]
	if !s.mixedOn(m) || st.phase != phWaiting || st.prefilled != 0 || s.opt.formEveryBatch {
		return false
	}
	if s.opt.MaxBatchRequests < 1 || !m.reserve(st) {
		return false // left out: form counts it
	}
	st.chunk = st.prompt
	m.batch = append(m.batch, r) // (empty before: the callers checked)
	m.calm = false
	s.startPrompt(st, now)
	m.peak = max(m.peak, m.used)
	d, ex := m.perf.PromptTime(int(st.chunk))
	s.schedule(m, now, int(st.chunk), 0, 0, 1, d, ex)
	return true
}

// startPrompt starts the prompt of state st, waiting until now: its first
// iteration (or chunk) runs, its wait is checked.
func (s *sim) startPrompt(st *reqState, now float64) {
	st.phase, st.promptStart = phPrompt, now
	s.checkWait(st, now)
}

// begin starts the run of m's batch, just formed (not empty): its prompts
// start, its decodes that have not started start, and launch times it.
func (s *sim) begin(m *machine, now float64) {
	prompts, decodes := 0, 0
	var ctx int64
	var extra float64 // chunks' re-read overhead (sarathi)
	exExtra := false
	iters := math.MaxInt32
	for _, r := range m.batch {
		st := &s.st[r]
		switch st.phase {
		case phWaiting, phPrompt: // a prompt, or the next chunk of one
			if st.phase == phWaiting {
				s.startPrompt(st, now)
			}
			prompts += int(st.chunk)
			if st.prefilled > 0 {
				e, x := chunkExtra(m.perf, int(st.prefilled), int(st.chunk))
				extra += e
				exExtra = exExtra || x
			}
		default: // a decode: queued after its transfer, preempted or running
			if st.phase == phQueued {
				st.phase = phDecoding
			}
			if !st.outputHeld {
				st.outputHeld = true
				m.used += st.outputKV
				st.decodeStart = now
				s.checkWait(st, now)
			}
			decodes++
			ctx += int64(st.prompt) + int64(st.generated)
			if left := int(st.output - st.generated); left < iters {
				iters = left
			}
		}
	}
	m.peak = max(m.peak, m.used)
	s.launch(m, now, prompts, decodes, ctx, iters, extra, exExtra)
}

// launch times m's run of the batch startRun formed (prompts prompt
// tokens, decodes decodes of contexts adding up to ctx, at most iters
// iterations, chunk overhead extra) and schedules its end.
func (s *sim) launch(m *machine, now float64, prompts, decodes int, ctx int64, iters int, extra float64, exExtra bool) {
	d, ex := iterTime(m.perf, prompts, decodes, ctx)
	if prompts > 0 {
		iters = 1
	}
	if extra > 0 {
		d += extra
	}
	s.schedule(m, now, prompts, decodes, ctx, iters, d, ex || exExtra)
}

// schedule starts m's run of iters iterations of d seconds each (ex:
// extrapolated) batching prompts prompt tokens and decodes decodes of
// contexts adding up to ctx, and schedules its end.
func (s *sim) schedule(m *machine, now float64, prompts, decodes int, ctx int64, iters int, d float64, ex bool) {
	if !(d > 0 && d <= math.MaxFloat64) { // (not positive, NaN or +Inf)
		// A performance model extrapolated to a non-positive time; keep
		// time moving forward rather than loop forever.
		d = 1e-9
	}
	m.busy = true
	m.runStart, m.iterDur, m.runIters = now, d, iters
	m.runPrompts, m.runDecodes, m.runExtrap, m.runCtx = prompts, decodes, ex, ctx
	m.firstGaps = 0
	m.ver++
	s.q.push(event{t: now + float64(iters)*d, who: m.id, ver: m.ver, kind: evIterEnd})
	if s.onRun != nil {
		s.onRun(m, now)
	}
}

// recordRun accounts to m a run of k iterations of iterS seconds each,
// busyS in all, batching prompts prompt tokens and decodes decodes whose
// contexts add up to ctx: its busy time and energy, the busy-time
// histogram by batched tokens (with Options.RecordBatchTokens), the
// iterations by kind (prompt, decode, mixed) and the extrapolated ones.
// Both schedulers account their runs through it.
func (s *sim) recordRun(m *machine, prompts, decodes int, ctx int64, k int, iterS, busyS float64, extrap bool) {
	m.busyS += busyS
	if m.pw != nil || s.opt.RecordBatchTokens {
		s.recordRunFigures(m, prompts, decodes, ctx, iterS, busyS)
	}
	// The run's kind indexes iters (prompt, decode, mixed) without a
	// branch: mixed when both, prompt when prompts only, else decode.
	m.iters[iterKind[b2i(prompts > 0)|b2i(decodes > 0)<<1]] += int64(k)
	if extrap {
		s.out.Extrapolations += int64(k)
	}
}

// recordRunFigures is recordRun's part for the figures a simulation
// measures only when asked: the energy (Options.Energy: m has a power
// model) and the busy time by batched tokens (Options.RecordBatchTokens).
func (s *sim) recordRunFigures(m *machine, prompts, decodes int, ctx int64, iterS, busyS float64) {
	m.addEnergy(prompts, decodes, ctx, iterS, busyS) // energy.go
	if s.opt.RecordBatchTokens {
		n := prompts + decodes
		if n >= len(m.batchTokensS) {
			grown := make([]float64, max(n+1, 2*len(m.batchTokensS), 64))
			copy(grown, m.batchTokensS)
			m.batchTokensS = grown
		}
		m.batchTokensS[n] += busyS
	}
}

// iterKind maps a run's (prompts > 0) | (decodes > 0)<<1 to its index in
// machine.iters: prompt 0, decode 1, mixed 2 (a run of neither counts as
// decode).
var iterKind = [4]uint8{1, 0, 1, 2}

// b2i is 1 for true, 0 for false (a flag, not a branch).
func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// endRun accounts for m's finished run, advances its requests and starts
// the next run.
func (s *sim) endRun(m *machine, now float64) {
	if m.lazy {
		s.endLazyRun(m, now)
		return
	}
	k, d := m.runIters, m.iterDur
	s.recordRun(m, m.runPrompts, m.runDecodes, m.runCtx, k, d, float64(k)*d, m.runExtrap)
	m.busy = false
	if len(m.batch) == 1 && len(m.queue)+len(m.preempted) == 0 && !s.opt.formEveryBatch {
		// A whole prompt alone whose decode runs elsewhere, nothing
		// waiting (a prompt machine's usual run): it leaves the batch
		// (promptEnd: done, or off to its transfer) and nothing is left
		// to form — what the pass below comes to, without it.
		r := m.batch[0]
		if st := &s.st[r]; st.phase == phPrompt && st.tm != m.id && st.prefilled+st.chunk >= st.prompt {
			s.promptEnd(m, r, now, false) // (reference matters only to a decode here)
			// Nothing to run (promptEnd queued nothing here): what
			// startRun comes to, without its tests.
			m.batch = m.batch[:0]
			m.calm = false
			s.idle(m)
			return
		}
	}
	firstEnd := m.runStart + d
	pol := s.policyFor(m)
	reference := pol.reference()
	// When the batch is decodes only and only decodes wait here, the next
	// batch is the same decodes minus the finished ones, followed by the
	// waiting ones (see decodesJoin); the loop gathers what tells.
	fast := len(m.preempted) == 0
	calm := true // no task kept in the batch is starved
	starved := 0 // decodes kept in the batch that are starved
	// prefix reports that the starved decodes kept come before every
	// other task kept, as the starvation guard orders them.
	prefix, others := true, false
	starve := int32(s.opt.MaxPreemptions)
	var ctx int64
	iters := math.MaxInt32
	fromStart := 0 // decodes whose last token came at the run's start
	keep := m.batch[:0]
	for _, r := range m.batch {
		st := &s.st[r]
		if st.phase == phPrompt {
			// A prompt that leaves the batch (done, queued here as a
			// decode, or off to its transfer) keeps the fast way open; one
			// that stays in it does not.
			if s.promptEnd(m, r, now, reference) {
				fast = false
				calm = calm && st.preempt < starve
				keep = append(keep, r)
			}
			continue
		}
		g := firstEnd - st.lastToken
		if st.lastToken == m.runStart {
			fromStart++ // (the usual case: counted after the loop)
		} else {
			s.out.ITL.Add(g)
		}
		if g > st.maxGap {
			st.maxGap = g
		}
		if k > 1 && d > st.maxGap {
			st.maxGap = d
		}
		st.generated += int32(k)
		st.lastToken = now
		if st.generated >= st.output {
			s.finish(r, now)
			continue
		}
		if st.preempt >= starve {
			calm = false
			starved++
			prefix = prefix && !others
		} else {
			others = true
		}
		ctx += int64(st.prompt) + int64(st.generated)
		if left := int(st.output - st.generated); left < iters {
			iters = left
		}
		keep = append(keep, r)
	}
	// The first gaps of the decodes whose last token came at the run's
	// start, and every decode's later gaps.
	if fromStart > 0 {
		s.out.ITL.AddN(firstEnd-m.runStart, fromStart)
	}
	if k > 1 {
		s.out.ITL.AddN(d, (k-1)*m.runDecodes)
	}
	m.batch = m.batch[:len(keep)] // (keep is its prefix: the length alone is stored)
	// finish may have started transfers, but they queue nothing here
	// before they end; a decode that finished can only have freed room.
	fast = fast && !s.opt.formEveryBatch
	// Under mixed batching, starved decodes ahead of the rest of the batch
	// are where the starvation guard would put them, and the runs may be
	// lazy with them: decodes join after the batch, prompts after them.
	mixed := s.mixedOn(m)
	if fast && (calm || mixed && prefix) && len(m.preempted) == 0 {
		// The next runs are lazy (see machine.lazy) until one cannot
		// keep its batch: when only decodes join it (decodesJoin), or
		// prompts too under mixed batching (a lazy mixedJoin).
		join := len(keep)+len(m.queue) > 0 && s.decodesJoin(m, pol, len(keep))
		if join || len(m.queue) > 0 {
			s.startLazy(m, ctx, iters, starved)
			if join {
				s.joinQueued(m, now, iters)
				return
			}
			if s.mixedJoin(m, now, ctx, iters, starved, true, true) {
				return
			}
			m.lazy = false // (mixedJoin changed nothing)
		}
	}
	if fast && len(m.preempted) == 0 && s.mixedJoin(m, now, ctx, iters, starved, prefix, false) {
		return
	}
	m.calm = calm
	s.startRun(m, now)
}

// startLazy makes m's runs lazy from its batch of decodes, just brought up
// to date (contexts adding up to ctx, the shortest with iters iterations
// left, its first starved members starved: see machine.lazyStarved).
func (s *sim) startLazy(m *machine, ctx int64, iters, starved int) {
	m.lazy = true
	m.lazyStarved = starved
	if starved > 0 {
		s.lazyStarvedStarts++
	}
	m.gaps.reset()
	done := m.doneAt[:0]
	for _, r := range m.batch {
		st := &s.st[r]
		done = append(done, m.decIters+st.output-st.generated)
	}
	m.doneAt, m.lazyCtx, m.lazyPrompts = done, ctx, 0
	m.minDone = math.MaxInt32
	if len(m.batch) > 0 {
		m.minDone = m.decIters + int32(iters)
	}
}

// joinQueued appends the decodes queued at m, lazy, to its batch, starts
// them, and launches the next run of the batch: at most iters iterations
// (the fewest left to a member of the batch).
func (s *sim) joinQueued(m *machine, now float64, iters int) {
	decodes := len(m.batch)
	ctx := m.lazyCtx
	for _, r := range m.queue {
		st := &s.st[r]
		ctx, iters = s.startQueuedDecode(m, st, now, ctx, iters)
		s.checkWait(st, now)
		key := m.decIters + st.output - st.generated
		m.doneAt = append(m.doneAt, key)
		m.batch = append(m.batch, r)
		m.minDone = min(m.minDone, key)
	}
	m.lazyCtx = ctx
	joined := len(m.queue)
	if joined > 0 {
		m.queue = m.queue[:0]
		m.peak = max(m.peak, m.used)
	}
	d, ex := m.perf.DecodeTime(decodes+joined, ctx) // (launch's time of a decode-only batch)
	s.schedule(m, now, 0, decodes+joined, ctx, iters, d, ex)
	foldFirstGaps(s, m, decodes)
}

// foldFirstGaps counts, for the decodes m.batch[from:] that joined the
// lazy run just launched, the gap before their first token of it: from
// their own last token, which came at or before the run's start (a gap
// no shorter than the one from the run's start, which gaps counts for
// every decode of the run), in their largest gap and in the ITL; the
// run's end counts the others' (machine.firstGaps).
func foldFirstGaps(s *sim, m *machine, from int) {
	firstEnd := m.runStart + m.iterDur
	for _, r := range m.batch[from:] {
		st := &s.st[r]
		g := firstEnd - st.lastToken
		s.out.ITL.Add(g)
		// (A comparison, not the builtin max, whose care for NaNs and
		// signed zeros takes a dozen instructions: no gap is either. It
		// is nearly always larger: a new decode's first gap, from its
		// prompt's end, spans its transfer.)
		if g > st.maxGap {
			st.maxGap = g
		}
	}
	m.firstGaps = len(m.batch) - from
}

// Marks in machine.doneAt for a lazy batch's members that are not lazy
// decodes: a prompt (lazyPrompt), or a decode brought up to date that
// runs on outside the lazy runs (upToDate).
const (
	lazyPrompt int32 = -1
	upToDate   int32 = -2
)

// endLazyRun is endRun for a lazy run (see machine.lazy): in batch order,
// its prompts (taken by a lazy mixedJoin) advance as endRun advances them
// and the decodes that finish are brought up to date and finish; the
// batch runs again with the decodes queued at m, lazy, when decodesJoin
// allows it, or with the prompts and decodes waiting here when mixedJoin
// does; otherwise every member is brought up to date and the next batch
// is formed as endRun forms it.
func (s *sim) endLazyRun(m *machine, now float64) {
	k, d := m.runIters, m.iterDur
	s.recordRun(m, m.runPrompts, m.runDecodes, m.runCtx, k, d, float64(k)*d, m.runExtrap)
	m.busy = false
	// Every decode's gaps in this run, from its last token (the run's
	// start, but for those that joined it: see joinQueued).
	g := m.runStart + d - m.runStart
	if n := m.runDecodes - m.firstGaps; n > 0 {
		s.out.ITL.AddN(g, n) // (the joiners': foldFirstGaps)
	}
	if k > 1 {
		s.out.ITL.AddN(d, (k-1)*m.runDecodes)
	}
	if k > 1 && d > g {
		g = d
	}
	m.decIters += int32(k)
	c := m.decIters
	m.gaps.add(c, g)
	m.lazyCtx += int64(k) * int64(len(m.batch)-m.lazyPrompts)
	pol := s.policyFor(m)
	fast := len(m.preempted) == 0
	calm := true // no prompt kept in the batch is starved (the decodes: lazyStarved)
	switch {
	case m.lazyPrompts == 0 && m.minDone <= c:
		s.finishLazy(m, c, now)
	case m.lazyPrompts > 0:
		n, least, prompts := 0, int32(math.MaxInt32), 0
		reference := pol.reference()
		// (Neither promptEnd nor finish changes the batch or its keys:
		// the loop compacts them in locals.)
		batch := m.batch
		doneAt := m.doneAt[:len(batch)]
		for i, r := range batch {
			key := doneAt[i]
			switch {
			case key > c: // runs on (a prompt's mark is negative)
				least = min(least, key)
			case key == lazyPrompt:
				if !s.promptEnd(m, r, now, reference) {
					continue
				}
				fast = false
				calm = calm && !s.starved(&s.st[r])
				if s.st[r].phase == phPrompt {
					prompts++
				} else {
					key = upToDate
				}
			default: // its output completes
				s.finishLazyMember(m, r, key, now)
				continue
			}
			batch[n], doneAt[n] = r, key
			n++
		}
		m.batch = m.batch[:n] // (re-sliced in place: the lengths alone are stored)
		m.doneAt = m.doneAt[:n]
		m.minDone, m.lazyPrompts = least, prompts
	}
	iters := math.MaxInt32
	if m.minDone != math.MaxInt32 {
		iters = int(m.minDone - c)
	}
	if fast && len(m.batch)+len(m.queue) > 0 && s.decodesJoin(m, pol, len(m.batch)) {
		s.joinQueued(m, now, iters)
		return
	}
	if fast && s.mixedJoin(m, now, m.lazyCtx, iters, m.lazyStarved, true, true) {
		return
	}
	for i, r := range m.batch {
		if m.doneAt[i] >= 0 {
			s.catchUp(m, &s.st[r], m.doneAt[i], now)
		}
	}
	m.lazy = false
	if fast && s.mixedJoin(m, now, m.lazyCtx, iters, m.lazyStarved, true, false) {
		return
	}
	m.calm = m.lazyStarved == 0 && calm
	s.startRun(m, now)
}

// finishLazy finishes, at now, the members of m's lazy batch of decodes
// (every key at least c, the machine's decIters) whose key is c, and
// compacts the rest in order. The finished are noted in s.fin on the way
// and finish after the pass, in batch order, as a pass that finished each
// on the way would: finish reads neither the batch nor its keys.
func (s *sim) finishLazy(m *machine, c int32, now float64) {
	// The members before the first finisher stay where they are: a
	// plain scan finds it; the rest move down over the finished before
	// them (a branch per member, guessed right but at the few that
	// finish: a branchless pass that copied every member and key took
	// more instructions than the guesses cost).
	batch := m.batch
	doneAt := m.doneAt[:len(batch)]
	i, least := 0, int32(math.MaxInt32)
	for ; i < len(doneAt) && doneAt[i] > c; i++ {
		least = min(least, doneAt[i])
	}
	fin := s.fin[:0]
	w := i
	for j := i; j < len(batch); j++ {
		r, key := batch[j], doneAt[j]
		if key <= c {
			fin = append(fin, r)
			continue
		}
		least = min(least, key)
		batch[w], doneAt[w] = r, key
		w++
	}
	// (Each slice re-sliced in place: the compiler then stores its
	// length alone.)
	m.batch = m.batch[:w]
	m.doneAt = m.doneAt[:w]
	m.minDone = least
	s.fin = fin
	for _, r := range fin {
		s.finishLazyMember(m, r, c, now) // (its key is c)
	}
}

// finishLazyMember finishes r, a decode of m's lazy batch whose output
// completes at decIters done (now): brought up to date, out of the batch's
// context sum and starved count, and finished (the caller takes it out
// of the batch).
func (s *sim) finishLazyMember(m *machine, r, done int32, now float64) {
	st := &s.st[r]
	m.lazyStarved -= b2i(s.starved(st))
	s.catchUp(m, st, done, now)
	m.lazyCtx -= int64(st.prompt) + int64(st.generated)
	s.finish(r, now)
}

// starved reports whether st's current task has been left out
// Options.MaxPreemptions times: the starvation guard takes it first.
func (s *sim) starved(st *reqState) bool {
	return st.preempt >= int32(s.opt.MaxPreemptions)
}

// catchUp brings st, a member of m's lazy batch that completes at
// decIters done, up to date at now, the end of m's run.
func (s *sim) catchUp(m *machine, st *reqState, done int32, now float64) {
	c0 := done - st.output + st.generated
	st.generated = st.output - (done - m.decIters)
	st.lastToken = now
	if g := m.gaps.since(c0); g > st.maxGap {
		st.maxGap = g
	}
}

// promptEnd advances r, a prompt (or a chunk of one) in m's run that ended
// at now, under a policy that is the reference's (mixed batching) or not,
// and reports whether it stays in m's batch: a chunk of it remains
// (sarathi), or, outside mixed batching, its decode runs on in the batch.
// Otherwise it finished, is queued here as a decode, or awaits its
// transfer.
func (s *sim) promptEnd(m *machine, r int32, now float64, reference bool) bool {
	st := &s.st[r]
	s.addPending(m.id, -int64(st.chunk))
	st.prefilled += st.chunk
	if st.prefilled < st.prompt {
		return true // a chunk of it remains (sarathi)
	}
	st.generated = 1
	st.firstToken, st.lastToken = now, now
	switch {
	case st.output == 1:
		s.finish(r, now)
	case st.tm == m.id && reference:
		// Under mixed batching (the reference's rules) the decode is a
		// new task pending here, as if it had arrived: it joins the other
		// pending requests in their arrival order, its left-outs counted
		// afresh.
		st.phase = phQueued
		st.decodeReady = now
		st.preempt = 0
		m.queue = s.insertByArrival(m.queue, r)
	case st.tm == m.id:
		// Other policies keep it running in its batch.
		st.phase = phDecoding
		st.decodeReady = now
		return true
	default:
		st.phase = phTransfer
		s.requestTransfer(r, now)
	}
	return false
}

// startQueuedDecode starts the decode of state st queued at m as startRun
// starts one (its output's KV-cache held; the caller checks its wait: see
// checkWait) and returns the batch's context sum and fewest iterations
// left with it added. (It inlines: one call fewer for every decode that
// joins.)
func (s *sim) startQueuedDecode(m *machine, st *reqState, now float64, ctx int64, iters int) (int64, int) {
	st.phase = phDecoding
	st.outputHeld = true
	m.used += st.outputKV
	st.decodeStart = now
	ctx += int64(st.prompt) + int64(st.generated)
	return ctx, min(iters, int(st.output-st.generated))
}

// mixedJoin forms and starts m's next batch under mixed batching when its
// previous batch (m.batch: decodes only, every one started, starvedKept
// of them starved, contexts adding up to ctx, the shortest with iters
// iterations left) is followed by decodes and prompts waiting at m and
// nothing is preempted: it takes what mixedPolicy.form takes, in its
// order — the starved decodes of the previous batch, then the starved
// decodes queued (step 1), the waiting prompts first come first served
// up to the first one over a cap or out of memory (step 2), the other
// decodes of the previous batch (step 4), the other queued decodes (step
// 5) — with the same preemption counts for the prompts left out, and
// starts the run as begin does (the same tasks started in the same
// order). It reports false, having changed nothing, in the cases it
// leaves to the policy: a decode that would be left out, a starved
// prompt, a prompt partly prefilled, an empty batch, or another policy.
// With prefix, the starved decodes of the previous batch are its first
// starvedKept (as the starvation guard ordered them; a lazy batch's
// always are), taken as they stand instead of sought member by member.
//
// With lazy (m's batch is lazy: decodes only, its starvedKept starved
// ones first), it also reports false, having changed nothing, when a
// queued decode is starved, and otherwise keeps the batch lazy: the
// prompts it takes are marked lazyPrompt and the decodes that join take
// their completion keys.
func (s *sim) mixedJoin(m *machine, now float64, ctx int64, iters, starvedKept int, prefix, lazy bool) bool {
	if !s.mixedOn(m) || len(m.queue) == 0 {
		return false
	}
	starve := int32(s.opt.MaxPreemptions)
	maxReq, maxTok := s.opt.MaxBatchRequests, s.opt.MaxBatchTokens
	starved := starvedKept // decodes the starvation guard takes first
	queued := 0            // decodes queued here
	starvedPrompts := 0    // waiting prompts the starvation guard takes first
	for _, r := range m.queue {
		st := &s.st[r]
		if st.phase == phWaiting {
			if st.prefilled != 0 {
				return false
			}
			if st.preempt >= starve {
				starvedPrompts++
			}
			continue
		}
		if st.phase != phQueued || st.outputHeld {
			return false
		}
		queued++
		if st.preempt >= starve {
			starved++
		}
	}
	if starved > starvedKept && (lazy || starvedPrompts > 0) {
		// A queued decode is starved: it would go ahead of the batch, or
		// among starved prompts in the queue's order (left to the policy).
		return false
	}
	// A dry run of which prompts are taken, marked: the starved ones in the
	// queue's order after step 1's decodes, up to the first that does not
	// fit (step 1), then the others first come first served up to the
	// first that does not (step 2, which would stop again at a starved one
	// left out).
	s.stamp++
	stamp := s.stamp
	taken, prompts := 0, 0 // prompts taken and their tokens
	count, tokens := starved, starved
	committed := m.committed
	fits := func(st *reqState) bool {
		c := int(st.prompt)
		need := m.kvNeed(st)
		if count >= maxReq || (tokens+c > maxTok && taken > 0) || committed+need > m.capacity {
			return false
		}
		committed += need
		count++
		tokens += c
		prompts += c
		taken++
		st.mark = stamp
		return true
	}
	if starvedPrompts > 0 {
		for _, r := range m.queue {
			if st := &s.st[r]; st.phase == phWaiting && st.preempt >= starve && !fits(st) {
				break
			}
		}
	}
	for _, r := range m.queue {
		if st := &s.st[r]; st.phase == phWaiting && st.mark != stamp && !fits(st) {
			break
		}
	}
	decodes := len(m.batch) + queued
	if taken+decodes == 0 || taken+decodes > maxReq || prompts+decodes > maxTok {
		return false
	}
	// The batch in the policy's order, each task started as begin starts
	// it when it comes (the kept decodes run already).
	startDecode := func(r int32) {
		st := &s.st[r]
		ctx, iters = s.startQueuedDecode(m, st, now, ctx, iters)
		s.checkWait(st, now)
	}
	next := m.spare[:0]
	if starved > 0 {
		if prefix {
			next = append(next, m.batch[:starvedKept]...)
		} else {
			for _, r := range m.batch {
				if s.st[r].preempt >= starve {
					next = append(next, r)
				}
			}
		}
		for _, r := range m.queue {
			if st := &s.st[r]; st.phase == phQueued && st.preempt >= starve {
				startDecode(r)
				next = append(next, r)
			}
		}
	}
	if starvedPrompts > 0 {
		s.starvedPromptJoins++
	}
	// The prompts taken, the starved first (step 1), each in the queue's
	// order (the starved in a pass of their own). In the others' pass,
	// the prompts left out count a preemption, as settle counts them, and
	// stay queued in their order, and the queued decodes that join are
	// noted: they start after every prompt, as begin starts them.
	n := 0
	take := func(r int32, st *reqState) {
		n++
		m.commitKV(st) // it fits: the dry run above checked
		st.chunk = st.prompt
		s.startPrompt(st, now)
		next = append(next, r)
	}
	if starvedPrompts > 0 {
		for _, r := range m.queue {
			if st := &s.st[r]; st.phase == phWaiting && st.mark == stamp && st.preempt >= starve {
				take(r, st)
			}
		}
	}
	left := m.queue[:0] // the prompts left out, in their order
	joining := s.joining[:0]
	for _, r := range m.queue {
		st := &s.st[r]
		switch {
		case st.phase == phWaiting && st.mark == stamp:
			take(r, st) // (none starved is left waiting: see above)
		case st.phase == phWaiting:
			st.preempt++ // left out
			st.preemptTotal++
			left = append(left, r)
		case st.phase == phQueued && st.preempt < starve:
			joining = append(joining, r)
		}
	}
	var done []int32 // with lazy: the completion keys of next
	if lazy {
		// The batch's starved decodes (its first starvedKept: see
		// machine.lazyStarved), the prompts, the rest of the batch.
		done = append(m.doneSpare[:0], m.doneAt[:starvedKept]...)
		for range n {
			done = append(done, lazyPrompt)
		}
		done = append(done, m.doneAt[starvedKept:]...)
	}
	if prefix {
		next = append(next, m.batch[starvedKept:]...)
	} else {
		for _, r := range m.batch {
			if s.st[r].preempt < starve {
				next = append(next, r)
			}
		}
	}
	for _, r := range joining {
		startDecode(r)
		next = append(next, r)
		if lazy {
			st := &s.st[r]
			key := m.decIters + st.output - st.generated
			done = append(done, key)
			m.minDone = min(m.minDone, key)
		}
	}
	s.joining = joining[:0]
	m.queue = left
	joined := len(m.batch) // the decodes that join come after the kept ones
	if lazy {
		joined += n
		m.doneSpare, m.doneAt = m.doneAt[:0], done
		m.lazyCtx, m.lazyPrompts = ctx, n
	}
	m.spare = m.batch[:0]
	m.batch = next
	m.calm = false
	m.peak = max(m.peak, m.used)
	s.launch(m, now, prompts, decodes, ctx, iters, 0, false)
	if lazy {
		foldFirstGaps(s, m, joined)
	}
	return true
}

// decodesJoin reports whether policy pol, forming m's next batch from its
// previous one of n running decodes (every one of them started, none
// starved), nothing preempted and only decodes queued at m, would form
// the previous batch followed by the queued decodes, in that order,
// leaving nothing out, so endRun can skip the formation. Every policy
// but request-level takes the running decodes in their order, then the
// queued ones, starved ones first (there must be none), up to its request
// and token caps (a machine that moved pools may face a smaller sarathi
// budget than its batch); request-level keeps a running batch as it is.
func (s *sim) decodesJoin(m *machine, pol batchPolicy, n int) bool {
	if s.mixedOn(m) {
		// (pol is mixedPolicy: its case below, without the type switches.)
		n += len(m.queue)
		if n > s.opt.MaxBatchRequests || n > s.opt.MaxBatchTokens {
			return false
		}
		return s.queuedDecodesJoin(m)
	}
	if _, ok := pol.(requestLevelPolicy); ok {
		return n > 0 && len(m.queue) == 0 // the admitted batch runs to completion
	}
	n += len(m.queue)
	if n > s.opt.MaxBatchRequests {
		return false
	}
	switch pol.(type) {
	case mixedPolicy, prefillFirstPolicy:
		if n > s.opt.MaxBatchTokens {
			return false
		}
	case sarathiPolicy:
		if n > m.budget {
			return false
		}
	default:
		return false
	}
	return s.queuedDecodesJoin(m)
}

// queuedDecodesJoin reports whether every task queued at m is a decode
// that may join its batch: queued after its transfer, not starved, its
// output not yet held.
func (s *sim) queuedDecodesJoin(m *machine) bool {
	starve := int32(s.opt.MaxPreemptions)
	for _, r := range m.queue {
		if st := &s.st[r]; st.phase != phQueued || st.preempt >= starve || st.outputHeld {
			return false
		}
	}
	return true
}

// mixedOn reports whether policyFor(m) is mixed batching: m's pool's, or
// everybody's.
func (s *sim) mixedOn(m *machine) bool {
	return m.pool == poolPrompt || m.pool == poolToken || s.mixed
}

// transferTime is the visible duration of moving r's KV-cache from its
// prompt machine to its token machine.
func (s *sim) transferTime(st *reqState) float64 {
	l := &s.links[s.typeIndex(st.pm)][s.typeIndex(st.tm)]
	if int(st.prompt) >= s.layerwiseFrom {
		return l.layerwiseS
	}
	return float64(int64(st.prompt)*s.kv) / l.bytesPerS // the prompt's KV-cache over the link
}

// typeIndex is machine id's type as links indexes it.
func (s *sim) typeIndex(id int32) int {
	if int(id) < s.cl.Prompt {
		return 0
	}
	return 1
}

// requestTransfer starts r's transfer once its token machine has memory
// for its whole KV-cache; until then it waits in a FIFO at that machine.
func (s *sim) requestTransfer(r int32, now float64) {
	st := &s.st[r]
	tm := &s.m[st.tm]
	if len(tm.waitXfer) > 0 || !tm.fitsKV(st) {
		tm.waitXfer = append(tm.waitXfer, r)
		return
	}
	s.startTransfer(r, now)
}

func (s *sim) startTransfer(r int32, now float64) {
	st := &s.st[r]
	tm := &s.m[st.tm]
	tm.commitKV(st) // (the prompt's and the output's: it decodes there)
	tm.peak = max(tm.peak, tm.used)
	st.transferred = true
	st.xfer = s.transferTime(st)
	s.out.Transfers++
	s.q.push(event{t: now + st.xfer, who: r, kind: evTransfer})
}

// startWaitingTransfers starts the transfers waiting at m that now fit.
func (s *sim) startWaitingTransfers(m *machine, now float64) {
	i := 0
	for ; i < len(m.waitXfer); i++ {
		if !m.fitsKV(&s.st[m.waitXfer[i]]) {
			break
		}
		s.startTransfer(m.waitXfer[i], now)
	}
	if i > 0 {
		m.waitXfer = append(m.waitXfer[:0], m.waitXfer[i:]...)
	}
}

// transferDone frees the prompt machine's copy and queues the decode at
// the token machine.
func (s *sim) transferDone(r int32, now float64) {
	st := &s.st[r]
	pm, tm := &s.m[st.pm], &s.m[st.tm]
	pm.used -= st.promptKV
	pm.committed -= st.promptKV
	s.addSchedMem(pm.id, -st.promptKV)
	if !pm.busy && (len(pm.queue) > 0 || len(pm.preempted) > 0) {
		s.startRun(pm, now)
	}
	st.phase = phQueued
	st.decodeReady = st.firstToken + st.xfer
	st.preempt = 0
	if n := len(tm.queue); n == 0 || s.st[tm.queue[n-1]].req < st.req {
		tm.queue = append(tm.queue, r) // (insertByArrival's usual case, in place)
	} else {
		tm.queue = s.insertByArrival(tm.queue, r)
	}
	s.notify(tm, now, r)
}

// finish records request r, done at now, and releases its memory.
func (s *sim) finish(r int32, now float64) {
	st := &s.st[r]
	st.phase = phDone
	pm, tm := &s.m[st.pm], &s.m[st.tm]
	if st.output == 1 && pm != tm {
		// Done at its prompt machine: nothing was transferred.
		pm.used -= st.promptKV
		pm.committed -= st.promptKV
		s.addSchedMem(pm.id, -st.promptKV)
	} else {
		held := st.promptKV
		if st.outputHeld {
			held += st.outputKV
		}
		tm.used -= held
		tm.committed -= st.promptKV + st.outputKV
	}
	s.addSchedMem(tm.id, -(st.promptKV + st.outputKV))
	s.addPending(tm.id, -1)
	s.done++
	s.recordState(st, now)
	if s.stop != nil {
		s.stopFinished(r, now)
	}
	// The simulation's end time, the transfers that now fit at the token
	// machine, and r's slot freed.
	if now > s.out.EndS { // (not max: see foldFirstGaps)
		s.out.EndS = now
	}
	if len(tm.waitXfer) > 0 {
		s.startWaitingTransfers(tm, now)
	}
	s.free = append(s.free, r)
}

// record keeps the result of request i of the trace: whole, or only its
// latencies with Options.LatenciesOnly (the compat scheduler's way).
func (s *sim) record(i int32, rr *RequestResult) {
	switch {
	case s.opt.Streamed:
		s.stream(int(i), rr.ArrivalS, rr.latency())
	case s.opt.LatenciesOnly:
		s.out.Latencies[i] = rr.latency()
	default:
		s.out.Requests[i] = *rr
	}
}

// recordState is record for the request of state st, done at now: its
// figures computed from st and written in place.
func (s *sim) recordState(st *reqState, now float64) {
	e2e := now - st.arrival
	ttft := st.firstToken - st.arrival
	sched := st.promptStart - st.arrival
	var tbt float64
	if st.output > 1 {
		tbt = (e2e - ttft) / float64(st.output-1)
		sched += st.decodeStart - st.decodeReady
	}
	tbtRef := (e2e - ttft) / float64(st.output)
	// (admit and arrive wrote the request's sizes, ID, arrival and
	// machines.)
	if st.preemptTotal > 0 {
		s.out.Preempted++
	}
	if st.borrowed {
		s.out.Borrowed++
	}
	if s.opt.Streamed {
		s.stream(int(st.req), st.arrival, RequestLatency{TTFTS: ttft, QueueS: st.promptStart - st.arrival, MaxGapS: st.maxGap, E2ES: e2e,
			SchedDelayS: sched, PromptTokens: st.prompt, OutputTokens: st.output})
		return
	}
	if s.opt.LatenciesOnly {
		l := &s.out.Latencies[st.req]
		l.TTFTS, l.QueueS, l.MaxGapS, l.E2ES, l.SchedDelayS = ttft, st.promptStart-st.arrival, st.maxGap, e2e, sched
		return
	}
	rr := &s.out.Requests[st.req]
	rr.QueueS, rr.TTFTS, rr.TBTS, rr.E2ES = st.promptStart-st.arrival, ttft, tbt, e2e
	rr.SchedDelayS, rr.TBTReferenceS, rr.MaxGapS = sched, tbtRef, st.maxGap
	rr.Transferred, rr.TransferS, rr.Borrowed, rr.Preemptions = st.transferred, st.xfer, st.borrowed, int(st.preemptTotal)
}

func (s *sim) finishResult() *Result {
	res := s.out
	res.Completed = s.done
	if res.Aborted || res.Stopped {
		// Cut mid-run: which gaps were counted would depend on where
		// the cut fell in a run's end (see Result.ITL).
		res.ITL = quantile.Sketch{}
	}
	res.Machines = make([]MachineResult, len(s.m))
	poolName := [...]Pool{poolPrompt: PoolPrompt, poolToken: PoolToken, poolMixed: PoolMixed, poolBaseline: PoolBaseline}
	for i := range s.m {
		m := &s.m[i]
		mr := MachineResult{
			ID: i, Type: m.typ.Name, Pool: poolName[m.home], PoolMoves: m.moves, BusyS: m.busyS,
			PromptIters: m.iters[0], DecodeIters: m.iters[1], MixedIters: m.iters[2],
			PeakMemoryBytes: m.peak, CapacityBytes: m.capacity,
			Provenance: s.cl.TokenProvenance.String(),
		}
		if m.home == poolPrompt || m.home == poolBaseline {
			mr.Provenance = s.cl.PromptProvenance.String()
		}
		switch p, d := m.iters[0] > 0, m.iters[1] > 0; {
		case m.iters[2] > 0 || (p && d):
			mr.Role = RoleMixed
		case p:
			mr.Role = RolePrompt
		case d:
			mr.Role = RoleToken
		default:
			mr.Role = RoleIdle
		}
		for tok, sec := range m.batchTokensS {
			if sec != 0 {
				mr.BatchTokens = append(mr.BatchTokens, TokenTime{Tokens: tok, S: sec})
			}
		}
		res.Machines[i] = mr
	}
	s.energyResult(res) // energy.go
	return res
}

// insertByArrival inserts request r (a slot) into q, which is kept in
// request (arrival) order, as the reference keeps its pending requests:
// last, usually; otherwise where a bisection puts it (an overloaded
// machine's queue holds thousands).
func (s *sim) insertByArrival(q []int32, r int32) []int32 {
	req := s.st[r].req
	if n := len(q); n == 0 || s.st[q[n-1]].req < req {
		return append(q, r) // nothing moves
	}
	i, _ := slices.BinarySearchFunc(q, req, func(slot, req int32) int { return cmp.Compare(s.st[slot].req, req) })
	return slices.Insert(q, i, r)
}

// stream adds request i (of the workload, arriving at arrival) with
// latencies l to the Summary of a streamed run (Options.Streamed).
func (s *sim) stream(i int, arrival float64, l RequestLatency) {
	sm := s.out.Summary
	sm.Finished++
	sm.OutputTokens += int64(l.OutputTokens)
	sm.TTFT.Add(l.TTFTS)
	sm.E2E.Add(l.E2ES)
	sm.TBTReference.Add(l.TBTReference())
	sm.Queue.Add(l.QueueS)
	sm.SchedDelay.Add(l.SchedDelayS)
	if l.OutputTokens > 1 {
		sm.TBT.Add(l.TBT())
		sm.MaxGap.Add(l.MaxGapS)
	}
	n := len(s.reqs)
	if i < n/2 {
		sm.FirstHalf.Add(l.SchedDelayS)
	} else if i >= n-n/10 {
		sm.LastTenth.Add(l.SchedDelayS)
	}
	decode := max(l.SchedDelayS-l.QueueS, 0)
	if arrival < s.quarter[0] {
		sm.EarlyPromptWait.Add(l.QueueS)
		sm.EarlyDecodeWait.Add(decode)
	} else if arrival >= s.quarter[1] {
		sm.LatePromptWait.Add(l.QueueS)
		sm.LateDecodeWait.Add(decode)
	}
}
