package evaluator

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// TestIndexedPoolsChangeNothing: routing on the pools' blocks' least
// loads gives the same simulation, run for run, as scanning the pools — every
// pool indexed, down to one machine, against none — on clusters whose
// pools fall out of order (machines move to the mixed pool and back,
// under loads that saturate them), under every policy.
func TestIndexedPoolsChangeNothing(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(23, 29))
	designs := []struct {
		name          string
		prompt, token int
	}{{"Baseline-H100", 40, 0}, {"Splitwise-HH", 24, 12}, {"Splitwise-HA", 20, 20}, {"Splitwise-HH", 36, 4}, {"Baseline-A100", 50, 0}}
	kinds := []PolicyKind{PolicyMixed, PolicyMixed, PolicySarathi, PolicyPrefillFirst, PolicyRequestLevel}
	moved := 0
	for i := range 40 {
		d := designs[i%len(designs)]
		cl := mustCluster(t, d.name, d.prompt, d.token, "bloom-176b", false)
		cl.Policy = Policy{Kind: kinds[i%len(kinds)]}
		reqs := randomRequests(500+rng.IntN(1500), 40+300*rng.Float64(), 1+rng.IntN(3000), 1+rng.IntN(1+rng.IntN(900)), uint64(900+i))
		opt := Options{}
		if i%3 == 1 {
			opt.MaxPreemptions = 1 + rng.IntN(3)
		}
		if i%2 == 0 {
			opt.PromptQueueTokens = 256 + rng.IntN(4096) // queues count as long sooner: machines move
		}
		scanning, indexing := opt, opt
		scanning.indexFrom, indexing.indexFrom = 1<<30, 1
		scanned, indexed := sameSimulation(t, fmt.Sprintf("case %d (%s, %s): indexing the pools", i, cl, cl.Policy), cl, reqs, scanning, indexing)
		if scanned == nil {
			continue // unservable
		}
		if !indexed.anyIndexed || scanned.anyIndexed {
			t.Fatalf("case %d: indexed %v and %v, want true and false", i, indexed.anyIndexed, scanned.anyIndexed)
		}
		if scanned.out.PoolMoves > 0 {
			moved++
		}
	}
	if moved < 8 {
		t.Errorf("machines moved between pools in %d cases: the test does not exercise out-of-order pools", moved)
	}
}
