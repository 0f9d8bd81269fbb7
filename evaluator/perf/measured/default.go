package measured

import (
	"slices"
)

//go:generate go run ./internal/gencal

// Default returns the calibration fitted on the shipped serving benchmarks
// by internal/gencal (default_calibration.toml, compiled in as the Go
// values of default_calibration.go; no files needed at run time). Every
// call returns a copy the caller may change.
func Default() Calibration {
	return Calibration{Entries: slices.Clone(defaultEntries), Hosts: slices.Clone(defaultHosts)}
}
