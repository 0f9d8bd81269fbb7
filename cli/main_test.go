package cli

import (
	"fmt"
	"os"
	"testing"
)

// TestMain runs the package's tests from the repository root, where a user
// runs splitplan (go run . …): the golden command lines, README.md and
// docs/guide.md name their files relative to it (testdata/cli/…, data/…,
// examples/…, ../shared/…), and the tests that build the binary build ".".
//
// A process already at the root stays there: go test -fuzz starts its
// workers in the directory its coordinator has moved to, so a worker that
// moved up again would leave the repository and exit before fuzzing
// (FuzzPlan failed at once with "fuzzing process terminated without
// fuzzing: EOF").
func TestMain(m *testing.M) {
	if _, err := os.Stat("go.mod"); err != nil {
		if err := os.Chdir(".."); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
	}
	if _, err := os.Stat("go.mod"); err != nil {
		fmt.Fprintln(os.Stderr, "cli tests: the parent directory is not the repository root:", err)
		os.Exit(1)
	}
	os.Exit(m.Run())
}
