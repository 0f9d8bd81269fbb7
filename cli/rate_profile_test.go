package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestConstantRateProfileIsTodaysAnswer: optimize over a constant rate
// profile (a CSV of one rate, simulated for the same duration) gives the
// answer of --rps at that rate exactly: the same optima and the same SLO
// figures, table for table (issue 33).
func TestConstantRateProfileIsTodaysAnswer(t *testing.T) {
	if testing.Short() {
		t.Skip("two searches")
	}
	dir := t.TempDir()
	flat := filepath.Join(dir, "flat.csv")
	if err := os.WriteFile(flat, []byte("time_s,rps\n0,70\n120,70\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	common := []string{"optimize", "--goal", "cost", "--designs", "HH,Baseline-H100,AA"}
	code, plain, errs := runCLI(t, append(common, "--rps", "70")...)
	if code != 0 {
		t.Fatalf("--rps 70: exit %d: %s", code, errs)
	}
	code, shaped, errs := runCLI(t, append(common, "--rate-profile", flat, "--duration", "120s")...)
	if code != 0 {
		t.Fatalf("--rate-profile: exit %d: %s", code, errs)
	}
	// The tables: from the DESIGN header to the best line (the goal line
	// names the profile, the search line its time).
	tables := func(out string) string {
		i, j := strings.Index(out, "DESIGN "), strings.Index(out, "\nbest ")
		if i < 0 || j < i {
			t.Fatalf("no tables in\n%s", out)
		}
		return out[i:j]
	}
	if a, b := tables(plain), tables(shaped); a != b {
		t.Errorf("a constant profile's answer differs from --rps 70's:\n%s\nagainst\n%s", b, a)
	}
	if !strings.Contains(shaped, "flat.csv in steps (mean 70, peak 70, trough 70 req/s") {
		t.Errorf("the profile's answer does not say it is the profile's:\n%s", shaped)
	}
}
