// Package search finds, for every cluster design, the machine counts that
// best serve a workload within the SLOs: the cheapest or leanest cluster
// at a rate (iso-throughput), the one with the highest capacity within a
// power or cost budget (iso-power, iso-cost), or the best throughput per
// dollar at saturation (batch).
//
// The search is a pipeline: enumerate the design space (prompt × token
// machines; machines for a baseline) → bound (a safe analytic capacity
// bound prunes hopeless points) → simulate (package evaluator) → verdict
// (package slo) → objective → best. Feasibility grows with every machine
// count, so the search walks the feasibility frontier instead of the grid;
// Exhaustive evaluates every point and returns the same optimum.
package search
