package traces

import (
	"fmt"
	"math"
)

// ScaledOutputs is d with every output length multiplied by factor
// (rounded, at least 1 token, at most MaxTokens) and the prompts kept: the
// empirical distribution of d's pairs so scaled (FromRequests), named
// after d and the factor. A sensitivity analysis moves the output length
// this way.
func (d *Distribution) ScaledOutputs(factor float64) (*Distribution, error) {
	if !(factor > 0) || math.IsInf(factor, 0) {
		return nil, fmt.Errorf("traces: output scale %v: expected a positive finite factor", factor)
	}
	reqs := make([]Request, len(d.pairs))
	for i, p := range d.pairs {
		out := int(math.Round(float64(p.output) * factor))
		reqs[i] = Request{ID: i, PromptTokens: int(p.prompt), OutputTokens: min(max(out, 1), MaxTokens)}
	}
	s := FromRequests(fmt.Sprintf("%s (outputs ×%g)", d.name, factor), reqs)
	s.source = d.source
	return s, nil
}
