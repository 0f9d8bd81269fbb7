// Package evaluator simulates one cluster serving one workload: a
// deterministic discrete-event simulation of the cluster-level scheduler
// (request routing, Splitwise's prompt, token and mixed pools), the
// machine-level scheduler of every machine (continuous batching with
// preemption and KV-cache memory, under a batching policy: Orca mixed
// batching by default, or request-level, prefill-first or Sarathi-Serve
// chunked prefills — see Policies) and KV-cache transfers, driven by the
// performance models of a resolved cluster (a Cluster: counts, KV-cache
// sizes, links and models as values; resolve.Cluster.Sim makes one from
// catalog names, and the simulator never looks a name up nor reads a
// catalog). It returns per-request
// latencies (or, streamed, their distributions), every gap between tokens
// and per-machine activity for the SLO check and the search.
//
// Events are batch iterations, arrivals and transfers; a decode-only batch
// runs all its identical iterations as one event, so the work per event
// does not depend on the number of tokens generated.
//
// # Reading guide
//
// Read sim.go first (the event loop, arrivals, how a run starts and ends,
// transfers, a request's finish), then policy.go (the batchPolicy
// interface: form, cuts and the shortcuts, with noShortcuts for a policy
// that has none) and policy_mixed.go (the default rule: its form and,
// beside it, its shortcuts startAlone, decodesJoin, joinWaiting), then
// lazy.go (lazy runs: a machine advancing a batch of decodes without
// touching its members). The rest: policy_*.go (the other policies),
// route.go (the cluster-level scheduler and its load index), joins.go
// (what the shortcuts share), record.go (what a finished request and a
// run leave in the Result), state.go (the state types), compat.go (the
// reference simulator's scheduler), energy.go, stop.go.
//
// # The contract the equivalence tests check
//
// Every shortcut gives exactly the simulation of forming every batch with
// the policy (Options.formEveryBatch, tests only): the same Result — every
// latency, largest gap, count and energy, and the same ITL gaps
// (quantile.Sketch.Equal: a lazy run adds its gaps in other groupings) —
// and the same runs started in the same order. The shortcuts are the lazy
// runs (TestLazyRunsChangeNothing, TestLazyRunsWithStarvedDecodes), each
// policy's own (startAlone, decodesJoin, joinWaiting: the kernel calls
// them through the policy and never names one, checked against forming
// every batch by TestRunEndShortcutsChangeNothing and against
// noShortcuts' answers by TestPolicyShortcutsChangeNothing), and the
// routing's load index (TestIndexedPoolsChangeNothing); invariant runs
// (checkInvariants) also check every run's memory, conservation and ITL
// (count, sum and largest gap against the requests).
//
// # Three iteration-level schedulers
//
// The project has three, each for its reason. The default scheduler
// (sim.go, with policy.go) is SPEC §5's rules, the one every answer uses.
// The compat scheduler (compat.go) mirrors SplitwiseSim's own queues rule
// by rule (COMPAT.md), so --compat splitwise-sim reproduces the published
// reference runs request by request; its differences are defects of the
// reference kept apart from the default. And package
// evaluator/perf/measured's schedule.go simulates a serving benchmark's
// closed loop of clients against an engine's batching rule, timing-free,
// so that the engine calibration can re-time one schedule per benchmark
// row at every step of its fit: a cluster never runs on it.
package evaluator
