package resolve

import (
	"fmt"

	"splitplan/evaluator"
)

// WithPoolCap is cluster cl with the machine type of one pool capped at
// capFraction of its GPUs' board power (costpower.Machine.WithCap): the
// prompt or the token pool of a Splitwise design, or every machine of a
// baseline (evaluator.PoolBaseline). The pool's iteration and power
// models are resolved again from src, so its latency, provisioned power
// and energy all follow the cap; the other pool is left as it was.
func WithPoolCap(cl Cluster, src Source, pool evaluator.Pool, capFraction float64) (Cluster, error) {
	if src.Compat != cl.Compat {
		return Cluster{}, fmt.Errorf("%s: the cluster is resolved with compat %v, the source to cap it with has compat %v", cl.Design.Name, cl.Compat, src.Compat)
	}
	base := cl.Design.IsBaseline()
	if base != (pool == evaluator.PoolBaseline) || pool == evaluator.PoolMixed {
		return Cluster{}, fmt.Errorf("%s: no %s pool to cap", cl.Design.Name, pool)
	}
	mc := cl.PromptType
	if pool == evaluator.PoolToken {
		mc = cl.TokenType
	}
	v, err := mc.WithCap(capFraction)
	if err != nil {
		return Cluster{}, err
	}
	pm, pv, err := src.Resolve(cl.Model, v)
	if err != nil {
		return Cluster{}, err
	}
	out := cl
	pw, perr := src.ResolvePower(cl.Model, v)
	if pool != evaluator.PoolToken {
		out.PromptType, out.PromptPerf, out.PromptProvenance, out.PromptPower = v, pm, pv, pw
	}
	if pool != evaluator.PoolPrompt {
		out.TokenType, out.TokenPerf, out.TokenProvenance, out.TokenPower = v, pm, pv, pw
	}
	if perr != nil || out.PromptPower == nil || out.TokenPower == nil {
		out.PromptPower, out.TokenPower = nil, nil
		if perr != nil {
			out.PowerNote = "no energy: " + perr.Error()
		}
	}
	return out, nil
}
