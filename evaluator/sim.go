package evaluator

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math"
	"slices"

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
// soon after ctx is done (it looks every ctxCheckEvents events).
func EvaluateContext(ctx context.Context, cl Cluster, reqs []traces.Request, opts Options) (*Result, error) {
	if err := ctx.Err(); err != nil {
		// Done already: a search's queued simulations stop here, before
		// the setup (each machine's memory plan) that precedes the
		// event loop's first look at ctx.
		return nil, err
	}
	if opts.Scaling != nil && opts.Compat {
		return nil, errors.New("scaling is not modelled in reference compat mode")
	}
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
	if cl.PromptType.Perf == nil || cl.TokenType.Perf == nil {
		return nil, errors.New("cluster has no performance model")
	}
	if cl.Compat != opts.Compat {
		return nil, fmt.Errorf("%s: the cluster's models are resolved with compat %v, the options ask for compat %v", cl.Name, cl.Compat, opts.Compat)
	}
	base := cl.Baseline
	if cl.Prompt <= 0 || (!base && cl.Token <= 0) || (base && cl.Token != 0) {
		return nil, fmt.Errorf("%s: needs positive machine counts (got %d prompt, %d token)", cl.Name, cl.Prompt, cl.Token)
	}
	if len(reqs) == 0 {
		return nil, ErrNoRequests
	}
	if err := cl.Policy.validate(); err != nil {
		return nil, err
	}
	s := &sim{cl: cl, opt: opts, reqs: reqs, policy: policyTable[cl.Policy.Kind].p, base: base}
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
	kv := s.cl.KVBytesPerToken
	if kv <= 0 {
		return fmt.Errorf("%s: the KV-cache of a token must be a positive number of bytes, got %d", s.cl.Name, kv)
	}
	s.kv = kv
	capOf := func(mc *MachineType) int64 {
		if s.opt.KVCapacityTokens > 0 {
			return s.opt.KVCapacityTokens * kv
		}
		return mc.KVCapacityBytes
	}
	pt, tt := &s.cl.PromptType, &s.cl.TokenType
	for a := range s.links {
		for b := range s.links[a] {
			l := &s.links[a][b]
			l.bytesPerS, l.layerwiseS = s.cl.Links[a][b].BytesPerS, s.cl.Links[a][b].LayerwiseS
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
	for _, mc := range []*MachineType{pt, tt} {
		if s.opt.KVCapacityTokens == 0 && mc.Unfit != nil {
			return mc.Unfit // the resolver's reason: the memory model's sizes
		}
		if capOf(mc) <= 0 {
			return fmt.Errorf("a %s holds no KV-cache (%d bytes)", mc.Name, capOf(mc))
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
			m.typ, m.perf, m.home, m.pw = pt, pt.Perf, poolPrompt, pt.Power
		} else {
			m.typ, m.perf, m.home, m.pw = tt, tt.Perf, poolToken, tt.Power
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
	if s.opt.Scaling != nil {
		if err := s.startScaling(); err != nil {
			return err
		}
	}
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
	// Every request's result is written. Its pages fault in as they are
	// written: mapping them at once (package prefault, as traces does)
	// saved nothing measurable here, in the benchmarks or a whole simulate.
	if s.opt.Streamed {
		s.out = &Result{Summary: &Summary{}}
		if n := len(s.reqs); n > 0 {
			t0, t1 := s.reqs[0].Arrival, s.reqs[n-1].Arrival
			s.quarter = [2]float64{t0 + (t1-t0)/4, t1 - (t1-t0)/4}
		}
	} else if s.opt.LatenciesOnly {
		lat := s.opt.Latencies
		if cap(lat) >= len(s.reqs) {
			lat = lat[:len(s.reqs)]
			clear(lat)
		} else {
			lat = make([]RequestLatency, len(s.reqs))
		}
		s.out = &Result{Latencies: lat}
	} else {
		s.out = &Result{Requests: make([]RequestResult, len(s.reqs))}
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

// periodicChecks is the event loop's look around, every stopCheckEvents events (n
// counts them; nextT is the next arrival's time): at Options.Stop's
// limits, when their check is due, and, every ctxCheckEvents events, at
// ctx, whose error it returns.
func (s *sim) periodicChecks(ctx context.Context, n int, nextT float64) error {
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
			if err := s.periodicChecks(ctx, n, nextT); err != nil {
				return err
			}
			if s.abort {
				continue // stopped (the loop ends)
			}
		}
		if s.scale != nil && (next < len(reqs) || len(s.q.ev) > 0) {
			// Scaling actions come first at their time (a step's
			// machines serve from it), while anything is left to happen.
			if t := s.nextScale(); t <= nextT && (len(s.q.ev) == 0 || t <= s.q.ev[0].t) {
				s.scaleAt(t)
				continue
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
	if !pm.busy && len(pm.batch)+len(pm.queue)+len(pm.preempted) == 0 && s.policyFor(pm).startAlone(s, pm, r, now) {
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
	if !s.policyFor(m).cuts(s, m, r) {
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
	pol := s.policyFor(m)
	if len(m.batch) == 0 && len(m.preempted) == 0 && len(m.queue) == 1 && pol.startAlone(s, m, m.queue[0], now) {
		m.queue = m.queue[:0]
		return
	}
	if len(m.batch)+len(m.queue)+len(m.preempted) > 0 {
		pol.form(s, m) // (with nothing to take, every policy forms nothing)
	}
	m.noneStarved = false
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

// endRun accounts for m's finished run, advances its requests and starts
// the next run.
func (s *sim) endRun(m *machine, now float64) {
	s.scaledRun(m, now)
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
			m.noneStarved = false
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
	noneStarved := true // no task kept in the batch is starved
	starved := 0        // decodes kept in the batch that are starved
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
				noneStarved = noneStarved && st.preempt < starve
				keep = append(keep, r)
			}
			continue
		}
		g := firstEnd - st.lastToken
		if st.lastToken == m.runStart {
			fromStart++ // (the usual case: counted after the loop)
		} else {
			s.gap(g)
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
			noneStarved = false
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
		s.gaps(firstEnd-m.runStart, fromStart)
	}
	if k > 1 {
		s.gaps(d, (k-1)*m.runDecodes)
	}
	m.batch = m.batch[:len(keep)] // (keep is its prefix: the length alone is stored)
	// finish may have started transfers, but they queue nothing here
	// before they end; a decode that finished can only have freed room.
	fast = fast && !s.opt.formEveryBatch
	// Under mixed batching, starved decodes ahead of the rest of the batch
	// are where the starvation guard would put them, and the runs may be
	// lazy with them: decodes join after the batch, prompts after them.
	if fast && (noneStarved || pol.starvedFirst() && prefix) && len(m.preempted) == 0 {
		// The next runs are lazy (see machine.lazy) until one cannot
		// keep its batch: when only decodes join it (decodesJoin), or
		// prompts too under mixed batching (a lazy joinWaiting).
		join := len(keep)+len(m.queue) > 0 && pol.decodesJoin(s, m, len(keep))
		if join || len(m.queue) > 0 {
			s.startLazy(m, ctx, iters, starved)
			if join {
				s.joinQueued(m, now, iters)
				return
			}
			if pol.joinWaiting(s, m, now, ctx, iters, starved, true, true) {
				return
			}
			m.lazy = false // (joinWaiting changed nothing)
		}
	}
	if fast && len(m.preempted) == 0 && pol.joinWaiting(s, m, now, ctx, iters, starved, prefix, false) {
		return
	}
	m.noneStarved = noneStarved
	s.startRun(m, now)
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
