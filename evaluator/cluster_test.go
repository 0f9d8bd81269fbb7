package evaluator

import (
	"errors"
	"strings"
	"testing"

	"splitplan/traces"
)

// TestClusterChecks: the simulator refuses a cluster resolved for another
// compat than its options', returns a machine type's Unfit reason unless
// Options.KVCapacityTokens sets the capacity, and refuses a cluster whose
// sizes hold no KV-cache.
func TestClusterChecks(t *testing.T) {
	t.Parallel()
	reqs := []traces.Request{{ID: 0, Arrival: 0, PromptTokens: 100, OutputTokens: 5}}
	base := mustCluster(t, "HH", 1, 1, "bloom-176b", false)
	if _, err := Evaluate(base, reqs, Options{}); err != nil {
		t.Fatal(err)
	}
	if _, err := Evaluate(base, reqs, Options{Compat: true}); err == nil || !strings.Contains(err.Error(), "resolved with compat false") {
		t.Errorf("compat options on a cluster resolved without: error %v", err)
	}
	unfit := errors.New("machine type DGX-H100: the weights do not fit")
	cl := base
	cl.TokenType.Unfit = unfit
	if _, err := Evaluate(cl, reqs, Options{}); !errors.Is(err, unfit) {
		t.Errorf("an unfit token type: error %v, want %v", err, unfit)
	}
	if _, err := Evaluate(cl, reqs, Options{KVCapacityTokens: 10_000}); err != nil {
		t.Errorf("an unfit type with the capacity set: %v", err)
	}
	cl = base
	cl.PromptType.KVCapacityBytes = 0
	if _, err := Evaluate(cl, reqs, Options{}); err == nil || !strings.Contains(err.Error(), "holds no KV-cache") {
		t.Errorf("a type with no KV-cache: error %v", err)
	}
	cl = base
	cl.KVBytesPerToken = 0
	if _, err := Evaluate(cl, reqs, Options{}); err == nil || !strings.Contains(err.Error(), "KV-cache of a token") {
		t.Errorf("no KV bytes a token: error %v", err)
	}
}
