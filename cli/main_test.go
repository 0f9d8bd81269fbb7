package cli

import (
	"context"
	"fmt"
	"io"
	"os"
	"sync"
	"testing"

	"github.com/urfave/cli/v2"
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
	code := m.Run()
	isSetMu.Lock()
	if len(isSetWrong) > 0 {
		fmt.Fprintf(os.Stderr, "isSet differed from urfave/cli's IsSet %d times, e.g. %s\n", len(isSetWrong), isSetWrong[0])
		code = 1
	}
	isSetMu.Unlock()
	os.Exit(code)
}

// isSetWrong records every answer of isSet that urfave/cli's IsSet does
// not give, over every command the package's tests run.
var (
	isSetMu    sync.Mutex
	isSetWrong []string
)

func init() {
	isSetDiffers = func(c *cli.Context, name string, got, want bool) {
		isSetMu.Lock()
		defer isSetMu.Unlock()
		isSetWrong = append(isSetWrong, fmt.Sprintf("%s --%s: isSet %v, IsSet %v", c.Command.FullName(), name, got, want))
	}
}

// TestIsSetAgrees: isSet gives IsSet's answer for every flag of the
// commands run here, flags given on the command line (aliases and
// repeats among them), by a plan file (set after the first answers were
// cached) or not at all; the package's other tests check every answer of
// every command they run the same way (TestMain).
func TestIsSetAgrees(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	plan := dir + "/p.toml"
	if err := os.WriteFile(plan, []byte("[optimize]\ndesigns = [\"HH\"]\nmax_machines = 40\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var wrong []string
	probe := func(c *cli.Context) {
		for _, f := range c.Command.Flags {
			for _, n := range f.Names() {
				if got, want := isSet(c, n), c.IsSet(n); got != want {
					wrong = append(wrong, fmt.Sprintf("%s --%s: isSet %v, IsSet %v", c.Command.FullName(), n, got, want))
				}
			}
		}
	}
	for _, args := range [][]string{
		{"splitplan", "optimize", "--goal", "cost", "--rps", "5", "--duration", "10s", "--plan", plan, "-j", "1"},
		{"splitplan", "optimize", "--goal", "cost", "--rps", "5", "--duration", "10s", "--designs", "HH", "--price", "h100=2", "--price", "a100=1"},
		{"splitplan", "simulate", "--design", "HH", "--prompt", "2", "--token", "1", "--rps", "1", "--duration", "5s"},
		{"splitplan", "perf", "query", "--hardware", "h100", "--prompt-tokens", "128"},
		{"splitplan", "catalog"},
	} {
		app := newAppOf(io.Discard, io.Discard, commands)
		for _, cmd := range app.Commands {
			wrapProbe(cmd, probe)
		}
		if err := app.RunContext(withFlagCache(context.Background()), args); err != nil {
			t.Errorf("%v: %v", args, err)
		}
	}
	for _, w := range wrong {
		t.Error(w)
	}
}

// wrapProbe makes cmd and its subcommands call probe after their action.
func wrapProbe(cmd *cli.Command, probe func(*cli.Context)) {
	if act := cmd.Action; act != nil {
		cmd.Action = func(c *cli.Context) error {
			err := act(c)
			probe(c)
			return err
		}
	}
	for _, sub := range cmd.Subcommands {
		wrapProbe(sub, probe)
	}
}
