package cli

import (
	"context"
	"io"
	"strings"
	"sync"
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

// TestAppsOwnTheirFlags checks that no command of an application holds a
// flag another application (or a package-level variable) holds, but
// cli.HelpFlag, which urfave/cli finds by identity: urfave/cli writes
// into a flag as it parses it, so a shared one is written by every
// application that runs it.
func TestAppsOwnTheirFlags(t *testing.T) {
	seen := map[cli.Flag]string{}
	var walk func(app int, path string, cmds []*cli.Command)
	walk = func(app int, path string, cmds []*cli.Command) {
		for _, c := range cmds {
			p := path + " " + c.Name
			for _, f := range c.Flags {
				if f == cli.HelpFlag {
					continue
				}
				if f == cli.Flag(planFlag) || f == cli.Flag(memoryUtilizationFlag) {
					t.Errorf("application %d, %s: --%s is the package-level flag", app, p, f.Names()[0])
				}
				if where, ok := seen[f]; ok {
					t.Errorf("application %d, %s: --%s is the one %s holds", app, p, f.Names()[0], where)
				}
				seen[f] = p
			}
			walk(app, p, c.Subcommands)
		}
	}
	for app := range 2 {
		walk(app, "splitplan", newApp(io.Discard, io.Discard).Commands)
	}
	if len(seen) < 100 {
		t.Fatalf("only %d flags walked", len(seen))
	}
}

// TestConcurrentApps runs an application's commands that hold
// package-level flags (catalog, perf query) while other goroutines build
// applications, which copy those flags: as parallel tests do. Under the
// race detector (.ci/run) it fails where a command parses a flag another
// application copies. (Two applications parsing at once would still both
// write urfave/cli's own cli.HelpFlag, urfave/cli#1699; splitplan never
// runs two at once outside the tests.)
func TestConcurrentApps(t *testing.T) {
	var wg sync.WaitGroup
	done := make(chan struct{})
	for range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-done:
					return
				default:
					_ = newApp(io.Discard, io.Discard)
				}
			}
		}()
	}
	for _, args := range [][]string{{"splitplan", "catalog"}, {"splitplan", "perf", "query", "--hardware", "h100", "--prompt-tokens", "128"}, {"splitplan", "catalog", "--gpu-memory-utilization", "0.8"}} {
		var out, errs strings.Builder
		if code := runContext(context.Background(), args, &out, &errs); code != 0 {
			t.Errorf("%v: exit %d: %s", args, code, errs.String())
		}
	}
	close(done)
	wg.Wait()
}
