package perf

import "splitplan/internal/enum"

// ProvenanceKind says where a performance model's numbers come from.
type ProvenanceKind int

const (
	// Profiled: fitted on profiling runs of this model on this hardware
	// at this tensor parallelism (the SplitwiseSim tables, or perf fit).
	Profiled ProvenanceKind = iota
	// Calibrated: the analytic model, with efficiencies fitted on
	// measured serving benchmarks of this GPU.
	Calibrated
	// SpecOnly: the analytic model on this GPU's spec sheet, with its
	// engine's shared efficiencies scaled to the sheet, else those of its
	// nearest calibrated relative (or defaults).
	SpecOnly
	// Measured: the analytic model whose kernel layer was fitted on this
	// GPU's own kernel measurements (perf fit --kernels, resolve.Source.Kernels)
	// instead of carried from the H100 by its spec sheet; the engine terms
	// as Calibrated's.
	Measured
)

var provenanceNames = [...]string{Profiled: "profiled", Calibrated: "calibrated", SpecOnly: "spec-only", Measured: "measured"}

// String is the kind's name: profiled, calibrated, spec-only or measured.
func (k ProvenanceKind) String() string {
	return enum.Name(provenanceNames[:], k, "ProvenanceKind")
}

// Provenance is where the performance model of a model on a machine type
// comes from, in words a report can print.
type Provenance struct {
	// Kind is profiled, calibrated, spec-only or measured.
	Kind ProvenanceKind
	// Source names the profile pair or the calibration used, e.g.
	// "bloom-176b/h100-80gb/tp8" or "shared vllm efficiencies scaled to
	// its spec sheet".
	Source string
	// Error is the validation error that goes with the source, e.g.
	// "held-out MAPE 3.1% prompt, 1.4% token" ("" when unknown).
	Error string
}

// String is "kind (source; error)".
func (p Provenance) String() string {
	return enum.Described(p.Kind.String(), p.Source, p.Error)
}
