package evaluator

// prefillFirstPolicy is vLLM's prefill-prioritizing batching. At each
// iteration boundary, if prompts are waiting and the first of them fits
// in memory, the iteration is prompt-only: starved prompts, then waiting
// prompts first come first served up to the token cap (the first always
// taken); every decode is paused — it keeps its KV-cache and waits in
// m.preempted, which is a generation stall, not a preemption, so it does
// not count towards the starvation guard. Otherwise the iteration is
// decode-only: mixed batching's steps without prompts (starved decodes,
// preempted decodes, the previous batch, decodes queued here), as a run
// of several iterations that the next arriving prompt cuts.
type prefillFirstPolicy struct{ noShortcuts }

func (prefillFirstPolicy) form(s *sim, m *machine) {
	b := s.newBuilder(m, s.opt.MaxBatchTokens)
	for _, r := range m.queue {
		if s.st[r].phase == phWaiting && b.starved(r) && !b.take(r) {
			break
		}
	}
	for _, r := range m.queue {
		if s.st[r].phase == phWaiting && !b.take(r) {
			break
		}
	}
	if b.hasPrompt {
		b.settle(false, true) // decodes are paused, not preempted
		return
	}
	b.takeStarvedDecodes(m)
	b.takeRunningDecodes(m)
	b.settle(true, true)
}

func (prefillFirstPolicy) reference() bool { return false }

// decodesJoin: as mixed batching's (decodes only: no prompt to put first).
func (prefillFirstPolicy) decodesJoin(s *sim, m *machine, n int) bool {
	return mixedPolicy{}.decodesJoin(s, m, n)
}

func (prefillFirstPolicy) cuts(s *sim, m *machine, r int32) bool {
	return cutsOnAnyPrompt(s, m, r)
}
