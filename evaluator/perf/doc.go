// Package perf is splitplan's performance model: how long one batch
// iteration takes on one machine type for one model.
//
// It reads profiling CSVs (one row per measured run, times in
// milliseconds), fits piecewise-linear curves per (model, hardware, tensor
// parallelism) pair, and answers the simulator's questions through the
// IterationModel interface, in seconds. Two fits are kept per pair: the
// default one (medians per profiled point, a decode curve over the batch
// size with a context-length correction) and a compatibility one that
// reproduces the reference simulator SplitwiseSim exactly. The fitted knots
// of the shipped profiles are embedded (see Builtin); Validate measures a
// fit's error on held-out rows.
//
// Conventions: time is float64 seconds, tokens are int, a curve
// extrapolates linearly past both ends and every answer says whether it
// was extrapolated.
package perf

//go:generate go run ./internal/genbuiltin
