// Package slo turns simulated latencies into verdicts: percentiles over
// requests (linear interpolation between order statistics), latency
// summaries of a simulation, and the SLO targets checked against them.
//
// The metrics are the Splitwise paper's TTFT, TBT (the mean gap; "tpot"
// is its alias) and E2E, and the token-level ITL (every gap,
// token-weighted, streamed into a quantile sketch by the simulator),
// Stall (a request's longest gap) and Queue (its scheduling delay). Named
// sets of targets (NamedSet: "paper", the default nine; "tokens";
// "goodput") or explicit key lists (ParseSet) choose what a Spec bounds.
// Goodput judges per-request limits jointly: the fraction of requests
// that meet all of them at once against an attainment.
package slo
