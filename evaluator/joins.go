package evaluator

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
