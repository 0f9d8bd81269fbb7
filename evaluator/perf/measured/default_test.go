package measured

import (
	"os"
	"reflect"
	"testing"
)

// TestDefaultMatchesTOML: the generated Go values are the entries of
// default_calibration.toml exactly, as ReadTOML reads (and validates) them.
func TestDefaultMatchesTOML(t *testing.T) {
	t.Parallel()
	f, err := os.Open("default_calibration.toml")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	cal, err := ReadTOML(f, "default_calibration.toml")
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(cal.Entries, Default().Entries) {
		t.Error("default_calibration.go differs from default_calibration.toml; run go run ./internal/gencal -go-only")
	}
	d := Default()
	d.Entries[0].GPU = "changed"
	if Default().Entries[0].GPU == "changed" {
		t.Error("Default returned shared entries")
	}
}
