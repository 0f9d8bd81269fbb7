package search

import (
	"context"
	"fmt"
	"slices"

	"golang.org/x/sync/errgroup"

	"splitplan/evaluator/perf/errmodel"
	"splitplan/resolve"
)

// SensitivityInput is an input a sensitivity analysis moves.
type SensitivityInput int

const (
	// InputPromptTime scales every machine type's predicted prompt
	// iteration times.
	InputPromptTime SensitivityInput = iota
	// InputDecodeTime scales every machine type's predicted decode
	// iteration times.
	InputDecodeTime
	// InputKVBandwidth scales every machine type's link bandwidth, over
	// which a Splitwise design's KV-cache moves.
	InputKVBandwidth
	// InputRate scales the target rate.
	InputRate
	// InputOutputLength scales every request's output length.
	InputOutputLength
)

// SensitivityInputs are the inputs in the order a report lists them.
var SensitivityInputs = []SensitivityInput{InputPromptTime, InputDecodeTime, InputKVBandwidth, InputRate, InputOutputLength}

var sensitivityNames = [...]string{"prompt time", "decode time", "KV-transfer bandwidth", "arrival rate", "output length"}

// String names the input, e.g. "prompt time".
func (in SensitivityInput) String() string {
	if in < 0 || int(in) >= len(sensitivityNames) {
		return fmt.Sprintf("SensitivityInput(%d)", int(in))
	}
	return sensitivityNames[in]
}

// DefaultSensitivitySteps are the relative moves of a sensitivity
// analysis: each input down and up by 10% and 25%.
var DefaultSensitivitySteps = []float64{-0.25, -0.1, 0.1, 0.25}

// SensitivityRow is the search with one input moved.
type SensitivityRow struct {
	Input SensitivityInput
	// Change is the relative move, e.g. −0.25 for 25% less.
	Change float64
	// Result is the search's answer with the input moved.
	Result *Result
}

// Sensitivity searches p again with each input of SensitivityInputs
// moved alone by each of steps (relative, > −1): how the optimum moves
// when prompt time, decode time, KV-transfer bandwidth, arrival rate or
// output length is off by that much. The rows come input by input, in the
// steps' order; every search is Run's, so the answer does not depend on
// p.Parallel.
//
// nominal, when given, is Run's answer to p: each search of a cost or
// power goal then starts its designs' frontier walks from the nominal
// one's starts (scaled by the move for prompt time and the rate, whose
// prompt machines grow with them) and gallops from there instead of
// bisecting the whole range (hintedMin, as the robust scenarios do): the
// same optima where feasibility is monotone in the machine counts, in
// about 55% of the simulations.
func Sensitivity(ctx context.Context, p *Problem, nominal *Result, steps []float64) ([]SensitivityRow, error) {
	if !p.Goal.NeedsRate() {
		return nil, fmt.Errorf("search: a sensitivity analysis moves the rate of goals cost, power, energy and tco, not %s", p.Goal)
	}
	if p.Workload == nil || p.Workload.Sizes == nil {
		return nil, fmt.Errorf("search: no workload")
	}
	for _, st := range steps {
		if !(st > -1) || st != st {
			return nil, fmt.Errorf("search: sensitivity step %v: expected a relative move above −1", st)
		}
	}
	// The searches run side by side, their simulations bounded together
	// by p.Parallel: a search verifying its best plan (VerifyWinnerOnly)
	// checks one plan at a time, which would leave the other workers idle.
	rows := make([]SensitivityRow, 0, len(SensitivityInputs)*len(steps))
	for _, in := range SensitivityInputs {
		for _, st := range steps {
			rows = append(rows, SensitivityRow{Input: in, Change: st})
		}
	}
	sem := make(chan struct{}, max(p.Parallel, 1))
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(2 * max(p.Parallel, 1))
	for i := range rows {
		in, st := rows[i].Input, rows[i].Change
		g.Go(func() error {
			f := 1 + st
			q := *p
			q.Progress, q.Notes = nil, nil
			w := p.Workload
			q.Workload = w.with(w.Seed, w.DurationS)
			var adjust func(resolve.Cluster) resolve.Cluster
			switch in {
			case InputPromptTime, InputDecodeTime:
				pf, df := f, 1.0
				if in == InputDecodeTime {
					pf, df = 1, f
				}
				adjust = func(cl resolve.Cluster) resolve.Cluster {
					cl.PromptPerf = errmodel.Scaled{Model: cl.PromptPerf, Prompt: pf, Decode: df}
					cl.TokenPerf = errmodel.Scaled{Model: cl.TokenPerf, Prompt: pf, Decode: df}
					return cl
				}
			case InputKVBandwidth:
				cat := *p.Catalog
				cat.Machines = slices.Clone(cat.Machines)
				for i := range cat.Machines {
					cat.Machines[i].LinkGbps *= f
				}
				q.Catalog = &cat
			case InputRate:
				q.RateRPS *= f
			case InputOutputLength:
				sizes, err := w.Sizes.ScaledOutputs(f)
				if err != nil {
					return err
				}
				q.Workload.Sizes = sizes
			}
			var starts []hint
			if nominal != nil && len(nominal.starts) == len(p.Designs) {
				starts = nominal.starts
				if in == InputPromptTime || in == InputRate {
					starts = make([]hint, len(nominal.starts))
					for i, h := range nominal.starts {
						starts[i] = h.scaled(f)
					}
				}
			}
			q.VerifyWinnerOnly = true // (only the best plan is reported)
			res, _, err := runHinted(gctx, &q, adjust, sem, starts)
			if err != nil {
				return fmt.Errorf("search: %s %+g%%: %w", in, 100*st, err)
			}
			rows[i].Result = res
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	return rows, nil
}
