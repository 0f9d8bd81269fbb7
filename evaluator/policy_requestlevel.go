package evaluator

// requestLevelPolicy is FasterTransformer's request-level batching. When
// the machine's previous batch has drained, a new one is admitted by mixed
// batching's steps (starvation guard, prompts first come first served
// within the request and token caps and memory, then decodes waiting here,
// which only a Splitwise mixed-pool machine has); its prompts run in one
// iteration (mixed with those decodes, if any), then the batch decodes
// until every request in it has finished. Nothing joins a running batch
// and arrivals never cut its runs, so nothing is ever preempted out of it;
// requests left out at an admission count one preemption each.
type requestLevelPolicy struct{ noShortcuts }

func (requestLevelPolicy) form(s *sim, m *machine) {
	if len(m.batch) > 0 {
		return // the admitted batch runs to completion
	}
	mixedPolicy{}.form(s, m)
}

func (requestLevelPolicy) cuts(*sim, *machine, int32) bool { return false }

func (requestLevelPolicy) reference() bool { return false }

// decodesJoin: the admitted batch runs to completion; nothing joins it.
func (requestLevelPolicy) decodesJoin(s *sim, m *machine, n int) bool {
	return n > 0 && len(m.queue) == 0
}
