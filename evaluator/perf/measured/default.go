package measured

import (
	_ "embed"
	"strings"
)

//go:generate go run ./internal/gencal

//go:embed default_calibration.toml
var defaultTOML string

// Default returns the calibration fitted on the shipped serving benchmarks
// by internal/gencal (embedded; no files needed at run time).
func Default() Calibration {
	c, err := ReadTOML(strings.NewReader(defaultTOML), "default_calibration.toml")
	if err != nil {
		// The generator validated it; a broken embed is a build defect.
		return Calibration{}
	}
	return c
}
