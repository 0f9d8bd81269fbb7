package evaluator

import (
	"fmt"
	"slices"
	"splitplan/internal/quantile"
	"strings"
)

// RequestResult is what happened to one request.
type RequestResult struct {
	// ID is the request's ID in the workload.
	ID int
	// ArrivalS is the arrival time in seconds.
	ArrivalS float64
	// PromptTokens and OutputTokens are the request's sizes.
	PromptTokens, OutputTokens int
	// QueueS is the queueing delay: prompt start − arrival.
	QueueS float64
	// SchedDelayS is the time spent waiting to be scheduled: the queueing
	// delay plus the wait of its decode to start once it could (after
	// the prompt, or after the KV-cache transfer would have ended had it
	// started at once). Waits of preempted decodes show in the TBT instead.
	SchedDelayS float64
	// TTFTS is the time to first token: end of the prompt iteration − arrival.
	TTFTS float64
	// TBTS is the mean time between tokens, (E2E − TTFT) / (output − 1);
	// 0 for a single-token output.
	TBTS float64
	// TBTReferenceS is the reference simulator's figure, (E2E − TTFT) / output.
	TBTReferenceS float64
	// MaxGapS is the longest gap between two consecutive output tokens.
	MaxGapS float64
	// E2ES is the end-to-end latency: last token − arrival.
	E2ES float64
	// PromptMachine and TokenMachine are the machines of the two phases.
	PromptMachine, TokenMachine int
	// TransferS is the duration of the KV-cache transfer (0 without one).
	TransferS float64
	// Preemptions counts the times the request was left out of a batch.
	Preemptions int
	// Transferred reports whether the KV-cache moved between machines.
	Transferred bool
	// Borrowed reports whether a machine of the mixed pool served it.
	Borrowed bool
}

// RequestLatency is what the SLO check and a summary read of one request:
// a RequestResult's latencies and sizes, in 48 bytes instead of 128. With
// Options.LatenciesOnly a simulation keeps only these.
type RequestLatency struct {
	// TTFTS, QueueS, MaxGapS, E2ES and SchedDelayS are the RequestResult
	// fields of the same names (TBT and TBTReference compute the TBTs from
	// them, as the simulator does).
	TTFTS, QueueS, MaxGapS, E2ES, SchedDelayS float64
	// PromptTokens and OutputTokens are the request's sizes.
	PromptTokens, OutputTokens int32
}

// Pool is a machine's pool: a Splitwise cluster's prompt, token and mixed
// pools, or the one pool of a baseline.
type Pool int

// Pools, in the order reports list them.
const (
	PoolBaseline Pool = iota
	PoolPrompt
	PoolToken
	PoolMixed
)

var poolNames = [...]string{PoolBaseline: "baseline", PoolPrompt: "prompt", PoolToken: "token", PoolMixed: "mixed"}

// String is the pool's name as CSVs show it.
func (p Pool) String() string { return enumName(poolNames[:], int(p), "Pool") }

// MarshalText encodes the pool's name.
func (p Pool) MarshalText() ([]byte, error) { return []byte(p.String()), nil }

// UnmarshalText parses a pool's name.
func (p *Pool) UnmarshalText(b []byte) error {
	i, err := parseEnum(poolNames[:], string(b), "pool")
	*p = Pool(i)
	return err
}

// Role is the work a machine ran over a simulation.
type Role int

// Roles.
const (
	// RoleIdle ran no iteration.
	RoleIdle Role = iota
	// RolePrompt ran prompt iterations only.
	RolePrompt
	// RoleToken ran decode iterations only.
	RoleToken
	// RoleMixed ran both kinds, or mixed iterations.
	RoleMixed
)

var roleNames = [...]string{RoleIdle: "idle", RolePrompt: "prompt", RoleToken: "token", RoleMixed: "mixed"}

// String is the role's name as CSVs show it.
func (r Role) String() string { return enumName(roleNames[:], int(r), "Role") }

// MarshalText encodes the role's name.
func (r Role) MarshalText() ([]byte, error) { return []byte(r.String()), nil }

// UnmarshalText parses a role's name.
func (r *Role) UnmarshalText(b []byte) error {
	i, err := parseEnum(roleNames[:], string(b), "role")
	*r = Role(i)
	return err
}

// enumName is v's name in names, or "typ(v)" when v is out of the table or
// names no value (the convention of every splitplan enumeration).
func enumName(names []string, v int, typ string) string {
	if v >= 0 && v < len(names) && names[v] != "" {
		return names[v]
	}
	return fmt.Sprintf("%s(%d)", typ, v)
}

// parseEnum finds s among names, case-insensitively and without
// surrounding space (empty entries never match); the error names what was
// expected.
func parseEnum(names []string, s, what string) (int, error) {
	if i := slices.IndexFunc(names, func(n string) bool { return n != "" && strings.EqualFold(n, strings.TrimSpace(s)) }); i >= 0 {
		return i, nil
	}
	return 0, fmt.Errorf("unknown %s %q (one of %s)", what, s, strings.Join(names, ", "))
}

// TokenTime is the time a machine spent on iterations of one size.
type TokenTime struct {
	// Tokens is the batched tokens of the iterations (a prompt counts its
	// length, a decode 1).
	Tokens int
	// S is the time spent, in seconds.
	S float64
}

// MachineResult is what one machine did.
type MachineResult struct {
	// ID is the machine's index (prompt machines first, then token machines).
	ID int
	// Type is the machine type's name.
	Type string
	// Pool is the machine's home pool: PoolBaseline, PoolPrompt or PoolToken.
	Pool Pool
	// Role says what work it ran.
	Role Role
	// Provenance says where its machine type's iteration times come from.
	Provenance string
	// PoolMoves counts moves into and out of the mixed pool.
	PoolMoves int
	// BusyS is the time spent running iterations.
	BusyS float64
	// PromptIters, DecodeIters and MixedIters count iterations by kind.
	PromptIters, DecodeIters, MixedIters int64
	// PeakMemoryBytes is the highest KV-cache memory in use.
	PeakMemoryBytes int64
	// CapacityBytes is the KV-cache memory available.
	CapacityBytes int64
	// BatchTokens is the time spent at each batched-token count, by
	// ascending Tokens; recorded only with Options.RecordBatchTokens.
	BatchTokens []TokenTime
	// EnergyJ is the energy its GPUs drew over its powered time in
	// joules, IdleEnergyJ the part of it drawn between iterations (both 0
	// unless Result.EnergyKnown).
	EnergyJ, IdleEnergyJ float64
	// PoweredS is the time it was powered: the run, [0, Result.EndS],
	// unless Options.Scaling starts and stops it (then from its start, a
	// step's delay before it serves, to the end of its draining).
	PoweredS float64
	// StartingS is the part of PoweredS spent starting (a scale delay
	// before serving); 0 without Options.Scaling. Not in the machines CSV.
	StartingS float64
}

// Result is the outcome of one simulation.
type Result struct {
	// Requests holds one entry per request, in workload order (nil with
	// Options.LatenciesOnly). In an aborted run, a request that had not
	// ended has only its ID, arrival, sizes and machines (if it had
	// arrived); its latencies are zero.
	Requests []RequestResult
	// Latencies holds one entry per request, in workload order, with
	// Options.LatenciesOnly (else nil: Latency reads Requests).
	Latencies []RequestLatency
	// Machines holds one entry per machine.
	Machines []MachineResult
	// Summary, with Options.Streamed, holds the requests' latencies as
	// distributions (Requests and Latencies are then nil).
	Summary *Summary
	// ITL is the distribution of every gap between two consecutive
	// output tokens of every request, in seconds (the inter-token
	// latency, weighted by tokens: the first gap after the first token
	// included, a request of n output tokens counting n − 1 gaps),
	// streamed: a log-bucketed sketch whose quantiles are within 0.78% of
	// the exact ones. A run of k identical iterations adds its gaps at
	// once (quantile.Sketch.AddN). Empty in a run that was aborted or
	// stopped early: the gaps counted would depend on where the cut fell.
	ITL quantile.Sketch
	// Completed is the number of requests that finished (all of them).
	Completed int
	// EndS is the simulated time at which the last request finished.
	EndS float64
	// Events is the number of events processed.
	Events int64
	// Transfers counts KV-cache transfers; PoolMoves machine moves.
	Transfers, PoolMoves int
	// Preempted counts the finished requests left out of a batch at least
	// once; Borrowed those a machine of the mixed pool served.
	Preempted, Borrowed int
	// Extrapolations counts performance-model answers outside the
	// profiled range.
	Extrapolations int64
	// Aborted reports that the simulation stopped early because a wait
	// exceeded Options.AbortDelayS; AbortReason says which. Requests not
	// finished by then have zero results and Completed counts the rest.
	Aborted     bool
	AbortReason string
	// Stopped reports that the simulation stopped early because the
	// failure of a latency limit of Options.Stop was certain; StopReason
	// says which. Requests not finished by then have zero results, and
	// the machines' figures (busy time, energy) cover only the time
	// simulated.
	Stopped    bool
	StopReason string
	// StopLimit names the limit whose failure was certain ("P90 TBT"),
	// and StopS the simulated time it was certain at.
	StopLimit string
	StopS     float64
	// EnergyKnown reports that Options.Energy asked for the energy and
	// every machine type had a power model;
	// EnergyJ is then the machines' energy in joules: for each, Σ over its
	// iterations of their power × duration, plus its idle power × the rest
	// of [0, EndS] (energy.go).
	EnergyKnown bool
	EnergyJ     float64
	// IdleDrawW is the machines' idle draw in watts, all of them;
	// WorkEnergyJ the energy their iterations drew above it;
	// ArrivalWindowS the span of the arrivals (arrivalWindowS), 0 in an
	// autoscaled, stopped or aborted run. SteadyJ and AverageKW read them.
	IdleDrawW, WorkEnergyJ, ArrivalWindowS float64
}

// RequestCount is the number of requests simulated: the length of
// Requests, or of Latencies with Options.LatenciesOnly (0 with
// Options.Streamed: see Summary).
func (r *Result) RequestCount() int {
	if r.Requests != nil {
		return len(r.Requests)
	}
	return len(r.Latencies)
}

// Summary is what a simulation with Options.Streamed keeps of its
// requests: the distribution of each latency over the finished requests
// (as RequestLatency defines them: the TBT and the stall over requests of
// two or more output tokens), and the waits a saturation check compares.
type Summary struct {
	// Finished counts the finished requests; OutputTokens their tokens.
	Finished     int
	OutputTokens int64
	// The latencies' distributions, in seconds.
	TTFT, TBT, TBTReference, E2E, Queue, SchedDelay, MaxGap quantile.Sketch
	// FirstHalf and LastTenth are the scheduling delays of the first
	// half and the last tenth of the requests in workload order (the
	// drain check); the Early and Late waits those of the requests
	// arriving in the first and the last quarter of the arrivals' span:
	// the prompt wait (QueueS) and the decode wait (SchedDelayS − QueueS).
	FirstHalf, LastTenth                                             quantile.Sketch
	EarlyPromptWait, LatePromptWait, EarlyDecodeWait, LateDecodeWait quantile.Sketch
}

// Latency returns request i's latencies (0 ≤ i < RequestCount()), from
// Requests or Latencies, whichever the simulation kept.
func (r *Result) Latency(i int) RequestLatency {
	if r.Requests == nil {
		return r.Latencies[i]
	}
	return r.Requests[i].latency()
}

// TBT is the request's mean time between tokens, (E2E − TTFT) / (output
// − 1), 0 for one output token: RequestResult.TBTS, computed the same way
// from the same latencies.
func (l RequestLatency) TBT() float64 {
	if l.OutputTokens > 1 {
		return (l.E2ES - l.TTFTS) / float64(l.OutputTokens-1)
	}
	return 0
}

// TBTReference is the reference simulator's TBT figure of the request,
// (E2E − TTFT) / output: RequestResult.TBTReferenceS, computed the same
// way from the same latencies.
func (l RequestLatency) TBTReference() float64 {
	return (l.E2ES - l.TTFTS) / float64(l.OutputTokens)
}

// latency is the part of q that Options.LatenciesOnly keeps.
func (q *RequestResult) latency() RequestLatency {
	return RequestLatency{TTFTS: q.TTFTS, QueueS: q.QueueS, MaxGapS: q.MaxGapS, E2ES: q.E2ES,
		SchedDelayS: q.SchedDelayS, PromptTokens: int32(q.PromptTokens), OutputTokens: int32(q.OutputTokens)}
}
