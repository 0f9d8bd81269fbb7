package evaluator

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// mixedFormOnly is mixed batching without its shortcuts: mixedPolicy's
// form, cut rule and reference bookkeeping, and noShortcuts' answers (the
// default of a policy that has none).
type mixedFormOnly struct{ noShortcuts }

func (mixedFormOnly) form(s *sim, m *machine) { mixedPolicy{}.form(s, m) }

func (mixedFormOnly) cuts(s *sim, m *machine, r int32) bool { return mixedPolicy{}.cuts(s, m, r) }

func (mixedFormOnly) reference() bool { return mixedPolicy{}.reference() }

// TestPolicyShortcutsChangeNothing: mixed batching's own shortcuts
// (policy_mixed.go: startAlone, decodesJoin, joinWaiting, starvedFirst)
// give exactly the simulation of the same policy with noShortcuts'
// answers — every result and every run started — on baselines (where
// every machine follows the simulation's policy), and they do take over
// runs; a policy's shortcuts are its own, beside its form.
func TestPolicyShortcutsChangeNothing(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(31, 32))
	designs := []struct {
		name   string
		prompt int
	}{{"Baseline-H100", 2}, {"Baseline-A100", 3}, {"Baseline-H100", 1}}
	for i := 0; i < 12; i++ {
		d := designs[i%len(designs)]
		cl := mustCluster(t, d.name, d.prompt, 0, "bloom-176b", false)
		reqs := randomRequests(150+rng.IntN(250), 2+10*rng.Float64(), 1+rng.IntN(4000), 1+rng.IntN(1200), uint64(700+i))
		opt := Options{Energy: i%2 == 0}
		if i%3 == 1 {
			opt.MaxPreemptions = 1 + rng.IntN(3)
		}
		if i%4 == 2 {
			opt.MaxBatchRequests, opt.MaxBatchTokens = 4+rng.IntN(40), 512+rng.IntN(4096)
		}
		what := fmt.Sprintf("case %d (%s, %+v)", i, cl, opt)
		var shortRuns, formedRuns []string
		run := func(pol batchPolicy, runs *[]string) (*Result, *sim) {
			s, err := newSim(cl, reqs, opt)
			if err != nil {
				t.Fatalf("%s: %v", what, err)
			}
			s.policy = pol
			s.onRun = func(m *machine, now float64) {
				*runs = append(*runs, fmt.Sprint(m.id, now, m.runIters, m.batch))
			}
			if err := s.run(t.Context()); err != nil {
				t.Fatalf("%s: %v", what, err)
			}
			return s.finishResult(), s
		}
		short, s := run(mixedPolicy{}, &shortRuns)
		formed, _ := run(mixedFormOnly{}, &formedRuns)
		if !sameResult(short, formed) {
			t.Errorf("%s: mixed batching's shortcuts change the simulation", what)
		}
		if k, ok := sameRuns(shortRuns, formedRuns); !ok {
			t.Errorf("%s: run %d differs: shortcuts %q, formed %q", what, k, at(shortRuns, k), at(formedRuns, k))
		}
		lazy := false
		for j := range s.m {
			lazy = lazy || s.m[j].decIters > 0
		}
		if !lazy {
			t.Errorf("%s: no lazy run: the case does not exercise the shortcuts", what)
		}
	}
}
