package cli

import (
	"strings"
	"testing"

	"github.com/urfave/cli/v2"
)

func TestVersionFlag(t *testing.T) {
	code, out, errs := runCLI(t, "--version")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	// A test binary has no module version or VCS stamp: the placeholders show.
	if !strings.HasPrefix(out, "splitplan version ") || !strings.Contains(out, "(commit ") || out != "splitplan version "+version()+"\n" {
		t.Errorf("--version printed %q", out)
	}
}

// TestHelpDefaultsOnce checks every command's help shows a flag's
// default at most once.
func TestHelpDefaultsOnce(t *testing.T) {
	for _, args := range [][]string{{"optimize"}, {"simulate"}, {"sweep"}, {"evaluate"}, {"plot", "heatmap"}, {"perf", "fit"}, {"trace", "generate"}} {
		code, out, errs := runCLI(t, append(args, "--help")...)
		if code != 0 {
			t.Fatalf("%v --help: exit %d: %s", args, code, errs)
		}
		for _, line := range strings.Split(out, "\n") {
			if strings.Count(line, "(default") > 1 {
				t.Errorf("%v --help: default shown twice: %s", args, line)
			}
		}
		if strings.Contains(out, "--token-budget") && !strings.Contains(out, "(default: 512)") {
			t.Errorf("%v --help: --token-budget should show its default 512", args)
		}
	}
}

// TestFlagCategories checks that every flag of the commands with many
// flags has a help category, and that the help shows the groups.
func TestFlagCategories(t *testing.T) {
	for _, cmd := range []*cli.Command{optimizeCommand(), simulateCommand(), sweepCommand(), evaluateCommand()} {
		for _, f := range cmd.Flags {
			if f == cli.HelpFlag {
				continue
			}
			cf, ok := f.(cli.CategorizableFlag)
			if !ok || cf.GetCategory() == "" {
				t.Errorf("%s --%s has no category", cmd.Name, f.Names()[0])
			}
		}
		_, out, _ := runCLI(t, cmd.Name, "--help")
		for _, want := range []string{"   cluster\n", "   output\n", "   workload\n", "--help, -h"} {
			if !strings.Contains(out, want) {
				t.Errorf("%s --help lacks %q", cmd.Name, want)
			}
		}
	}
	// The shared flags themselves stay uncategorized for other commands.
	if planFlag.Category != "" {
		t.Errorf("planFlag got category %q", planFlag.Category)
	}
}
