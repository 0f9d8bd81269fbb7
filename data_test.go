package main

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// TestShippedMeasuredDataIsFresh: the measured serving benchmarks shipped
// in data/measured-serving (so perf validate and perf calibrate run from a
// fresh clone) are byte-identical to ../shared/data/measured-serving, and
// carry their licence and NOTICE.
func TestShippedMeasuredDataIsFresh(t *testing.T) {
	for _, f := range []string{"LICENSE-Apache-2.0.txt", "NOTICE"} {
		if _, err := os.Stat(filepath.Join("data/measured-serving", f)); err != nil {
			t.Errorf("data/measured-serving: %v", err)
		}
	}
	shared := "../shared/data/measured-serving"
	entries, err := os.ReadDir(shared)
	if err != nil {
		t.Skipf("../shared is absent: %v", err)
	}
	for _, e := range entries {
		want, err := os.ReadFile(filepath.Join(shared, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		got, err := os.ReadFile(filepath.Join("data/measured-serving", e.Name()))
		if err != nil {
			t.Errorf("data/measured-serving/%s is missing: copy it from %s", e.Name(), shared)
			continue
		}
		if !bytes.Equal(got, want) {
			t.Errorf("data/measured-serving/%s differs from %s: copy it again", e.Name(), shared)
		}
	}
}
