// Package plots draws splitplan's figures with gonum/plot: latency against
// load, the design-space heatmap of one design, cost or power against
// throughput with Pareto frontiers, CDFs of batched tokens per machine
// role, and summary bars normalized to a baseline.
//
// Every function takes plain result data and writes one figure to a path;
// the format comes from the extension (.png or .svg) and the file is
// written through a temporary file and a rename. Figures are deterministic:
// the same input gives the same SVG bytes. Inputs with nothing to draw are
// rejected with an error wrapping ErrNoData (nothing at all) or
// ErrNoFeasible (only infeasible points), never drawn as a blank image.
package plots
