// Package perf is splitplan's performance model: how long one batch
// iteration takes on one machine type for one model.
//
// It reads profiling CSVs (one row per measured run, times in
// milliseconds), fits piecewise-linear curves per (model, hardware, tensor
// parallelism) pair, and answers the simulator's questions through the
// IterationModel interface, in seconds. Two fits are kept per pair: the
// default one and a compatibility one that reproduces the reference
// simulator SplitwiseSim exactly. The fitted knots of the shipped profiles
// are embedded (see Builtin); Validate measures a fit's error on held-out
// rows.
//
// The default model is physical by construction: more work never takes
// less time, and a batch never finishes faster than its slowest member
// alone. From the pair's knots (medians per profiled point, leaving out
// runs that did not execute as one batch, see Consistent) it builds, with
// s the least-squares slope of the batch-1 decode time against the
// context (the KV-cache read per context token, clamped at zero; see
// Pair.ContextSlope), P the isotonic (pool-adjacent-violators) fit of the
// prompt curve and D0 the isotonic fit of the decode curve less the
// KV-cache reads at the base context it was profiled at:
//
//	PromptTime(t)             = P(t)
//	DecodeTime(b, ctx)        = D0(b) + s·ctx
//	MixedTime(p, d, ctx)      = max(penalty·P(p+d), P(p), D0(d)) + s·ctx
//
// where ctx is the decodes' total context (0: each at the base context),
// every answer floored at MinSeconds.
//
// Conventions: time is float64 seconds, tokens are int, a curve
// extrapolates linearly past both ends and every answer says whether it
// was extrapolated (a curve evaluated past its knots, or a mean context
// per request outside the profiled contexts).
package perf

//go:generate go run ./internal/genbuiltin
