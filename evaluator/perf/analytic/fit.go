package analytic

import (
	"errors"
	"fmt"
	"math"
	"runtime"
	"slices"
	"strings"

	"golang.org/x/sync/errgroup"
	"gonum.org/v1/gonum/optimize"

	"splitplan/arch"
	"splitplan/evaluator/perf"
	"splitplan/hw"
)

// Kind says which iteration a Sample timed.
type Kind int

// The kinds of sample.
const (
	// PromptIteration is a profile row's prompt_time.
	PromptIteration Kind = iota
	// DecodeIteration is a profile row's token_time.
	DecodeIteration
)

// String returns "prompt" or "decode".
func (k Kind) String() string {
	if k == DecodeIteration {
		return "decode"
	}
	return "prompt"
}

// Sample is one measured iteration: the architecture and parallelism it
// ran with, its work and its duration.
type Sample struct {
	Arch    arch.Arch
	TP      int
	Kind    Kind
	Batch   Batch
	Seconds float64
}

// SamplesFromProfile turns SplitwiseSim profile rows of architecture a into
// samples, two per row: prompt_time is one prompt iteration of batch_size
// prompts of prompt_size tokens each; token_time one decode iteration of
// batch_size requests at the mean context of the decode, prompt_size +
// token_size/2 tokens each (the interpretation of perf.Fit's context
// curve). Rows whose model is not a (by arch.ShortName) are an error.
func SamplesFromProfile(rows []perf.ProfileRow, a arch.Arch) ([]Sample, error) {
	out := make([]Sample, 0, 2*len(rows))
	for i, r := range rows {
		if arch.ShortName(r.Model) != a.Name {
			return nil, fmt.Errorf("analytic: profile row %d: model %q, expected %s", i+1, r.Model, a.Name)
		}
		ps, bs := r.PromptSize, r.BatchSize
		out = append(out,
			Sample{Arch: a, TP: r.TP, Kind: PromptIteration, Seconds: r.PromptTime,
				Batch: Batch{PromptTokens: ps * bs, Prompts: bs, PromptAttnPairs: float64(bs) * AttnPairs(ps, 0)}},
			Sample{Arch: a, TP: r.TP, Kind: DecodeIteration, Seconds: r.TokenTime,
				Batch: Batch{Decodes: bs, DecodeContextTokens: int64(bs) * int64(ps+r.TokenSize/2)}})
	}
	return out, nil
}

// DropInconsistent returns the profile rows without those that contradict
// "more work never takes less time": a row is dropped when a row of the
// same model, hardware, TP and prompt size with fewer prompts per batch
// has a prompt time more than 20% longer, so the run cannot have done the
// work it names (in the SplitwiseSim profile, the batches of 64 prompts of
// 512 tokens at TP 2 report a tenth of the prompt time of 32, and a decode
// time below that of 32 too). Both times of a dropped row go. It returns
// the kept rows, in order, and how many were dropped.
func DropInconsistent(rows []perf.ProfileRow) ([]perf.ProfileRow, int) {
	kept := rows[:0:0]
	for i, r := range rows {
		bad := false
		for j, o := range rows {
			if j != i && o.TP == r.TP && o.PromptSize == r.PromptSize && o.BatchSize < r.BatchSize &&
				o.PromptTime > 1.2*r.PromptTime && strings.EqualFold(o.Model, r.Model) && strings.EqualFold(o.Hardware, r.Hardware) {
				bad = true
				break
			}
		}
		if !bad {
			kept = append(kept, r)
		}
	}
	return kept, len(rows) - len(kept)
}

// Bounds of the fitted efficiencies: fractions of peak from 2%, memory
// up to 90% of the spec sheet's bandwidth (what streaming kernels reach on
// HBM; left free, the fit took 100% and pushed the decodes' fixed costs
// into OverheadS), per-iteration overheads up to 1 s, per-sequence ones up
// to 50 ms, a prompt iteration's up to 200 ms.
const (
	minFraction     = 0.02
	maxMemory       = 0.9
	maxOverhead     = 1.0 // seconds per iteration
	maxSeqOver      = 0.05
	maxPromptOver   = 0.2
	largeMessageMin = 16.0 // MiB, the grid of LargeMessageMiB
	largeMessageMax = 128.0
	largeMessageInc = 8.0
)

// FitOptions are the precisions of the fitted runs (the SplitwiseSim
// profiles ran bf16 weights and KV cache: the zero value).
type FitOptions struct {
	Weights, KV arch.Precision
}

// Fit returns the Efficiency that minimises the mean squared log ratio of
// predicted to measured time over samples run on gpu (every sample weighs
// the same; a log ratio treats 10% too slow and 10% too fast alike at any
// scale). Seven values are fitted: Compute, Memory, Comm, CommLarge,
// OverheadS, SequenceOverheadS and PromptOverheadS, searched within their
// bounds (fractions from 0.02, Memory up to 0.9; overheads up to 1 s,
// 50 ms and 200 ms) through a logistic transform, by Nelder–Mead
// (gonum/optimize) from two starts, the better result kept — for each
// LargeMessageMiB of a grid (16 to 128 MiB by 8), the best of the grid
// kept, so the size where large all-reduces start is chosen on the
// samples too. Every sample's configuration must be valid (weights
// fitting on gpu at its TP).
func Fit(samples []Sample, gpu hw.GPU, opt FitOptions) (Efficiency, error) {
	if len(samples) == 0 {
		return Efficiency{}, errors.New("analytic: no samples to fit")
	}
	for i, s := range samples {
		if !(s.Seconds > 0) || math.IsInf(s.Seconds, 0) {
			return Efficiency{}, fmt.Errorf("analytic: sample %d: time %v: expected a positive finite number of seconds", i+1, s.Seconds)
		}
		if _, err := New(Config{Arch: s.Arch, GPU: gpu, TP: s.TP, Weights: opt.Weights, KV: opt.KV, Eff: DefaultEfficiency}); err != nil {
			return Efficiency{}, fmt.Errorf("analytic: sample %d: %w", i+1, err)
		}
	}
	// Group the samples by (arch, tp) so each evaluation builds one model
	// per group.
	type group struct {
		a       arch.Arch
		tp      int
		samples []Sample
	}
	var groups []*group
	for _, s := range samples {
		idx := slices.IndexFunc(groups, func(g *group) bool { return g.tp == s.TP && g.a == s.Arch })
		if idx < 0 {
			groups = append(groups, &group{a: s.Arch, tp: s.TP})
			idx = len(groups) - 1
		}
		groups[idx].samples = append(groups[idx].samples, s)
	}
	loss := func(e Efficiency) float64 {
		var sum float64
		for _, g := range groups {
			m, err := New(Config{Arch: g.a, GPU: gpu, TP: g.tp, Weights: opt.Weights, KV: opt.KV, Eff: e})
			if err != nil {
				return math.Inf(1)
			}
			for _, s := range g.samples {
				r := math.Log(m.BatchTime(s.Batch) / s.Seconds)
				sum += r * r
			}
		}
		return sum / float64(len(samples))
	}
	best, bestLoss := Efficiency{}, math.Inf(1)
	starts := []Efficiency{
		{Compute: 0.6, Memory: 0.8, Comm: 0.8, CommLarge: 0.5, OverheadS: 5e-3, SequenceOverheadS: 50e-6, PromptOverheadS: 10e-3},
		{Compute: 0.3, Memory: 0.5, Comm: 0.5, CommLarge: 0.3, OverheadS: 20e-3, SequenceOverheadS: 200e-6, PromptOverheadS: 20e-3},
	}
	// The grid's fits are independent: run them on every core, then keep
	// the best in grid order (the first of equal losses), as a loop would.
	type run struct {
		mib   float64
		start Efficiency
		res   *optimize.Result
	}
	var runs []run
	for mib := largeMessageMin; mib <= largeMessageMax; mib += largeMessageInc {
		for _, start := range starts {
			runs = append(runs, run{mib: mib, start: start})
		}
	}
	var g errgroup.Group
	g.SetLimit(runtime.GOMAXPROCS(0))
	for i := range runs {
		r := &runs[i]
		g.Go(func() error {
			p := optimize.Problem{Func: func(x []float64) float64 { return loss(decode(x, r.mib)) }}
			res, err := optimize.Minimize(p, encode(r.start), &optimize.Settings{MajorIterations: 4000, FuncEvaluations: 20000},
				&optimize.NelderMead{})
			if err != nil && res == nil {
				return fmt.Errorf("analytic: fit: %w", err)
			}
			r.res = res
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return Efficiency{}, err
	}
	for _, r := range runs {
		if e := decode(r.res.X, r.mib); r.res.F < bestLoss {
			best, bestLoss = e, r.res.F
		}
	}
	if err := best.Validate(); err != nil || math.IsInf(bestLoss, 1) {
		return Efficiency{}, fmt.Errorf("analytic: fit did not converge to valid efficiencies (%+v)", best)
	}
	return best, nil
}

// FitProfile fits the efficiencies of gpu to SplitwiseSim profile rows of
// architecture a (all tensor parallelisms; see SamplesFromProfile),
// after DropInconsistent, with bf16 weights and KV cache.
func FitProfile(rows []perf.ProfileRow, a arch.Arch, gpu hw.GPU) (Efficiency, error) {
	rows, _ = DropInconsistent(rows)
	s, err := SamplesFromProfile(rows, a)
	if err != nil {
		return Efficiency{}, err
	}
	return Fit(s, gpu, FitOptions{})
}

// logistic maps the real line onto (lo, hi); logit is its inverse.
func logistic(x, lo, hi float64) float64 { return lo + (hi-lo)/(1+math.Exp(-x)) }

func logit(y, lo, hi float64) float64 {
	f := (y - lo) / (hi - lo)
	f = min(max(f, 1e-9), 1-1e-9)
	return math.Log(f / (1 - f))
}

// decode maps the optimiser's seven unbounded coordinates to an
// Efficiency: Compute, Memory, Comm, OverheadS, SequenceOverheadS,
// CommLarge and PromptOverheadS, with LargeMessageMiB mib. ScoreBytes is
// not fitted (left at 0, fused attention): the profiles' prompt times do
// not grow with the attention pairs faster than the attention FLOPs
// explain; nor are FlatLatency and LayerOverheadS (fitted, they made the
// A100 fit carry worse to the H100: the profiles cannot tell a per-layer
// cost from a per-iteration one).
func decode(x []float64, mib float64) Efficiency {
	return Efficiency{
		Compute:           logistic(x[0], minFraction, 1),
		Memory:            logistic(x[1], minFraction, maxMemory),
		Comm:              logistic(x[2], minFraction, 1),
		OverheadS:         logistic(x[3], 0, maxOverhead),
		SequenceOverheadS: logistic(x[4], 0, maxSeqOver),
		CommLarge:         logistic(x[5], minFraction, 1),
		PromptOverheadS:   logistic(x[6], 0, maxPromptOver),
		LargeMessageMiB:   mib,
	}
}

func encode(e Efficiency) []float64 {
	return []float64{
		logit(e.Compute, minFraction, 1), logit(e.Memory, minFraction, maxMemory), logit(e.Comm, minFraction, 1),
		logit(e.OverheadS, 0, maxOverhead), logit(e.SequenceOverheadS, 0, maxSeqOver),
		logit(e.CommLarge, minFraction, 1), logit(e.PromptOverheadS, 0, maxPromptOver),
	}
}

// MAPE returns the mean absolute percentage error (in %) of m-style
// predictions over samples of one kind on gpu with efficiencies e, and
// how many samples it covered.
func MAPE(samples []Sample, gpu hw.GPU, e Efficiency, kind Kind, opt FitOptions) (float64, int, error) {
	var sum float64
	n := 0
	for _, s := range samples {
		if s.Kind != kind {
			continue
		}
		m, err := New(Config{Arch: s.Arch, GPU: gpu, TP: s.TP, Weights: opt.Weights, KV: opt.KV, Eff: e})
		if err != nil {
			return 0, 0, err
		}
		sum += math.Abs(m.BatchTime(s.Batch)-s.Seconds) / s.Seconds
		n++
	}
	if n == 0 {
		return 0, 0, fmt.Errorf("analytic: no %s samples", kind)
	}
	return 100 * sum / float64(n), n, nil
}
