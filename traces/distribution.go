package traces

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
)

//go:generate go run ./internal/genquantiles -data ../../shared/data -out quantiles_gen.go

// Distribution is the joint distribution of request sizes (prompt tokens,
// output tokens) of a workload: either embedded from a real trace (Builtin)
// or the empirical one of a trace read from a file (FromRequests). It also
// keeps the marginal distributions for independent sampling. A Distribution
// is immutable and safe for concurrent use; randomness comes from the
// caller's *rand.Rand.
type Distribution struct {
	name   string
	source string
	// pairs are (prompt, output) pairs sampled uniformly by Sample.
	pairs []sizePair
	// promptQ and outputQ are sorted values (quantile tables) of the
	// marginals, interpolated linearly by SampleIndependent.
	promptQ, outputQ []float64
	// stats summarizes the trace the distribution was taken from.
	stats Stats
}

// sizePair is one request's (prompt, output) token counts.
type sizePair struct{ prompt, output int32 }

// Builtin returns the embedded size distribution of a real trace by name,
// ignoring case: "coding" (the Azure code trace) or "conversation" (the
// Azure conversation trace). See BuiltinNames.
func Builtin(name string) (*Distribution, error) {
	for _, d := range builtins {
		if strings.EqualFold(strings.TrimSpace(name), d.name) {
			return d, nil
		}
	}
	if len(builtins) == 0 {
		return nil, fmt.Errorf("traces: no builtin workloads are embedded (run go generate ./traces)")
	}
	return nil, fmt.Errorf("traces: unknown workload %q: expected one of %s", name, strings.Join(BuiltinNames(), ", "))
}

// BuiltinNames returns the names of the embedded distributions, sorted.
func BuiltinNames() []string {
	names := make([]string, len(builtins))
	for i, d := range builtins {
		names[i] = d.name
	}
	slices.Sort(names)
	return names
}

// FromRequests returns the empirical size distribution of reqs: Sample
// resamples their (prompt, output) pairs and SampleIndependent their
// marginals. Its Stats are Summarize(reqs). Sampling from the distribution
// of no requests panics; Synthesize reports it as an error instead.
func FromRequests(name string, reqs []Request) *Distribution {
	d := &Distribution{
		name:    name,
		source:  name,
		pairs:   make([]sizePair, len(reqs)),
		promptQ: make([]float64, len(reqs)),
		outputQ: make([]float64, len(reqs)),
		stats:   Summarize(reqs),
	}
	for i, r := range reqs {
		d.pairs[i] = sizePair{int32(min(r.PromptTokens, MaxTokens)), int32(min(r.OutputTokens, MaxTokens))}
		d.promptQ[i] = float64(r.PromptTokens)
		d.outputQ[i] = float64(r.OutputTokens)
	}
	slices.Sort(d.promptQ)
	slices.Sort(d.outputQ)
	return d
}

// Name returns the distribution's name: the builtin workload's name or the
// name given to FromRequests.
func (d *Distribution) Name() string { return d.name }

// Source says where the distribution comes from: for a builtin, the trace
// file it was derived from.
func (d *Distribution) Source() string { return d.source }

// Stats summarizes the trace the distribution was taken from: for a
// builtin, the real trace's request count, duration, rate and size
// statistics as recorded by the generator; for FromRequests,
// Summarize(reqs).
func (d *Distribution) Stats() Stats { return d.stats }

// Len returns the number of (prompt, output) pairs Sample draws from.
func (d *Distribution) Len() int { return len(d.pairs) }

// Sample draws one request size, keeping prompt and output together: a
// pair drawn uniformly from the distribution's pairs. This is the default,
// which preserves the correlation of prompt and output sizes.
func (d *Distribution) Sample(rng *rand.Rand) (prompt, output int) {
	p := d.pairs[d.sampleIndex(rng)]
	return int(p.prompt), int(p.output)
}

// sampleIndex draws the index of a size pair uniformly: for FromRequests,
// the index of the request whose sizes are taken.
func (d *Distribution) sampleIndex(rng *rand.Rand) int { return rng.IntN(len(d.pairs)) }

// SampleIndependent draws prompt and output sizes independently from their
// marginal distributions (inverse transform with linear interpolation
// between quantiles, rounded), as the reference simulator does.
func (d *Distribution) SampleIndependent(rng *rand.Rand) (prompt, output int) {
	return quantileDraw(d.promptQ, rng.Float64()), quantileDraw(d.outputQ, rng.Float64())
}

// quantileDraw returns the u-quantile of the sorted table q, interpolated
// linearly and rounded to a token count of at least 1.
func quantileDraw(q []float64, u float64) int {
	v := quantileSorted(q, u)
	return max(1, int(math.Round(v)))
}

// quantileSorted returns the p-quantile (0 ≤ p ≤ 1) of sorted values,
// interpolating linearly between order statistics: with h = (n−1)·p, it is
// x[⌊h⌋] + (h−⌊h⌋)·(x[⌊h⌋+1] − x[⌊h⌋]).
func quantileSorted(x []float64, p float64) float64 {
	if len(x) == 0 {
		return 0
	}
	h := float64(len(x)-1) * p
	i := int(h)
	if i >= len(x)-1 {
		return x[len(x)-1]
	}
	return x[i] + (h-float64(i))*(x[i+1]-x[i])
}
