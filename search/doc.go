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
//
// Files by stage: goal.go (the goals), problem.go (the problem and its
// validation), run.go (Run: each design's search and the comparison of
// designs), region.go (the design space within a budget), bound.go (the
// analytic capacity bound), simulate.go (memoized simulations and
// verdicts), frontier.go (the least cost or power at a rate: frontier walk
// and bisections), capacity.go (rate bracketing and bisection; the
// throughput and batch goals' branch and bound), exhaustive.go (the
// exhaustive searches), load.go (RunLoad: clusters × rates, as sweep
// runs them; VerifyLoad: their passing rows over a longer run), verify.go
// (an optimum's check over a longer run, and the search past one that
// fails), robust.go (scenarios and robust plans).
package search
