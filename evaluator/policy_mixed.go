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
