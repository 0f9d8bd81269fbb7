package costpower

import (
	"reflect"
	"testing"
)

// TestResolveDesignRebuildsGenerated: every design AddCappedGPUDesigns and
// AddCappedDesigns generate, looked up by its name or its ASCII alias in a
// fresh catalog, resolves to the same design over the same machine types
// (names, GPUs, tensor parallelism, caps, cost and power).
func TestResolveDesignRebuildsGenerated(t *testing.T) {
	t.Parallel()
	gen := Default()
	model, err := gen.Model("llama3.1-8b")
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, caps := range [][]float64{nil, {0.6, 0.725, 1}} {
		ds, _, err := gen.AddCappedGPUDesigns([]string{"h100", "h200", "a100", "DGX-H100cap"}, caps, model, MinKVTokens)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range ds {
			names = append(names, d.Name)
		}
	}
	vs, err := gen.AddCappedDesigns(append(gen.DefaultDesignNames(), "Splitwise-HHcap", "Baseline H200·tp2"), []float64{0.5, 0.8, 1})
	if err != nil {
		t.Fatal(err)
	}
	names = append(names, vs...)
	if len(names) < 500 {
		t.Fatalf("only %d generated names", len(names))
	}
	machines := func(c *Catalog, d Design) []Machine {
		var out []Machine
		for _, n := range []string{d.Machine, d.Prompt, d.Token} {
			if n == "" {
				continue
			}
			m, err := c.Machine(n)
			if err != nil {
				t.Fatalf("%s: %v", d.Name, err)
			}
			out = append(out, m)
		}
		return out
	}
	for _, n := range names {
		want, err := gen.Design(n)
		if err != nil {
			t.Fatal(err)
		}
		for _, as := range []string{n, DesignAlias(n)} {
			fresh := Default()
			got, err := fresh.ResolveDesign(as)
			if err != nil {
				t.Errorf("ResolveDesign(%q): %v", as, err)
				continue
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("ResolveDesign(%q) = %+v, want %+v", as, got, want)
				continue
			}
			if g, w := machines(fresh, got), machines(gen, want); !reflect.DeepEqual(g, w) {
				t.Errorf("ResolveDesign(%q): machine types %+v, want %+v", as, g, w)
			}
			again, err := fresh.Design(DesignAlias(n))
			if err != nil || again.Name != want.Name {
				t.Errorf("after ResolveDesign(%q), Design(%q) = %q, %v", as, DesignAlias(n), again.Name, err)
			}
		}
	}
}

// TestResolveMachine: a machine type by its catalog name, or at a tensor
// parallelism by the name the tool gives it or its GPU label; the same
// instance whichever name, added to the catalog once; unknown names and
// TPs that do not divide the node are errors.
func TestResolveMachine(t *testing.T) {
	t.Parallel()
	c := Default()
	if m, err := c.ResolveMachine("DGX-A100"); err != nil || m.Name != "DGX-A100" {
		t.Fatalf("DGX-A100: %v %v", m.Name, err)
	}
	n := len(c.Machines)
	var first Machine
	for i, name := range []string{"DGX-A100·tp1", "DGX-A100-tp1", "A100·tp1", "a100-tp1"} {
		m, err := c.ResolveMachine(name)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if i == 0 {
			first = m
		} else if m.Name != first.Name || m.TensorParallel != 1 || m.GPUs != first.GPUs {
			t.Errorf("%s resolves to %s (tp%d), want %s", name, m.Name, m.TensorParallel, first.Name)
		}
	}
	if len(c.Machines) != n+1 {
		t.Errorf("the catalog grew by %d machine types, want 1", len(c.Machines)-n)
	}
	for _, bad := range []string{"DGX-Z100", "A100·tp3", "DGX-A100-tp16", "Z100·tp1"} {
		if _, err := c.ResolveMachine(bad); err == nil {
			t.Errorf("%s resolved", bad)
		}
	}
}
