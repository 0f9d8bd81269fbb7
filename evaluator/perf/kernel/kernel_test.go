package kernel

import (
	"os"
	"path/filepath"
	"testing"

	"splitplan/hw"
)

const dataDir = "../../../../shared/data/gpu-kernels/h100"

func readRows(t *testing.T, file string) []Row {
	t.Helper()
	path := filepath.Join(dataDir, file)
	f, err := os.Open(path)
	if err != nil {
		t.Skipf("no kernel data: %v", err)
	}
	defer f.Close()
	rows, err := ReadCSV(f, path)
	if err != nil {
		t.Fatal(err)
	}
	return rows
}

// TestHeldOut checks the embedded fit on the rows it did not see: median
// ≤ 5% and P90 ≤ 12% pooled over both files' held-out iteration rows.
func TestHeldOut(t *testing.T) {
	g, _ := hw.Lookup("h100_sxm")
	rows := append(readRows(t, "kernels.csv"), readRows(t, "mixed.csv")...)
	v := Validate(Default, g, rows, InFit)
	for _, k := range []Kind{Prefill, Decode, Mixed, Pooled} {
		t.Logf("%-8s held out %+v  fit %+v", k, v.ByKind[k], v.FitByKind[k])
	}
	for _, e := range v.Rows {
		if e.ErrPct > 8 {
			t.Logf("line %d %s tp%d %s p%d×%d b%d@%d: %.3f ms vs %.3f ms (%.1f%%, fit %v)", e.Row.Line, e.Row.Model, e.Row.TP, e.Row.Kind,
				e.Row.Prompts, e.Row.TokensPerPrompt, e.Row.Batch, e.Row.ContextPerRequest, e.PredS*1e3, e.Row.TimeS*1e3, e.ErrPct, e.InFit)
		}
	}
	s := v.ByKind[Pooled]
	if s.N < 40 || s.Median > 5 || s.P90 > 12 {
		t.Errorf("held out: %+v: want ≥ 40 rows, median ≤ 5%%, P90 ≤ 12%%", s)
	}
}
