package evaluator_test

import (
	"testing"

	"splitplan/costpower"
	"splitplan/evaluator"
	"splitplan/resolve"
	"splitplan/traces"
)

// builtin is resolve's built-in source, with the reference's fit when
// compat is set.
func builtin(compat bool) resolve.Source {
	src := resolve.DefaultSource()
	src.Compat = compat
	return src
}

func init() {
	evaluator.TestCluster = func(design string, prompt, token int, model string, compat bool) (evaluator.Cluster, error) {
		cl, err := resolve.NamedCluster(costpower.Default(), builtin(compat), design, prompt, token, model)
		return cl.Sim(), err
	}
}

// resolved is design of cat with machine counts and model, resolved with
// the built-in source.
func resolved(t testing.TB, cat *costpower.Catalog, design string, prompt, token int, model string, compat bool) resolve.Cluster {
	t.Helper()
	cl, err := resolve.NamedCluster(cat, builtin(compat), design, prompt, token, model)
	if err != nil {
		t.Fatal(err)
	}
	return cl
}

// evaluate simulates cl serving reqs, failing the test on an error.
func evaluate(t testing.TB, cl resolve.Cluster, reqs []traces.Request, opt evaluator.Options) *evaluator.Result {
	t.Helper()
	res, err := evaluator.Evaluate(cl.Sim(), reqs, opt)
	if err != nil {
		t.Fatal(err)
	}
	return res
}
