package evaluator

import (
	"splitplan/costpower"
	"splitplan/evaluator/perf"
)

// The resolver (package resolve) imports this package, so the tests of
// this package cannot import it. resolve_ext_test.go (package
// evaluator_test, linked into the same test binary) sets these to
// resolve's built-in source before any test runs.
var (
	// TestResolve resolves model m on machine type mc with the built-in
	// source (resolve.Source.Resolve; the reference's fit with compat).
	TestResolve func(m costpower.Model, mc costpower.Machine, compat bool) (perf.IterationModel, perf.Provenance, error)
	// TestCluster resolves a design of cat with machine counts and a
	// model with the built-in source (resolve.NewCluster).
	TestCluster func(cat *costpower.Catalog, design string, prompt, token int, model string, compat bool) (Cluster, error)
)
