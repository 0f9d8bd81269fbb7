// Package hw holds GPU spec sheets as data: memory capacity and bandwidth,
// dense tensor-core throughput per precision, power, and the links inside
// and between nodes, generated from the measured-serving data's gpus.csv.
//
// These are peak figures; the analytic performance model scales them by
// fitted efficiencies.
package hw

//go:generate go run ./internal/genhw
