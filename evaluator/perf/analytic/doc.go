// Package analytic is a physical iteration-time model for any architecture
// (package arch) on any GPU (package hw): each layer takes the longer of its
// compute time and its memory time (roofline), plus the tensor-parallel
// all-reduces and fixed overheads, with a handful of efficiencies fitted to
// profiles (FitProfile).
//
// A Model implements perf.IterationModel in O(1) per call: the per-layer
// sums are precomputed in closed form when the model is built.
package analytic
