package cli

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/BurntSushi/toml"

	"splitplan/costpower"
)

// TestExamplePlansKeepBuiltinMachines: an example plan may change a
// built-in machine type's price or power (a table with its name), but
// never gives a built-in's name to another machine — another GPU, GPU
// count or performance model — which would silently replace the
// built-in for every design using it (issue 29: the examples once
// redefined DGX-H200). Each example still loads.
func TestExamplePlansKeepBuiltinMachines(t *testing.T) {
	paths, err := filepath.Glob("examples/*.toml")
	if err != nil || len(paths) == 0 {
		t.Fatalf("no example plans: %v", err)
	}
	builtin := costpower.Default()
	for _, path := range paths {
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		var f struct {
			Machine []map[string]any `toml:"machine"`
		}
		if _, err := toml.Decode(string(data), &f); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		for _, m := range f.Machine {
			name, _ := m["name"].(string)
			if _, err := builtin.Machine(name); err != nil {
				continue // a new machine type
			}
			for _, identity := range []string{"gpu", "gpus", "perf_hardware", "gpu_spec"} {
				if _, set := m[identity]; set {
					t.Errorf("%s: [[machine]] %q is a built-in's name, and the table sets its %s: a different machine needs a new name", path, name, identity)
				}
			}
		}
		if _, err := loadPlan(path); err != nil {
			t.Errorf("%s: %v", path, err)
		}
	}
}
