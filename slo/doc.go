// Package slo turns simulated latencies into verdicts: percentiles over
// requests (linear interpolation between order statistics), latency
// summaries of a simulation, and the SLO targets checked against them.
package slo
