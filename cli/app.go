// Package cli is splitplan's command line: one file per command
// (cmd_NAME.go) with its flags, and the configuration parts every command
// composes (plan.go, parts.go): defaults, then the plan file, then the
// flags, validated once. package main only calls Main.
package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"regexp"
	"slices"
	"sort"
	"strings"
	"syscall"

	"github.com/urfave/cli/v2"

	"splitplan/report"
)

// Main runs splitplan with the process's arguments and standard streams
// and returns its exit status (0, 1, or 2 for bad usage or input).
//
// An interrupt (Ctrl-C) or a SIGTERM (timeout, CI, Kubernetes) cancels
// the run's context: a simulation stops within a few thousand events, a
// search writes the designs it finished (marked partial) and no other
// output, and the command exits 1.
func Main() int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	return runContext(ctx, os.Args, os.Stdout, os.Stderr)
}

// commands are splitplan's commands, each defined in a file of its own
// (cmd_NAME.go); the list is explicit so that nothing registers itself.
var commands = []func() *cli.Command{
	catalogCommand,
	evaluateCommand,
	optimizeCommand,
	perfCommand,
	plotCommand,
	serveCommand,
	simulateCommand,
	studyCommand,
	sweepCommand,
	traceCommand,
}

// usageError marks an error caused by the user's flags or input files; the
// command exits with status 2 for it (1 for any other failure).
type usageError struct{ err error }

func (e usageError) Error() string { return e.err.Error() }
func (e usageError) Unwrap() error { return e.err }

// badInput wraps err as a usage or input error (exit status 2).
func badInput(err error) error {
	if err == nil {
		return nil
	}
	return usageError{err}
}

// badInputf formats a usage or input error (exit status 2).
func badInputf(format string, a ...any) error {
	return usageError{fmt.Errorf(format, a...)}
}

// newApp builds the command-line application writing to stdout and stderr.
func newApp(stdout, stderr io.Writer) *cli.App {
	return newAppOf(stdout, stderr, commands)
}

// newAppOf is newApp with only the commands that of builds (a study's
// jobs run optimize alone, and building every command's flags would
// triple the cost of checking each job).
func newAppOf(stdout, stderr io.Writer, of []func() *cli.Command) *cli.App {
	var cmds []*cli.Command
	for _, c := range of {
		cmds = append(cmds, c())
	}
	ownFlags(cmds)
	setUsageErrors(cmds, "splitplan")
	withPlanParts(cmds)
	sort.Slice(cmds, func(i, j int) bool { return cmds[i].Name < cmds[j].Name })
	return &cli.App{
		Name:  "splitplan",
		Usage: "size LLM inference clusters: prompt and token machines per design, within latency SLOs",
		Description: "splitplan simulates every candidate cluster of co-located and phase-split (Splitwise)\n" +
			"designs with a profiled performance model and searches the machine counts for the\n" +
			"least cost, least power or most throughput.",
		Version:         version(),
		Commands:        cmds,
		Writer:          stdout,
		ErrWriter:       stderr,
		HideHelpCommand: true,
		// urfave/cli calls os.Exit itself unless this is set; run decides.
		ExitErrHandler: func(*cli.Context, error) {},
		OnUsageError: func(_ *cli.Context, err error, _ bool) error {
			return badInputf("%s", longFlagNames(err.Error()))
		},
	}
}

// setUsageErrors makes urfave/cli's complaints about a command's flags (an
// unknown flag, a value that is not a number) bad usage, reported in one
// line that points at the command's help instead of printing it.
func setUsageErrors(cmds []*cli.Command, parent string) {
	for _, c := range cmds {
		path := parent + " " + c.Name
		if c.OnUsageError == nil {
			flags := c.Flags
			c.OnUsageError = func(_ *cli.Context, err error, _ bool) error {
				return badInputf("%s%s (see %s --help)", longFlagNames(err.Error()), expectedValue(flags, err.Error()), path)
			}
		}
		setUsageErrors(c.Subcommands, path)
	}
}

// flagInMessage is how Go's flag package names a flag in its messages
// ("invalid value "x" for flag -seed: parse error"): one dash.
var flagInMessage = regexp.MustCompile(`(flag(?: provided but not defined:)?) -([A-Za-z][\w-]+)`)

// longFlagNames writes the long flags of a flag-package message with two
// dashes, as the help and every other message write them ("for flag
// --seed"); one-letter flags (-j) keep their one dash.
func longFlagNames(msg string) string {
	return flagInMessage.ReplaceAllString(msg, "$1 --$2")
}

// flagValueError is the flag package's message for a value its flag's
// type cannot parse, with the flag's name.
var flagValueError = regexp.MustCompile(`invalid value ".*" for flag -{1,2}([\w-]+): `)

// expectedValue is ": expected ..." naming what the numeric flag of a
// flag-package parse error takes, or "" for any other error.
func expectedValue(flags []cli.Flag, msg string) string {
	m := flagValueError.FindStringSubmatch(msg)
	if m == nil {
		return ""
	}
	for _, f := range flags {
		if !slices.Contains(f.Names(), m[1]) {
			continue
		}
		switch f.(type) {
		case *cli.IntFlag, *cli.Int64Flag, unsetInt:
			return ": expected a whole number"
		case *cli.UintFlag, *cli.Uint64Flag:
			return ": expected a whole number, 0 or more"
		case *cli.Float64Flag, unsetFloat64:
			return ": expected a number"
		}
	}
	return ""
}

// run executes splitplan with args (args[0] is the program name) and
// returns the exit status: 0 on success, 2 on bad usage or input, 1 on any
// other failure.
func run(args []string, stdout, stderr io.Writer) int {
	return runContext(context.Background(), args, stdout, stderr)
}

// runContext is run with a context that can cancel long commands.
//
// Standard output goes through a writer that remembers its first failure
// (a full disk, /dev/full, a closed descriptor): a command that otherwise
// succeeded exits 1 with a message naming it, whatever it printed with.
func runContext(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	return runContextOf(ctx, args, stdout, stderr, commands)
}

// runContextOf is runContext with an application of only the commands
// that of builds (newAppOf).
func runContextOf(ctx context.Context, args []string, stdout, stderr io.Writer, of []func() *cli.Command) int {
	out := &stickyWriter{w: stdout}
	app := newAppOf(out, stderr, of)
	err := app.RunContext(withFlagCache(ctx), args)
	if err == nil {
		if out.err != nil {
			fmt.Fprintf(stderr, "splitplan: writing to standard output: %v\n", out.err)
			return 1
		}
		return 0
	}
	if out.err != nil && !strings.Contains(err.Error(), "standard output") {
		// The command stopped on (or after) the failed write and returned
		// the bare error: say where it happened.
		fmt.Fprintf(stderr, "splitplan: writing to standard output: %v\n", out.err)
		return 1
	}
	if errors.Is(err, context.Canceled) {
		var pe *partialError
		if errors.As(err, &pe) {
			fmt.Fprintf(stderr, "splitplan: %v\n", pe)
		} else {
			fmt.Fprintln(stderr, "splitplan: interrupted; no output file was written")
		}
		return 1
	}
	fmt.Fprintf(stderr, "splitplan: %v\n", err)
	var ue usageError
	if errors.As(err, &ue) {
		return 2
	}
	if report.IsInput(err) {
		return 2
	}
	if isFlagError(err) {
		return 2
	}
	var ee cli.ExitCoder
	if errors.As(err, &ee) && ee.ExitCode() != 0 {
		return ee.ExitCode()
	}
	return 1
}

// stickyWriter passes writes to w and remembers the first error: once a
// write has failed every later one fails with it too, so that a command
// printing a long report stops at the first failure and runContext can
// report it even when the command ignored it.
type stickyWriter struct {
	w   io.Writer
	err error
}

// Write writes p to the underlying writer unless an earlier write failed.
func (s *stickyWriter) Write(p []byte) (int, error) {
	if s.err != nil {
		return 0, s.err
	}
	n, err := s.w.Write(p)
	if err == nil && n < len(p) {
		err = io.ErrShortWrite
	}
	if err != nil {
		s.err = err
	}
	return n, err
}
