package evaluator

// The resolver (package resolve) imports this package, so the tests of
// this package cannot import it. resolve_ext_test.go (package
// evaluator_test, linked into the same test binary) sets this to
// resolve's built-in source before any test runs; the tests that need a
// catalog of their own are external tests (package evaluator_test).

// TestCluster resolves a design of the default catalog with machine
// counts and a model with the built-in source (the reference's fit with
// compat): resolve.NewCluster's Cluster.Sim.
var TestCluster func(design string, prompt, token int, model string, compat bool) (Cluster, error)

// IterTime is iterTime, for the external tests.
var IterTime = iterTime
