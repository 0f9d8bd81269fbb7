package evaluator

import (
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// allowedImports is the project packages the simulator may import (issue
// 30: at most four): the performance-model interfaces, the power model,
// the requests and the quantile sketch. Names, catalogs and spec sheets
// stay in package resolve, which makes the simulator's Cluster.
var allowedImports = map[string]bool{
	"splitplan/evaluator/perf":       true,
	"splitplan/evaluator/perf/power": true,
	"splitplan/traces":               true,
	"splitplan/internal/quantile":    true,
}

// TestProjectImports fails when a non-test file of the package imports a
// project package outside allowedImports, so that the simulator does not
// grow a second job again.
func TestProjectImports(t *testing.T) {
	t.Parallel()
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	seen := 0
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		af, err := parser.ParseFile(fset, f, src, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		seen++
		for _, is := range af.Imports {
			p, err := strconv.Unquote(is.Path.Value)
			if err != nil {
				t.Fatalf("%s: import %s: %v", f, is.Path.Value, err)
			}
			if (p == "splitplan" || strings.HasPrefix(p, "splitplan/")) && !allowedImports[p] {
				t.Errorf("%s imports %s: evaluator may import only the project packages in allowedImports", fset.Position(is.Pos()), p)
			}
		}
	}
	if seen == 0 {
		t.Fatal("no non-test Go files found in the package directory")
	}
}
