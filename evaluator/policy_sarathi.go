package evaluator

// sarathiPolicy is Sarathi-Serve's stall-free batching with chunked
// prefills. Each iteration takes, within the machine's token budget (a
// decode counts 1 token, a chunk its tokens) and the batch-size cap:
// (1) starved decodes (left out MaxPreemptions times), (2) every running
// decode — preempted ones, the previous batch's, then decodes queued here
// after a KV-cache transfer — (3) the next chunk of every partly
// prefilled prompt, (4) chunks of new prompts, first come first served. A prompt reserves its whole KV-cache
// with its first chunk; its first token is produced when its last chunk
// ends, and TTFT counts to then. An iteration holding chunks and decodes
// is a mixed iteration. Its time is the performance model's time for the
// batch's tokens plus the re-read overhead of every chunk (chunkExtra).
// Prompts, new or partly prefilled, wait behind the decodes and the
// budget first come first served: left out, they are not preempted and do
// not count towards the starvation guard, which only orders decodes
// (otherwise a prompt behind a long chunked one would soon jump ahead of
// the running decodes and stall them). They still progress: in a
// baseline new decodes only come from finished prompts, so when the
// decodes fill the budget they drain; and with a TBT SLO a one-token
// chunk fits beside any decodes that fit the derived budget.
//
// The token budget is Options.TokenBudget, or, when Options.TBTSLOS is
// set, the largest budget whose iteration time on the machine's type
// stays within the SLO (deriveBudget); with an SLO a chunk whose re-read
// overhead would push the iteration past it is shortened as well.
type sarathiPolicy struct{ noShortcuts }

func (sarathiPolicy) form(s *sim, m *machine) {
	b := s.newBuilder(m, m.budget)
	// (1) starvation guard (decodes only: prompts are never preempted).
	// When every waiting task fits the budget and the batch-size cap,
	// step 2 takes every decode anyway and the order does not matter.
	if n := len(b.prev) + len(m.preempted) + len(m.queue); n > b.maxTok || n > b.maxReq {
		b.takeStarvedDecodes(m)
	}
	// (2) every running decode
	b.takeRunningDecodes(m)
	// (3) the next chunk of partly prefilled prompts (those left out
	// last time first)
	for _, list := range [2][]int32{m.preempted, b.prev} {
		for _, r := range list {
			if s.st[r].phase == phPrompt && !b.takeChunk(r) {
				break
			}
		}
	}
	// (4) new prompts, first come first served, chunked
	for _, r := range m.queue {
		if s.st[r].phase == phWaiting && !b.takeChunk(r) {
			break
		}
	}
	b.settle(true, false)
}

func (sarathiPolicy) reference() bool { return false }

// decodesJoin: the queued decodes join within the request cap and the
// machine's token budget (a machine that moved pools may face a smaller
// budget than its batch).
func (sarathiPolicy) decodesJoin(s *sim, m *machine, n int) bool {
	n += len(m.queue)
	return n <= s.opt.MaxBatchRequests && n <= m.budget && s.queuedDecodesJoin(m)
}

func (sarathiPolicy) cuts(s *sim, m *machine, r int32) bool {
	return cutsOnAnyPrompt(s, m, r)
}
