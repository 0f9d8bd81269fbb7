package main

import (
	"errors"
	"fmt"
	"math"
	"strings"

	"github.com/urfave/cli/v2"

	"splitplan/evaluator"
	"splitplan/search"
	"splitplan/traces"
)

// workloadFlags are the flags that choose the requests a command simulates.
func workloadFlags(defaultRPS float64) []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "workload", Value: "coding", Usage: "built-in size distribution: " + strings.Join(traces.BuiltinNames(), " or ")},
		&cli.StringFlag{Name: "trace", Usage: "trace `FILE` (Azure or SplitwiseSim CSV): replayed as is, or its sizes resampled at --rps when --rps is given"},
		&cli.Float64Flag{Name: "rps", Value: defaultRPS, Usage: "arrival rate in requests per second (Poisson)"},
		&cli.StringFlag{Name: "duration", Value: "120s", Usage: "length of the synthesized workload: a Go duration (120s, 2m) or seconds"},
		&cli.Uint64Flag{Name: "seed", Usage: "random seed of the synthesized workload"},
	}
}

// workload is a command's requests and where they came from.
type workload struct {
	Requests []traces.Request
	// Source describes the workload in one line.
	Source string
	// File is the trace file the requests were read from as is ("" when
	// synthesized): request i is on line i+2.
	File string
}

// loadWorkload builds the requests chosen by the workload flags. With
// independent set (reference compat mode) synthesized sizes are drawn
// independently, as the reference simulator's generator does.
func loadWorkload(c *cli.Context, independent bool) (*workload, error) {
	durS, err := traceParseDuration(c.String("duration"))
	if err != nil {
		return nil, err
	}
	rps := c.Float64("rps")
	if c.IsSet("rps") || c.String("trace") == "" {
		if !(rps > 0) || math.IsInf(rps, 0) {
			return nil, badInputf("--rps must be a positive number of requests per second, got %v", rps)
		}
	}
	sizes, reqs, err := sizesFromFlags(c)
	if err != nil {
		return nil, err
	}
	path := c.String("trace")
	if path != "" && !c.IsSet("rps") {
		if c.IsSet("duration") {
			n := 0
			for n < len(reqs) && reqs[n].Arrival < durS {
				n++
			}
			reqs = reqs[:n]
		}
		if len(reqs) == 0 {
			return nil, badInputf("%s: no requests within --duration %s", path, c.String("duration"))
		}
		return &workload{Requests: reqs, File: path,
			Source: fmt.Sprintf("%s replayed (%d requests)", path, len(reqs))}, nil
	}
	out, err := traces.Synthesize(sizes, rps, durS, c.Uint64("seed"), independent)
	if err != nil {
		return nil, badInput(err)
	}
	if len(out) == 0 {
		return nil, badInputf("--rps %g over --duration %s gives no requests: raise either", rps, c.String("duration"))
	}
	if path != "" {
		return &workload{Requests: out, Source: fmt.Sprintf("sizes of %s at %g req/s for %gs, seed %d", path, rps, durS, c.Uint64("seed"))}, nil
	}
	return &workload{Requests: out, Source: fmt.Sprintf("%s at %g req/s for %gs, seed %d (%d requests)", sizes.Name(), rps, durS, c.Uint64("seed"), len(out))}, nil
}

// sizesFromFlags resolves --trace (its requests and their size pairs) or
// else --workload (a built-in distribution; reqs is nil).
func sizesFromFlags(c *cli.Context) (sizes *traces.Distribution, reqs []traces.Request, err error) {
	path := c.String("trace")
	if path == "" {
		if sizes, err = traces.Builtin(c.String("workload")); err != nil {
			return nil, nil, badInputf("--workload: %v", err)
		}
		return sizes, nil, nil
	}
	if c.IsSet("workload") {
		return nil, nil, badInputf("--workload and --trace are exclusive: give one of them")
	}
	if reqs, err = traces.ReadFile(path); err != nil {
		return nil, nil, badInput(err)
	}
	return traces.FromRequests(path, reqs), reqs, nil
}

// explain turns a simulation error about a request into an input error
// that names the trace file's line when the requests came from one.
func (w *workload) explain(err error) error {
	var ue *evaluator.UnservableError
	if errors.As(err, &ue) {
		if w.File != "" {
			return badInputf("%s:%d: %v", w.File, ue.RequestID+2, err)
		}
		return badInputf("%v (synthesized from %s)", err, w.Source)
	}
	return err
}

// rateWorkloadFromFlags builds the workload of the commands that simulate
// many rates (optimize, sweep, evaluate): the sizes of --workload or of
// --trace's requests, --duration long at every rate, seeded by --seed.
// With independent set (compat mode) sizes are drawn independently.
func rateWorkloadFromFlags(c *cli.Context, independent bool) (*search.Workload, error) {
	durS, err := traceParseDuration(c.String("duration"))
	if err != nil {
		return nil, err
	}
	sizes, _, err := sizesFromFlags(c)
	if err != nil {
		return nil, err
	}
	return &search.Workload{Sizes: sizes, DurationS: durS, Seed: c.Uint64("seed"), Independent: independent}, nil
}

// abortFromFlags reads --abort-after: a duration, or 0 for no abort.
func abortFromFlags(c *cli.Context) (float64, error) {
	a := c.String("abort-after")
	if a == "0" {
		return 0, nil
	}
	sec, err := parseSeconds(a)
	if err != nil {
		return 0, badInputf("--abort-after: %v (or 0 to turn it off)", err)
	}
	return sec, nil
}
