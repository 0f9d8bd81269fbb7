// Package power is splitplan's power model: the electrical power a machine's
// GPUs draw while idle and during each batch iteration, and how a power cap
// (a fraction of the GPUs' board power) slows an iteration down.
//
// Draw is per GPU a fraction of its board power (TDP): an idle floor plus
// terms proportional to the share of the iteration the GPU's HBM and its
// compute units are busy (from the analytic roofline model), fitted on the
// average and peak power of the A100 rows of the Splitwise profile and
// scaled by board power to other GPUs (labelled spec-only). A cap lowers
// the compute clock (CapCurve), which stretches compute-bound work and
// leaves memory-bound work alone; Capped applies it to any
// perf.IterationModel. Conventions: watts and seconds as float64, caps and
// draws as fractions of board power in (0, 1].
package power
