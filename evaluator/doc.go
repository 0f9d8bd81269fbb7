// Package evaluator simulates one cluster serving one workload: a
// deterministic discrete-event simulation of the cluster-level scheduler
// (request routing, Splitwise's prompt, token and mixed pools), the
// machine-level scheduler of every machine (continuous batching with
// preemption and KV-cache memory, under a batching policy: Orca mixed
// batching by default, or request-level, prefill-first or Sarathi-Serve
// chunked prefills — see Policies) and KV-cache transfers, driven by a
// profiled performance model (package evaluator/perf). It returns
// per-request latencies and per-machine activity for the SLO check and the
// search.
//
// Events are batch iterations, arrivals and transfers; a decode-only batch
// runs all its identical iterations as one event, so the work per event
// does not depend on the number of tokens generated.
package evaluator
