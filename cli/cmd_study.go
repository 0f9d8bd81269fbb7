package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"splitplan/study"
)

// studyCommand runs a study: the cross product of a study TOML's axes, one
// optimize per job. Each job runs the optimize command in-process through
// runContext with its own argument list, so option names, defaults and
// validation have one source of truth (the optimize command's flags).
func studyCommand() *cli.Command {
	return &cli.Command{
		Name:      "study",
		Usage:     "run a study (a TOML file's cross product of optimize options), listed, sharded or merged",
		ArgsUsage: "STUDY.toml",
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "list", Usage: "print the study's jobs (key and optimize arguments) and exit"},
			&cli.StringFlag{Name: "shard", Value: "1/1", Usage: "run the `I/N`-th share of the jobs (1 <= I <= N)"},
			&cli.StringFlag{Name: "shard-index", Usage: "run share `I` counted from 0, as Kubernetes' JOB_COMPLETION_INDEX and Slurm's SLURM_ARRAY_TASK_ID count (with --shards, instead of --shard)"},
			&cli.IntFlag{Name: "shards", Usage: "the number `N` of shares, with --shard-index"},
			&cli.StringFlag{Name: "out", Usage: "write one result file per job into `DIR` (existing verified results are kept)"},
		},
		Action: runStudy,
		Subcommands: []*cli.Command{{
			Name:      "merge",
			Usage:     "merge a study's result directory into one CSV (or JSON); summarises per axis what is done, lists missing or failed jobs and fails if any",
			ArgsUsage: "STUDY.toml DIR",
			Flags: []cli.Flag{
				&cli.StringFlag{Name: "out", Usage: "write the merged CSV to `FILE` (default standard output)"},
				&cli.StringFlag{Name: "json", Usage: "also write the merged table as JSON to `FILE` ({\"columns\": [...], \"rows\": [{column: value}]}; numbers and booleans typed, their text kept)"},
				&cli.BoolFlag{Name: "partial", Usage: "merge the jobs done even when some are missing, failed or unverified (they are still listed, and the exit status is still 1); without it such a merge writes nothing"},
			},
			Action: runStudyMerge,
		}},
	}
}

// studyRunOptimize is runContext, set in init to break the initialisation
// cycle commands -> studyCommand -> runContext -> newApp -> commands.
var studyRunOptimize func(ctx context.Context, args []string, stdout, stderr io.Writer) int

func init() {
	studyRunOptimize = func(ctx context.Context, args []string, stdout, stderr io.Writer) int {
		return runContextOf(ctx, args, stdout, stderr, []func() *cli.Command{optimizeCommand})
	}
}

// runJob runs job j's optimize (studyRunOptimize) with its CSV written to
// out and returns the exit status; ctx may ask only for the check
// (checkOnly).
func runJob(ctx context.Context, j study.Job, out string, stdout, stderr io.Writer) int {
	args := append(append([]string{"splitplan", "optimize"}, j.Args()...), "--out", out)
	return studyRunOptimize(ctx, args, stdout, stderr)
}

func readStudy(path string) ([]study.Job, []string, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, nil, badInput(err)
	}
	jobs, axes, err := study.Parse(path, data)
	if err != nil {
		return nil, nil, badInput(err)
	}
	if err := checkStudyOptions(path, jobs); err != nil {
		return nil, nil, err
	}
	return jobs, axes, nil
}

// studyOwnedFlags are optimize's flags a study sets itself (each job's
// CSV, written into the result directory).
var studyOwnedFlags = []string{"out"}

// studyRefusedFlags are optimize's flags a study's jobs cannot take, and
// why: the files every job would write to one path, and --schedule, whose
// plans are not the optimize CSV a study merges.
var studyRefusedFlags = map[string]string{
	"points":       "every job would write its points to the same file; run that job as its own optimize",
	"pairs":        "every job would write its GPU-pair table to the same file; run that job as its own optimize",
	"plot":         "every job would write its figures into the same directory; plot the merged study (splitplan plot study)",
	"report":       "every job would write its report to the same file; run that job as its own optimize",
	"schedule":     "a study merges each job's optimize CSV, which a --schedule run does not write (its plans go to --schedule-out); run scheduled plans as their own optimize runs",
	"schedule-out": "a study merges each job's optimize CSV, which a --schedule run does not write; run scheduled plans as their own optimize runs",
}

// checkOnlyKey marks a context whose optimize command checks its
// arguments and stops before it searches (checkOnly).
type checkOnlyKey struct{}

// checkOnly reports whether ctx asks optimize to check its arguments only:
// its flags, plan, workload, designs and goal resolved as a run resolves
// them, and nothing searched or written.
func checkOnly(ctx context.Context) bool {
	on, _ := ctx.Value(checkOnlyKey{}).(bool)
	return on
}

// maxStudyCheckErrors is how many refused jobs a study's check names.
const maxStudyCheckErrors = 10

// checkStudyJobs runs each job's optimize arguments through optimize's own
// checks (checkOnly) before any job is run, so that a value optimize
// refuses (rps = "-2", a model it does not know) is an input error naming
// the study file and the job instead of a job failing hours into a run.
// It names up to maxStudyCheckErrors refused jobs.
func checkStudyJobs(ctx context.Context, errw io.Writer, path string, jobs []study.Job) error {
	ctx = context.WithValue(ctx, checkOnlyKey{}, true)
	var bad []string
	refused := 0
	prog := newLineProgress(errw, "study")
	defer prog.done()
	// One job at a time: urfave/cli's apps share their help and version
	// flags, which each run writes (the race detector sees it).
	for i, j := range jobs {
		prog.update("checking the jobs' options", i, len(jobs))
		if err := ctx.Err(); err != nil {
			return err
		}
		var errb strings.Builder
		code := runJob(ctx, j, filepath.Join(os.TempDir(), "splitplan-study-check.csv"), io.Discard, &errb)
		if code == 0 {
			continue
		}
		if refused++; len(bad) < maxStudyCheckErrors {
			msg := strings.TrimPrefix(strings.TrimSpace(errb.String()), "splitplan: ")
			if msg == "" {
				msg = fmt.Sprintf("optimize exited %d", code)
			}
			bad = append(bad, fmt.Sprintf("  job %s (%s): %s", j.Key, strings.Join(j.Args(), " "), msg))
		}
	}
	if err := ctx.Err(); err != nil {
		return err // (an interrupted check is not a refusal)
	}
	if refused == 0 {
		return nil
	}
	more := ""
	if refused > len(bad) {
		more = fmt.Sprintf("\n  ... and %d more", refused-len(bad))
	}
	return badInputf("%s: optimize refuses the options of %d of the %d jobs; nothing was run:\n%s%s", path, refused, len(jobs), strings.Join(bad, "\n"), more)
}

// checkStudyOptions refuses, before any job runs or is listed, an option
// that is not one of optimize's flags or that the study sets itself: such
// a job could only fail (or have its option silently replaced).
func checkStudyOptions(path string, jobs []study.Job) error {
	known := map[string]bool{}
	for _, f := range optimizeCommand().Flags {
		for _, n := range f.Names() {
			known[n] = true
		}
	}
	for _, j := range jobs {
		for name := range j.Options {
			switch {
			case slices.Contains(studyOwnedFlags, name):
				return badInputf("%s: option %s: the study writes each job's --out into its result directory; leave it out", path, name)
			case !known[name]:
				return badInputf("%s: option %s: not an optimize flag (see splitplan optimize --help)", path, name)
			case studyRefusedFlags[name] != "":
				return badInputf("%s: option %s: %s", path, name, studyRefusedFlags[name])
			}
		}
	}
	return nil
}

func runStudy(c *cli.Context) error {
	if c.NArg() != 1 {
		return wantArgs(c, "study", "one STUDY.toml argument", "STUDY.toml")
	}
	jobs, _, err := readStudy(c.Args().First())
	if err != nil {
		return err
	}
	if c.Bool("list") {
		if err := checkStudyJobs(c.Context, c.App.ErrWriter, c.Args().First(), jobs); err != nil {
			return err
		}
		for _, j := range jobs {
			fmt.Fprintf(c.App.Writer, "%s\t%s\n", j.Key, strings.Join(j.Args(), " "))
		}
		return nil
	}
	i, n, err := shardOf(c)
	if err != nil {
		return err
	}
	dir := c.String("out")
	if dir == "" {
		return badInputf("study: --out DIR is required to run jobs")
	}
	mine, _ := study.Shard(jobs, i, n)
	if err := checkStudyJobs(c.Context, c.App.ErrWriter, c.Args().First(), mine); err != nil {
		return err
	}
	runner := func(ctx context.Context, j study.Job) ([]byte, error) {
		tmp, err := os.MkdirTemp("", "splitplan-study-")
		if err != nil {
			return nil, err
		}
		defer os.RemoveAll(tmp)
		out := filepath.Join(tmp, "out.csv")
		var errb strings.Builder
		if code := runJob(ctx, j, out, &strings.Builder{}, &errb); code != 0 {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
			return nil, fmt.Errorf("optimize exited %d: %s", code, strings.TrimSpace(errb.String()))
		}
		return os.ReadFile(out)
	}
	prog := newStudyProgress(c.App.ErrWriter, fmt.Sprintf("study: shard %d/%d", i+1, n))
	ran, err := study.Run(c.Context, dir, mine, runner, prog.update)
	prog.done()
	failed := 0
	var fe *study.FailedError
	if errors.As(err, &fe) {
		failed = len(fe.Keys)
	}
	fmt.Fprintf(c.App.ErrWriter, "study: shard %d/%d: %d jobs, %d run now, %d failed\n", i+1, n, len(mine), ran, failed)
	if fe != nil {
		return cli.Exit("study: "+fe.Error(), 1)
	}
	return err
}

// shardOf reads --shard I/N, or --shard-index I (0-based) with --shards N,
// into a 0-based index and a count.
func shardOf(c *cli.Context) (int, int, error) {
	if !isSet(c, "shard-index") && !isSet(c, "shards") {
		i, n, err := study.ParseShard(c.String("shard"))
		return i, n, badInput(err)
	}
	if isSet(c, "shard") {
		return 0, 0, badInputf("--shard and --shard-index/--shards say the same: give one")
	}
	n := c.Int("shards")
	i, err := strconv.Atoi(c.String("shard-index"))
	if !isSet(c, "shard-index") || !isSet(c, "shards") || err != nil || n < 1 || i < 0 || i >= n {
		return 0, 0, badInputf("--shard-index %q --shards %d: want both, with 0 <= index < shards", c.String("shard-index"), n)
	}
	return i, n, nil
}

// studyProgress shows a study shard's progress on standard error: jobs
// done of the shard's and the time left, estimated from the jobs run so
// far by their estimated costs. On a terminal it is one line, rewritten at
// most ten times a second; on a pipe or a file nothing, unless
// SPLITPLAN_PROGRESS=1 asks for a plain line per job finished (a batch
// job's log).
type studyProgress struct {
	w        io.Writer
	name     string
	terminal bool
	logs     bool
	start    time.Time
	last     time.Time
	shown    bool
}

func newStudyProgress(w io.Writer, name string) *studyProgress {
	return &studyProgress{w: w, name: name, terminal: isTerminal(w), logs: progressInLogs(), start: time.Now()}
}

// update shows p (study.Run's progress callback).
func (sp *studyProgress) update(p study.Progress) {
	now := time.Now()
	switch {
	case sp.terminal:
		if p.Done < p.Total && now.Sub(sp.last) < 100*time.Millisecond {
			return
		}
		sp.last = now
		fmt.Fprintf(sp.w, "\r\033[K%s", studyProgressLine(sp.name, p, now.Sub(sp.start)))
		sp.shown = true
	case sp.logs && p.Done > 0:
		fmt.Fprintln(sp.w, studyProgressLine(sp.name, p, now.Sub(sp.start)))
	}
}

// done clears the progress line.
func (sp *studyProgress) done() {
	if sp.shown {
		fmt.Fprint(sp.w, "\r\033[K")
		sp.shown = false
	}
}

// studyProgressLine is "study: shard 1/3: 4/9 jobs done (1 failed), 12s,
// about 20s left": the time left is elapsed × the estimated cost of the
// jobs left / that of the jobs run so far (jobs found done cost nothing).
func studyProgressLine(name string, p study.Progress, elapsed time.Duration) string {
	line := fmt.Sprintf("%s: %d/%d jobs done", name, p.Done, p.Total)
	if p.Failed > 0 {
		line += fmt.Sprintf(" (%d failed)", p.Failed)
	}
	line += ", " + elapsed.Round(time.Second).String()
	if p.CostRan > 0 && p.CostLeft > 0 {
		left := time.Duration(float64(elapsed) * p.CostLeft / p.CostRan)
		line += ", about " + left.Round(time.Second).String() + " left"
	}
	return line
}

// wantArgs is the error of a command given other than the arguments it
// takes (want says which, usage how they are written): a flag written
// after them, which urfave/cli reads as one more argument, is named as
// such.
func wantArgs(c *cli.Context, cmd, want, usage string) error {
	for i, a := range c.Args().Slice() {
		if i > 0 && strings.HasPrefix(a, "-") && len(a) > 1 {
			return badInputf("%s: %s is a flag after the arguments: flags go before them (splitplan %s [flags] %s)", cmd, a, cmd, usage)
		}
	}
	return badInputf("%s: want %s, got %d", cmd, want, c.NArg())
}

func runStudyMerge(c *cli.Context) error {
	if c.NArg() != 2 {
		return wantArgs(c, "study merge", "STUDY.toml DIR", "STUDY.toml DIR")
	}
	if err := checkOutputs(c, "out", "json"); err != nil {
		return err
	}
	jobs, axes, err := readStudy(c.Args().Get(0))
	if err != nil {
		return err
	}
	dir := c.Args().Get(1)
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		return badInputf("study merge: %s is not a result directory", dir)
	}
	merged, missing, err := study.Merge(dir, jobs, axes)
	if err != nil {
		return err
	}
	if len(missing) > 0 && !c.Bool("partial") {
		// A merge of some of the jobs would pass for the study's table:
		// write none, say which are not done.
		if err := study.WriteSummary(c.App.ErrWriter, study.Check(dir, jobs), axes); err != nil {
			return err
		}
		return cli.Exit(fmt.Sprintf("study merge: %d of %d jobs missing, failed or unverified: nothing written (--partial merges the %d done)", len(missing), len(jobs), len(jobs)-len(missing)), 1)
	}
	if path := c.String("out"); path != "" {
		if err := writeOutput(c.Context, path, c.App.Writer, func(w io.Writer) error { _, err := w.Write(merged); return err }); err != nil {
			return err
		}
	} else if _, err := c.App.Writer.Write(merged); err != nil {
		return err
	}
	if path := c.String("json"); path != "" {
		if err := writeOutput(c.Context, path, c.App.Writer, func(w io.Writer) error { return study.WriteJSON(w, merged) }); err != nil {
			return err
		}
	}
	if err := study.WriteSummary(c.App.ErrWriter, study.Check(dir, jobs), axes); err != nil {
		return err
	}
	if len(missing) > 0 {
		return cli.Exit(fmt.Sprintf("study merge: %d of %d jobs missing, failed or unverified", len(missing), len(jobs)), 1)
	}
	return nil
}
