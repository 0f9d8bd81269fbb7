package evaluator

import "fmt"

// WithPoolCap is cluster cl with the machine type of one pool capped at
// capFraction of its GPUs' board power (costpower.Machine.WithCap): the
// prompt or the token pool of a Splitwise design, or every machine of a
// baseline (PoolBaseline). The pool's iteration and power models are
// resolved again from src, so its latency, provisioned power and energy
// all follow the cap; the other pool is left as it was.
func (cl Cluster) WithPoolCap(src PerfSource, pool Pool, capFraction float64, compat bool) (Cluster, error) {
	base := cl.Design.IsBaseline()
	if base != (pool == PoolBaseline) || pool == PoolMixed {
		return Cluster{}, fmt.Errorf("%s: no %s pool to cap", cl.Design.Name, pool)
	}
	mc := cl.PromptType
	if pool == PoolToken {
		mc = cl.TokenType
	}
	v, err := mc.WithCap(capFraction)
	if err != nil {
		return Cluster{}, err
	}
	pm, pv, err := src.Resolve(cl.Model, v, compat)
	if err != nil {
		return Cluster{}, err
	}
	out := cl
	pw, perr := src.ResolvePower(cl.Model, v)
	if pool != PoolToken {
		out.PromptType, out.PromptPerf, out.PromptProvenance, out.PromptPower = v, pm, pv, pw
	}
	if pool != PoolPrompt {
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
