package evaluator_test

import (
	"splitplan/costpower"
	"splitplan/evaluator"
	"splitplan/evaluator/perf"
	"splitplan/resolve"
)

// builtin is resolve's built-in source, with the reference's fit when
// compat is set.
func builtin(compat bool) resolve.Source {
	src := resolve.DefaultSource()
	src.Compat = compat
	return src
}

func init() {
	evaluator.TestResolve = func(m costpower.Model, mc costpower.Machine, compat bool) (perf.IterationModel, perf.Provenance, error) {
		return builtin(compat).Resolve(m, mc)
	}
	evaluator.TestCluster = func(cat *costpower.Catalog, design string, prompt, token int, model string, compat bool) (evaluator.Cluster, error) {
		return resolve.NewCluster(cat, builtin(compat), design, prompt, token, model)
	}
}
