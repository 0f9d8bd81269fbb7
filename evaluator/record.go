package evaluator

import "splitplan/internal/quantile"

// iterKind maps a run's (prompts > 0) | (decodes > 0)<<1 to its index in
// machine.iters: prompt 0, decode 1, mixed 2 (a run of neither counts as
// decode).
var iterKind = [4]uint8{1, 0, 1, 2}

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
	m.iters[iterKind[boolInt(prompts > 0)|boolInt(decodes > 0)<<1]] += int64(k)
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

// boolInt is 1 for true, 0 for false (a flag, not a branch).
func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
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

// gaps adds n gaps of g seconds to Result.ITL, unless Options.NoITL
// leaves them out.
func (s *sim) gaps(g float64, n int) {
	if !s.opt.NoITL {
		s.out.ITL.AddN(g, n)
	}
}

// gap adds one gap of g seconds to Result.ITL, unless Options.NoITL
// leaves it out.
func (s *sim) gap(g float64) {
	if !s.opt.NoITL {
		s.out.ITL.Add(g)
	}
}

// recordState is record for the request of state st, done at now: its
// figures computed from st and written in place.
func (s *sim) recordState(st *reqState, now float64) {
	l := RequestLatency{TTFTS: st.firstToken - st.arrival, QueueS: st.promptStart - st.arrival, MaxGapS: st.maxGap,
		E2ES: now - st.arrival, SchedDelayS: st.promptStart - st.arrival, PromptTokens: st.prompt, OutputTokens: st.output}
	if st.output > 1 {
		l.SchedDelayS += st.decodeStart - st.decodeReady
	}
	if st.preemptTotal > 0 {
		s.out.Preempted++
	}
	if st.borrowed {
		s.out.Borrowed++
	}
	switch {
	case s.opt.Streamed:
		s.stream(int(st.req), st.arrival, l)
	case s.opt.LatenciesOnly:
		s.out.Latencies[st.req] = l
	default:
		// (admit and arrive wrote the request's sizes, ID, arrival and
		// machines; the TBTs are computed as RequestLatency computes them.)
		rr := &s.out.Requests[st.req]
		rr.QueueS, rr.TTFTS, rr.TBTS, rr.E2ES = l.QueueS, l.TTFTS, l.TBT(), l.E2ES
		rr.SchedDelayS, rr.TBTReferenceS, rr.MaxGapS = l.SchedDelayS, l.TBTReference(), l.MaxGapS
		rr.Transferred, rr.TransferS, rr.Borrowed, rr.Preemptions = st.transferred, st.xfer, st.borrowed, int(st.preemptTotal)
	}
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
			PeakMemoryBytes: m.peak, CapacityBytes: m.capacity, PoweredS: s.poweredS(i, res.EndS), StartingS: s.startingS(i),
			Provenance: s.cl.TokenType.Provenance.String(),
		}
		if m.home == poolPrompt || m.home == poolBaseline {
			mr.Provenance = s.cl.PromptType.Provenance.String()
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
