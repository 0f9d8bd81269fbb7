package evaluator

import (
	"splitplan/evaluator/perf"
	"splitplan/evaluator/perf/power"
	"splitplan/traces"
)

// reqState is a live request's progress. The simulator keeps one per
// request from its arrival to its end, in a slot of sim.st that the next
// arrival reuses; queues, batches and events name requests by slot.
type reqState struct {
	// Hot: read on every batch formation and iteration end; kept in the
	// first 64 bytes so one cache line serves the scheduler's loops.
	lastToken, maxGap                 float64
	promptKV, outputKV                int64
	prompt, output                    int32
	generated                         int32
	tm                                int32
	preempt                           int32
	mark                              uint32 // batch-formation stamp
	phase                             uint8
	outputHeld, transferred, borrowed bool
	req                               int32 // the request's index in the workload

	// Cold: written once or twice per request, or read only while its
	// prompt runs.
	arrival, promptStart, firstToken, xfer float64
	decodeReady, decodeStart               float64
	pm                                     int32
	// preemptTotal counts the left-outs of both tasks (preempt is the
	// current task's, as the reference counts them).
	preemptTotal     int32
	prefilled, chunk int32 // prompt tokens done; in the running iteration
}

// machine is one machine's scheduler state.
type machine struct {
	id       int32
	typ      *MachineType
	perf     perf.IterationModel
	home     int8
	pool     int8
	capacity int64 // KV-cache bytes
	used     int64 // KV-cache bytes reserved (what the reference counts)
	// committed is used plus the output KV-cache promised to requests
	// whose decoding will start here; admission checks it, so a started
	// request can always finish (no memory deadlock).
	committed int64
	// The cluster scheduler's view of the machine is in sim.load[id].

	queue     []int32 // tasks that have not started here, in arrival order
	preempted []int32 // decodes left out of a batch
	batch     []int32 // the running batch
	spare     []int32
	waitXfer  []int32 // transfers in, waiting for memory (FIFO)

	busy bool
	// noneStarved reports, while endRun has the next batch formed, that
	// no task of the previous one is starved (left out MaxPreemptions
	// times).
	noneStarved bool
	runStart    float64
	iterDur     float64
	runIters    int
	runPrompts  int // prompt tokens in the running iteration
	runDecodes  int
	runExtrap   bool
	ver         uint32
	busyS       float64
	iters       [3]int64 // prompt, decode, mixed
	moves       int
	peak        int64
	// batchTokensS[n] is the time spent on iterations of n batched tokens.
	batchTokensS []float64
	// budget and limitS are the sarathi policy's token budget and
	// iteration-time limit (0: none) on this machine.
	budget int
	limitS float64
	// pw is the machine type's power model (nil: no energy); energyJ the
	// energy of its runs so far; runCtx the running decodes' context.
	pw      *power.Model
	energyJ float64
	runCtx  int64

	// lazyRun is the machine's lazy-run state (lazy.go), one value.
	lazyRun
}

type sim struct {
	cl  Cluster
	opt Options
	// quarter holds the ends of the first and the start of the last
	// quarter of the arrivals' span (Options.Streamed: Summary's waits).
	quarter [2]float64
	reqs    []traces.Request
	// st holds the live requests' states; free lists its free slots.
	st   []reqState
	free []int32
	m    []machine
	// load[i] is machine i's load as the cluster scheduler sees it, kept
	// apart from the machines so that its scans over a pool stay in a
	// few cache lines.
	load []machineLoad
	// unloaded has bit id set when machine id has no pending tokens
	// (load[id][byPending] == 0): the least-pending machine of a pool then
	// is its first such machine, found a word at a time.
	unloaded []uint64
	// pools[p] lists pool p's machines in the pool's order (a baseline's
	// every machine in pools[poolBaseline]).
	pools [5][]int32
	// inOrder[p] reports that pools[p] lists consecutive ids, as it does
	// until a machine moves: its scans then read load directly.
	inOrder [5]bool
	// indexed[p] reports that pool p, of indexMin machines or more,
	// keeps its blocks' least loads in blocks (route.go), which
	// leastLoaded reads instead of scanning the pool; anyIndexed reports
	// some pool indexed.
	indexed    [5]bool
	anyIndexed bool
	q          eventQueue
	stamp      uint32
	out        *Result
	done       int
	// policy is the batching policy of baseline and mixed-pool machines
	// (policyFor).
	policy batchPolicy
	// abort is set when a wait exceeded Options.AbortDelayS, or when
	// Options.Stop stops the run.
	abort bool
	// stop is the progress against Options.Stop (nil without); the event
	// loop looks at it at most every stopCheckEvents events (checkStop).
	stop *stopState
	// kv is the KV-cache size of one token in bytes.
	kv int64
	// fin is finishLazy's list of the members that finish; joining
	// joinWaiting's of the queued decodes that join.
	fin, joining []int32
	// onStopCheck, when set (by the tests), is told at every check of
	// Options.Stop of each live request and its latency bounds.
	onStopCheck func(st *reqState, ttft, e2e, tbt float64)
	// onRun, when set (by the tests), is told of every run started, its
	// batch in m.batch in order.
	onRun func(m *machine, now float64)
	// lazyStarvedStarts counts the lazy runs started with starved decodes
	// (for the tests: the equivalence test checks it exercises them).
	lazyStarvedStarts int
	// starvedPromptJoins counts the joins (joinWaiting) that took or left
	// out starved prompts (for the tests, likewise).
	starvedPromptJoins int
	// scale is the run's scaling state (nil: every machine serves the
	// whole run; Options.Scaling).
	scale *scaler
	// base reports a baseline design (cl.Design.IsBaseline, read at every
	// arrival: the method copies the design to answer).
	base bool
	// links[a][b] is Cluster.Links[a][b] (0: the prompt machines' type,
	// 1: the token machines'); in compat mode every link has
	// Options.CompatBandwidthBytesPerS.
	links [2][2]struct{ bytesPerS, layerwiseS float64 }
	// layerwiseFrom is the smallest prompt whose transfer goes layer by
	// layer (transferTime): every prompt, none, or from
	// Options.LayerwiseMinPromptTokens, as Options.Transfer says.
	layerwiseFrom int
	blocks        blockIndex
}
