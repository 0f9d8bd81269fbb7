package evaluator

import "math"

// Marks in machine.doneAt for a lazy batch's members that are not lazy
// decodes: a prompt (lazyPrompt), or a decode brought up to date that
// runs on outside the lazy runs (upToDate).
const (
	lazyPrompt int32 = -1
	upToDate   int32 = -2
)

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
		s.gap(g)
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

// endLazyRun is endRun for a lazy run (see machine.lazy): in batch order,
// its prompts (taken by a lazy joinWaiting) advance as endRun advances them
// and the decodes that finish are brought up to date and finish; the
// batch runs again with the decodes queued at m, lazy, when decodesJoin
// allows it, or with the prompts and decodes waiting here when joinWaiting
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
		s.gaps(g, n) // (the joiners': foldFirstGaps)
	}
	if k > 1 {
		s.gaps(d, (k-1)*m.runDecodes)
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
	noneStarved := true // no prompt kept in the batch is starved (the decodes: lazyStarved)
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
				noneStarved = noneStarved && !s.starved(&s.st[r])
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
	if fast && len(m.batch)+len(m.queue) > 0 && pol.decodesJoin(s, m, len(m.batch)) {
		s.joinQueued(m, now, iters)
		return
	}
	if fast && pol.joinWaiting(s, m, now, m.lazyCtx, iters, m.lazyStarved, true, true) {
		return
	}
	for i, r := range m.batch {
		if m.doneAt[i] >= 0 {
			s.catchUp(m, &s.st[r], m.doneAt[i], now)
		}
	}
	m.lazy = false
	if fast && pol.joinWaiting(s, m, now, m.lazyCtx, iters, m.lazyStarved, true, false) {
		return
	}
	m.noneStarved = m.lazyStarved == 0 && noneStarved
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
	m.lazyStarved -= boolInt(s.starved(st))
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

// lazyRun is a machine's lazy decode progress, one value embedded in
// machine (its fields read as the machine's).
//
// Lazy decode progress. A run that ends with only started decodes in
// its batch, nothing preempted and only decodes queued here runs the
// same batch again, the queued decodes added (endRun's fast path).
// While such runs follow each other (lazy), a member's generated,
// lastToken and maxGap stay as they were when it entered them, at
// decIters c0 = doneAt[i] − output + generated, and are brought up to
// date when it leaves: it has run decIters − c0 more iterations, the
// last ending now, and its largest gap since is gaps.since(c0). A run
// end touches only the members that finish and the decodes that join.
type lazyRun struct {
	lazy bool
	// decIters counts the iterations of the machine's lazy runs.
	decIters int32
	// doneAt[i] is the decIters at which batch[i] will have generated its
	// whole output (lazy runs); minDone is the least of them.
	doneAt, doneSpare []int32
	minDone           int32
	// lazyPrompts counts the prompts in a lazy batch (see joinWaiting).
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
