package search

import (
	"context"
	"fmt"
	"slices"

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
	var rows []SensitivityRow
	for _, in := range SensitivityInputs {
		for _, st := range steps {
			if !(st > -1) || st != st {
				return nil, fmt.Errorf("search: sensitivity step %v: expected a relative move above −1", st)
			}
			f := 1 + st
			q := *p
			q.Progress, q.Notes = nil, nil
			w := p.Workload
			q.Workload = &Workload{Sizes: w.Sizes, DurationS: w.DurationS, Seed: w.Seed, Independent: w.Independent, Arrivals: w.Arrivals}
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
					return nil, err
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
			res, _, err := runHinted(ctx, &q, adjust, nil, starts)
			if err != nil {
				return nil, fmt.Errorf("search: %s %+g%%: %w", in, 100*st, err)
			}
			rows = append(rows, SensitivityRow{Input: in, Change: st, Result: res})
		}
	}
	return rows, nil
}
