package cli

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

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
			&cli.StringFlag{Name: "shard", Value: "1/1", Usage: "run the `I/N`-th share of the jobs"},
			&cli.StringFlag{Name: "out", Usage: "write one result file per job into `DIR` (existing verified results are kept)"},
		},
		Action: runStudy,
		Subcommands: []*cli.Command{{
			Name:      "merge",
			Usage:     "merge a study's result directory into one CSV; lists missing jobs and fails if any",
			ArgsUsage: "STUDY.toml DIR",
			Flags: []cli.Flag{
				&cli.StringFlag{Name: "out", Usage: "write the merged CSV to `FILE` (default standard output)"},
			},
			Action: runStudyMerge,
		}},
	}
}

// studyRunOptimize is runContext, set in init to break the initialisation
// cycle commands -> studyCommand -> runContext -> newApp -> commands.
var studyRunOptimize func(ctx context.Context, args []string, stdout, stderr io.Writer) int

func init() { studyRunOptimize = runContext }

func readStudy(path string) ([]study.Job, []string, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, nil, badInput(err)
	}
	jobs, axes, err := study.Parse(path, data)
	return jobs, axes, badInput(err)
}

func runStudy(c *cli.Context) error {
	if c.NArg() != 1 {
		return badInputf("study: want one STUDY.toml argument")
	}
	jobs, _, err := readStudy(c.Args().First())
	if err != nil {
		return err
	}
	if c.Bool("list") {
		for _, j := range jobs {
			fmt.Fprintf(c.App.Writer, "%s\t%s\n", j.Key, strings.Join(j.Args(), " "))
		}
		return nil
	}
	i, n, err := study.ParseShard(c.String("shard"))
	if err != nil {
		return badInput(err)
	}
	dir := c.String("out")
	if dir == "" {
		return badInputf("study: --out DIR is required to run jobs")
	}
	mine, _ := study.Shard(jobs, i, n)
	runner := func(ctx context.Context, j study.Job) ([]byte, error) {
		tmp, err := os.MkdirTemp("", "splitplan-study-")
		if err != nil {
			return nil, err
		}
		defer os.RemoveAll(tmp)
		out := filepath.Join(tmp, "out.csv")
		var errb strings.Builder
		args := append(append([]string{"splitplan", "optimize"}, j.Args()...), "--out", out)
		if code := studyRunOptimize(ctx, args, &strings.Builder{}, &errb); code != 0 {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
			return nil, fmt.Errorf("optimize exited %d: %s", code, strings.TrimSpace(errb.String()))
		}
		return os.ReadFile(out)
	}
	ran, err := study.Run(c.Context, dir, mine, runner, nil)
	fmt.Fprintf(c.App.ErrWriter, "study: shard %d/%d: %d jobs, %d run now\n", i+1, n, len(mine), ran)
	return err
}

func runStudyMerge(c *cli.Context) error {
	if c.NArg() != 2 {
		return badInputf("study merge: want STUDY.toml DIR")
	}
	jobs, axes, err := readStudy(c.Args().Get(0))
	if err != nil {
		return err
	}
	merged, missing, err := study.Merge(c.Args().Get(1), jobs, axes)
	if err != nil {
		return err
	}
	if path := c.String("out"); path != "" {
		if err := os.WriteFile(path, merged, 0o644); err != nil {
			return err
		}
	} else if _, err := c.App.Writer.Write(merged); err != nil {
		return err
	}
	if len(missing) > 0 {
		return cli.Exit(fmt.Sprintf("study merge: %d of %d jobs missing or unverified: %s", len(missing), len(jobs), strings.Join(missing, ", ")), 1)
	}
	return nil
}
