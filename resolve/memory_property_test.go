package resolve

import (
	"errors"
	"testing"

	"splitplan/costpower"
	"splitplan/memory"
)

// TestResolveRefusesWhatMemoryRefuses: over every catalog model with an
// architecture, every machine type with a GPU spec and every tensor
// parallelism the node can split into, the analytic model resolves a
// replica exactly when the one memory model holds its weights: it never
// prices a replica no engine can load, and refuses none the memory model
// admits (the property #28 asks of every path that answers with
// iteration times).
func TestResolveRefusesWhatMemoryRefuses(t *testing.T) {
	t.Parallel()
	cat := costpower.Default()
	src := DefaultSource()
	src.Physics = true // the analytic model for every pair, profiled or not
	fits, refused, other := 0, 0, 0
	for _, m := range cat.Models {
		if m.Arch == "" {
			continue
		}
		for _, mc := range cat.Machines {
			if mc.GPUSpec == "" {
				continue
			}
			for tp := 1; tp <= mc.GPUs; tp++ {
				node, err := mc.WithTP(tp)
				if err != nil {
					continue
				}
				_, merr := m.Memory(node.Instance())
				noFit := errors.Is(merr, memory.ErrNoFit)
				_, _, rerr := src.Resolve(m, node)
				switch {
				case noFit && !errors.Is(rerr, memory.ErrNoFit):
					t.Errorf("%s on %s: the memory model refuses it (%v) but Resolve gives %v", m.Name, node.Label(), merr, rerr)
				case !noFit && errors.Is(rerr, memory.ErrNoFit):
					t.Errorf("%s on %s: the memory model holds it but Resolve refuses it: %v", m.Name, node.Label(), rerr)
				case noFit:
					refused++
				case rerr == nil:
					fits++
				default:
					other++
				}
			}
		}
	}
	t.Logf("%d replicas resolved, %d refused for their weights, %d refused for another reason", fits, refused, other)
	if fits == 0 || refused == 0 {
		t.Errorf("want both kinds: %d resolved, %d refused", fits, refused)
	}
}
