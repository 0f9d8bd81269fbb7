package measured

import (
	_ "embed"
	"slices"
	"strings"
	"sync"
)

//go:generate go run ./internal/gencal

//go:embed default_calibration.toml
var defaultTOML string

var defaultCal struct {
	once sync.Once
	cal  Calibration
}

// Default returns the calibration fitted on the shipped serving benchmarks
// by internal/gencal (embedded; no files needed at run time). The embedded
// file is decoded once, as perf.Builtin's; every call returns a copy the
// caller may change.
func Default() Calibration {
	defaultCal.once.Do(func() {
		c, err := ReadTOML(strings.NewReader(defaultTOML), "default_calibration.toml")
		if err != nil {
			// The file is generated, validated by the generator and read by the tests.
			panic("measured: embedded default_calibration.toml is invalid: " + err.Error())
		}
		defaultCal.cal = c
	})
	return Calibration{Entries: slices.Clone(defaultCal.cal.Entries)}
}
