package errmodel

import (
	"fmt"
	"hash/fnv"
	"math"
	"math/rand/v2"
	"sort"

	"splitplan/evaluator/perf"
)

// Phase is the phase of an iteration whose time a residual measures.
type Phase int

const (
	// Prompt is the prompt (prefill) phase; TTFT stands for it in the
	// serving benchmarks.
	Prompt Phase = iota
	// Decode is the decode phase; TPOT stands for it in the serving
	// benchmarks.
	Decode
)

// Phases are the phases in their order.
var Phases = [...]Phase{Prompt, Decode}

// String is "prompt" or "decode".
func (p Phase) String() string {
	if p == Decode {
		return "decode"
	}
	return "prompt"
}

// Residuals are the validation residuals log(predicted / measured) of one
// provenance and phase, sorted ascending, and where they come from.
type Residuals struct {
	Kind  perf.ProvenanceKind
	Phase Phase
	// Source says which validation produced them.
	Source string
	// N is the number of residuals the validation measured.
	N int
	// Log holds the residuals, sorted ascending: all N of them, or their
	// quantiles at (i + ½)/len(Log) when N is larger (each stands for an
	// equal share of the residuals).
	Log []float64
}

// Model is an error model: the residuals of each provenance and phase.
// The zero Model has none: every draw is exactly 1 (no model error).
type Model struct {
	// Sets holds at most one Residuals per (kind, phase).
	Sets []Residuals
}

// Builtin is the error model measured on ../shared/data by the
// validations the package documentation names (residuals_gen.go).
func Builtin() Model {
	out := Model{Sets: make([]Residuals, len(builtinResiduals))}
	for i, r := range builtinResiduals {
		out.Sets[i] = r
		out.Sets[i].Log = append([]float64(nil), r.Log...)
	}
	return out
}

// Of returns the residuals of kind and phase (nil when the model has none).
func (m Model) Of(kind perf.ProvenanceKind, ph Phase) []float64 {
	for _, s := range m.Sets {
		if s.Kind == kind && s.Phase == ph {
			return s.Log
		}
	}
	return nil
}

// Factor is the scale of a predicted time (measured / predicted) at the
// uniform quantile u ∈ [0, 1) of kind's residuals of phase: the residual
// of index ⌊u·n⌋ in ascending order, r, gives exp(−r), so u near 1 picks
// the model's worst underestimates (the slowest reality). Without
// residuals it is 1.
func (m Model) Factor(kind perf.ProvenanceKind, ph Phase, u float64) float64 {
	r := m.Of(kind, ph)
	if len(r) == 0 {
		return 1
	}
	// Ascending residuals: the smallest log(pred/measured) is the largest
	// measured/pred. Index from the top so that u grows with the factor.
	i := int(u * float64(len(r)))
	i = min(max(i, 0), len(r)-1)
	return math.Exp(-r[len(r)-1-i])
}

// Validate checks that every residual is finite, that the sets are
// sorted, and that no (kind, phase) repeats.
func (m Model) Validate() error {
	seen := map[[2]int]bool{}
	for _, s := range m.Sets {
		k := [2]int{int(s.Kind), int(s.Phase)}
		if seen[k] {
			return fmt.Errorf("errmodel: %s %s residuals given twice", s.Kind, s.Phase)
		}
		seen[k] = true
		if !sort.Float64sAreSorted(s.Log) {
			return fmt.Errorf("errmodel: %s %s residuals are not sorted", s.Kind, s.Phase)
		}
		for _, r := range s.Log {
			if math.IsNaN(r) || math.IsInf(r, 0) {
				return fmt.Errorf("errmodel: %s %s residual %v is not finite", s.Kind, s.Phase, r)
			}
		}
	}
	return nil
}

// Uniform is the uniform draw in [0, 1) of scenario for one GPU and
// phase: a PCG seeded by seed and a hash of (scenario, gpu, phase), so
// every (scenario, GPU, phase) has one draw, the same whichever design,
// machine or iteration asks, and independent of the others.
func Uniform(seed uint64, scenario int, gpu string, ph Phase) float64 {
	h := fnv.New64a()
	fmt.Fprintf(h, "%d\x00%s\x00%d", scenario, gpu, ph)
	return rand.New(rand.NewPCG(seed, h.Sum64())).Float64()
}

// Scaled is a performance model whose prompt and decode times are Model's
// scaled by Prompt and Decode (measured/predicted factors, e.g. from
// Factor). A mixed iteration's time is Model's scaled by the two factors
// weighted by the phases' shares of the iteration, each share as
// Model's prompt-only and decode-only times of its parts. Factors of 1
// give Model's times exactly.
type Scaled struct {
	Model          perf.IterationModel
	Prompt, Decode float64
}

// PromptTime is Model's prompt time × Prompt.
func (m Scaled) PromptTime(tokens int) (float64, bool) {
	t, ex := m.Model.PromptTime(tokens)
	return t * m.Prompt, ex
}

// DecodeTime is Model's decode time × Decode.
func (m Scaled) DecodeTime(batch int, contextTokens int64) (float64, bool) {
	t, ex := m.Model.DecodeTime(batch, contextTokens)
	return t * m.Decode, ex
}

// MixedTime is Model's mixed time scaled by the phases' factors weighted
// by their parts' prompt-only and decode-only times.
func (m Scaled) MixedTime(promptTokens, decodes int, contextTokens int64) (float64, bool) {
	t, ex := m.Model.MixedTime(promptTokens, decodes, contextTokens)
	if m.Prompt == m.Decode {
		return t * m.Prompt, ex
	}
	p, _ := m.Model.PromptTime(promptTokens)
	d, _ := m.Model.DecodeTime(decodes, contextTokens)
	if !(p+d > 0) {
		return t * m.Prompt, ex
	}
	return t * (m.Prompt*p + m.Decode*d) / (p + d), ex
}
