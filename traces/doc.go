// Package traces holds the requests of an inference workload: it reads the
// Azure LLM inference and SplitwiseSim CSV trace formats, embeds the size
// distributions of the real Azure coding and conversation traces, and
// synthesizes Poisson workloads at a chosen rate from such a distribution.
//
// Times are float64 seconds from the start of the workload and token counts
// are ints of at least 1; percentiles interpolate linearly between order
// statistics.
package traces
