package evaluator

// mixedPolicy is Orca-style mixed batching, SPEC §5's machine-level
// scheduler: (1) the starvation guard, (2) waiting prompts first come
// first served until the next would pass the token cap (the first is
// always taken), (3) preempted decodes, (4) the decodes of the previous
// batch, (5) the first task of every other pending request. Each step
// stops at the first task over a limit or whose KV-cache does not fit.
type mixedPolicy struct{}

func (mixedPolicy) form(s *sim, m *machine) {
	b := s.newBuilder(m, s.opt.MaxBatchTokens)
	// (1) starvation guard
	b.starvationGuard()
	// (2) waiting prompts, first come first served
	for _, r := range m.queue {
		if s.st[r].phase == phWaiting && !b.take(r) {
			break
		}
	}
	// (3) preempted decodes
	for _, r := range m.preempted {
		if !b.take(r) {
			break
		}
	}
	// (4) decodes of the previous batch
	for _, r := range b.prev {
		if !b.take(r) {
			break
		}
	}
	// (5) the first task of every other pending request. Waiting prompts
	// had their first-come-first-served turn in step 2; skipping them here
	// keeps a prompt that does not fit memory from blocking the decodes
	// queued behind it, whose memory is already promised (otherwise a
	// mixed-pool machine can deadlock).
	for _, r := range m.queue {
		if s.st[r].phase != phWaiting && !b.take(r) {
			break
		}
	}
	b.settle(true, true)
}

// cuts: a prompt always cuts a decode run; a decode only when the batch
// has room for it.
//
// SPEC §5: new work cuts the run when the batch has room for it; a prompt
// cuts a run that holds no prompt (a decode run) even when it would not
// fit the token budget. (The reference simulator's code lets a prompt
// longer than the budget wait for the run to end, an artifact of its
// contiguous-iteration shortcut that a per-iteration scheduler does not
// have; the specification, which splitplan follows, has it cut the run.)
func (mixedPolicy) reference() bool { return true }

// starvedFirst: the starvation guard takes the starved decodes first.
func (mixedPolicy) starvedFirst() bool { return true }

// decodesJoin: the queued decodes join within the request and token caps
// (a decode is one token).
func (mixedPolicy) decodesJoin(s *sim, m *machine, n int) bool {
	n += len(m.queue)
	return n <= s.opt.MaxBatchRequests && n <= s.opt.MaxBatchTokens && s.queuedDecodesJoin(m)
}

func (mixedPolicy) cuts(s *sim, m *machine, r int32) bool {
	return cutsOnAnyPrompt(s, m, r)
}

// cutsOnAnyPrompt is the cut rule of the policies that take any prompt
// at the next boundary: a prompt always cuts a decode run, a decode when
// the batch has room.
func cutsOnAnyPrompt(s *sim, m *machine, r int32) bool {
	return s.st[r].phase == phWaiting || len(m.batch) < s.opt.MaxBatchRequests
}

// startAlone is mixed batching's shortcut for the run of an idle machine m
// whose only task is r, one whole prompt waiting (an arrival at an idle
// prompt machine, the common case): the prompt alone, as mixedPolicy.form
// forms it (the first prompt of a batch is taken whatever its length) and
// begin starts it, when its KV-cache fits. It reports false, having
// changed nothing, in every other case, left to the policy. (The caller
// takes r out of m's queue, or never puts it there: see arrive.)
func (mixedPolicy) startAlone(s *sim, m *machine, r int32, now float64) bool {
	st := &s.st[r]
	if st.phase != phWaiting || st.prefilled != 0 || s.opt.formEveryBatch {
		return false
	}
	if s.opt.MaxBatchRequests < 1 || !m.reserve(st) {
		return false // left out: form counts it
	}
	st.chunk = st.prompt
	m.batch = append(m.batch, r) // (empty before: the callers checked)
	m.noneStarved = false
	s.startPrompt(st, now)
	m.peak = max(m.peak, m.used)
	d, ex := m.perf.PromptTime(int(st.chunk))
	s.schedule(m, now, int(st.chunk), 0, 0, 1, d, ex)
	return true
}

// joinWaiting is mixed batching's shortcut that forms and starts m's next
// batch when its
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
// prompt, a prompt partly prefilled, an empty batch.
// With prefix, the starved decodes of the previous batch are its first
// starvedKept (as the starvation guard ordered them; a lazy batch's
// always are), taken as they stand instead of sought member by member.
//
// With lazy (m's batch is lazy: decodes only, its starvedKept starved
// ones first), it also reports false, having changed nothing, when a
// queued decode is starved, and otherwise keeps the batch lazy: the
// prompts it takes are marked lazyPrompt and the decodes that join take
// their completion keys.
func (mixedPolicy) joinWaiting(s *sim, m *machine, now float64, ctx int64, iters, starvedKept int, prefix, lazy bool) bool {
	if len(m.queue) == 0 {
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
	m.noneStarved = false
	m.peak = max(m.peak, m.used)
	s.launch(m, now, prompts, decodes, ctx, iters, 0, false)
	if lazy {
		foldFirstGaps(s, m, joined)
	}
	return true
}
