package gendata

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// TestGeneratedFilesFresh: every file a generator writes from
// ../shared/data is what the generator writes today. Each generator runs
// as go generate runs it (go run in its package's directory), into a
// temporary directory, and each file it writes is compared byte for byte
// with the checked-in one; a difference means the data, the fit or the
// generator changed without go generate. (The embedded traces' sizes, the
// ShareGPT-like trace, the built-in profile pairs, the CLI reference and
// the README outputs have their own freshness tests.) Slow: it refits the
// kernel layer, the profiles, the engine calibration with its
// cross-validation and the power model, so not under -short; skipped
// without ../shared.
func TestGeneratedFilesFresh(t *testing.T) {
	if testing.Short() {
		t.Skip("refits every embedded model")
	}
	if _, err := os.Stat("../../../shared/data"); err != nil {
		t.Skip("../shared/data is not beside the repository")
	}
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go tool on PATH")
	}
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	for _, g := range []struct {
		dir, gen, out string   // package directory, generator, its -out file
		files         []string // the files it writes, beside -out
	}{
		{"arch", "./internal/genarch", "builtin_gen.go", []string{"builtin_gen.go"}},
		{"hw", "./internal/genhw", "builtin_gen.go", []string{"builtin_gen.go"}},
		{"evaluator/perf/kernel", "./internal/genkernel", "fitted.go", []string{"fitted.go"}},
		{"evaluator/perf/measured", "./internal/gencal", "default_calibration.toml", []string{"default_calibration.toml", "default_calibration.go"}},
		{"evaluator/perf/power", "./internal/genpower", "builtin_gen.go", []string{"builtin_gen.go"}},
		{"evaluator/perf/errmodel", "./internal/generr", "residuals_gen.go", []string{"residuals_gen.go"}},
	} {
		t.Run(g.dir, func(t *testing.T) {
			tmp := t.TempDir()
			cmd := exec.Command(goTool, "run", g.gen, "-out", filepath.Join(tmp, g.out))
			cmd.Dir = filepath.Join(root, g.dir)
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("go run %s in %s: %v\n%s", g.gen, g.dir, err, out)
			}
			for _, f := range g.files {
				want, err := os.ReadFile(filepath.Join(tmp, f))
				if err != nil {
					t.Fatalf("%s wrote no %s: %v", g.gen, f, err)
				}
				got, err := os.ReadFile(filepath.Join(root, g.dir, f))
				if err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(got, want) {
					t.Errorf("%s/%s differs from what %s writes today: run go generate ./%s", g.dir, f, g.gen, g.dir)
				}
			}
		})
	}
}
