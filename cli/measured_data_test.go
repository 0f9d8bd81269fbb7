package cli

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// TestShippedMeasuredDataFresh: the measured-serving data shipped in
// data/measured-serving/ (so that perf validate/calibrate --measured work
// from a fresh clone) is byte-identical to ../shared/data/measured-serving/
// when that directory is beside the repository; skipped otherwise. It also
// checks that the shipped copy carries its licence and NOTICE.
func TestShippedMeasuredDataFresh(t *testing.T) {
	const shipped = "data/measured-serving"
	for _, name := range []string{"LICENSE-Apache-2.0.txt", "NOTICE", "README.md"} {
		if fi, err := os.Stat(filepath.Join(shipped, name)); err != nil || fi.Size() == 0 {
			t.Errorf("%s/%s missing or empty: %v", shipped, name, err)
		}
	}
	const shared = "../shared/data/measured-serving"
	if _, err := os.Stat(shared); err != nil {
		t.Skipf("%s not beside the repository: %v", shared, err)
	}
	for _, name := range []string{"serving_benchmarks.csv", "gpus.csv", "models.csv", "README.md", "LICENSE-Apache-2.0.txt"} {
		want, err := os.ReadFile(filepath.Join(shared, name))
		if err != nil {
			t.Errorf("read shared %s: %v", name, err)
			continue
		}
		got, err := os.ReadFile(filepath.Join(shipped, name))
		if err != nil {
			t.Errorf("read shipped %s: %v", name, err)
			continue
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s/%s (%d bytes) differs from %s/%s (%d bytes): copy it again", shipped, name, len(got), shared, name, len(want))
		}
	}
}

// TestShippedMeasuredDataValidates: perf validate --measured runs on the
// in-repository copy (the command the README and guide show).
func TestShippedMeasuredDataValidates(t *testing.T) {
	if testing.Short() {
		t.Skip("reads the full 1.7 MB benchmark file")
	}
	code, out, errs := runPerf(t, "validate", "--measured", "data/measured-serving/serving_benchmarks.csv")
	if code != 0 || len(out) == 0 {
		t.Fatalf("exit %d, stdout %d bytes, stderr %q", code, len(out), errs)
	}
}
