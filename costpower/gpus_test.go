package costpower

import (
	"math"
	"strings"
	"testing"
)

// TestTPChoicesFit: over every built-in model and GPU, a proposed tensor
// parallelism always holds the weights and the minimum KV-cache in the
// memory model (Model.Memory), and every divisor left out does not.
func TestTPChoicesFit(t *testing.T) {
	t.Parallel()
	c := Default()
	for _, model := range c.Models {
		for _, fam := range c.GPUFamilies() {
			m, err := c.GPUMachine(fam)
			if err != nil {
				t.Fatal(err)
			}
			chosen := map[int]bool{}
			for _, tp := range TPChoices(m, model, MinKVTokens) {
				chosen[tp] = true
			}
			for tp := 1; tp <= m.GPUs; tp++ {
				if m.GPUs%tp != 0 {
					continue
				}
				node, _ := m.WithTP(tp)
				b, err := model.Memory(node.Instance())
				fits := err == nil && b.Tokens >= MinKVTokens
				if fits != chosen[tp] {
					t.Errorf("%s on %s: tp%d proposed %v, but the memory model says %d tokens (%v)", model.Name, m.Name, tp, chosen[tp], b.Tokens, err)
				}
			}
		}
	}
}

// TestTPChoicesRefuse: configurations that cannot load their weights
// under an engine's 0.9 memory utilization are never proposed (issue 28),
// and the reason for a GPU with no choice at all gives the sizes.
func TestTPChoicesRefuse(t *testing.T) {
	t.Parallel()
	c := Default()
	for _, tc := range []struct {
		model, gpu string
		refused    int // a TP that must not be proposed
		fallback   int // the smallest one that must be (0: none)
	}{
		{"deepseek-r1", "h100", 8, 0},
		{"llama3.1-70b", "h200", 1, 2},
		{"mixtral-8x7b", "l40s", 2, 4},
	} {
		model, _ := c.Model(tc.model)
		m, err := c.GPUMachine(tc.gpu)
		if err != nil {
			t.Fatal(err)
		}
		tps := TPChoices(m, model, MinKVTokens)
		for _, tp := range tps {
			if tp == tc.refused {
				t.Errorf("%s on %s: tp%d proposed", tc.model, tc.gpu, tp)
			}
		}
		if tc.fallback > 0 && (len(tps) == 0 || tps[0] != tc.fallback) {
			t.Errorf("%s on %s: choices %v, want the smallest %d", tc.model, tc.gpu, tps, tc.fallback)
		}
		if tc.fallback == 0 {
			if len(tps) != 0 {
				t.Errorf("%s on %s: choices %v, want none", tc.model, tc.gpu, tps)
			}
			if r := NoFitReason(m, model, MinKVTokens); !strings.Contains(r, "GiB per GPU") || !strings.Contains(r, "H100·tp8") {
				t.Errorf("reason %q gives no sizes", r)
			}
		}
	}
}

func TestWithTP(t *testing.T) {
	t.Parallel()
	c := Default()
	b200, err := c.GPUMachine("b200")
	if err != nil {
		t.Fatal(err)
	}
	node, err := b200.WithTP(2)
	if err != nil {
		t.Fatal(err)
	}
	if node.Name != "DGX-B200·tp2" || node.GPUs != 8 || node.TensorParallel != 2 || node.InstancesPerMachine() != 4 || node.Label() != "B200·tp2" ||
		node.CostUSDPerH != b200.CostUSDPerH || node.PowerKW != b200.PowerKW {
		t.Errorf("B200 at tp2: %+v, want the node's GPUs, cost and power with 4 replicas", node)
	}
	inst := node.Instance()
	if inst.GPUs != 2 || inst.TensorParallel != 2 || inst.NodeGPUCount() != 8 || inst.InstancesPerMachine() != 1 {
		t.Errorf("B200 tp2 replica: %+v", inst)
	}
	for _, f := range []struct {
		name      string
		got, want float64
	}{{"cost", inst.CostUSDPerH, b200.CostUSDPerH / 4}, {"power", inst.PowerKW, b200.PowerKW / 4}, {"link", inst.LinkGbps, b200.LinkGbps / 4},
		{"memory", float64(inst.MemoryBytes()), float64(b200.MemoryBytes()) / 4}} {
		if math.Abs(f.got-f.want) > 1e-9*f.want {
			t.Errorf("replica of tp2 on 8 GPUs: %s %v, want a quarter of the node's: %v", f.name, f.got, f.want)
		}
	}
	if b200.Instance() != b200 {
		t.Error("a machine serving one replica is not its own instance")
	}
	again, err := node.WithTP(1)
	if err != nil || again.Name != "DGX-B200·tp1" || again.InstancesPerMachine() != 8 {
		t.Errorf("tp1 of the tp2 node: %+v, %v", again, err)
	}
	if _, err := b200.WithTP(3); err == nil {
		t.Error("tp3 of 8 GPUs: no error")
	}
}

func TestGPUMachineAndPrice(t *testing.T) {
	t.Parallel()
	c := Default()
	for in, want := range map[string]string{"h100": "DGX-H100", "H200": "DGX-H200", "DGX-B200": "DGX-B200", "h200_sxm": "DGX-H200", "a100": "DGX-A100", "mi300x": "MI300X-8"} {
		m, err := c.GPUMachine(in)
		if err != nil || m.Name != want {
			t.Errorf("GPUMachine(%q) = %s, %v; want %s", in, m.Name, err, want)
		}
	}
	if _, err := c.GPUMachine("tpu"); err == nil || !strings.Contains(err.Error(), "h200") {
		t.Errorf("unknown GPU: error %v, want it to list the known ones", err)
	}
	changed, err := c.SetGPUPrice("h100", 3)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(changed, ",") != "DGX-H100,DGX-H100cap" {
		t.Errorf("h100 price changed %v, want the H100 and the capped H100", changed)
	}
	if m, _ := c.Machine("DGX-H100"); m.CostUSDPerH != 24 {
		t.Errorf("DGX-H100 at $3 per GPU-hour: $%v/h, want 24", m.CostUSDPerH)
	}
	if _, err := c.SetGPUPrice("h100", -1); err == nil {
		t.Error("negative price: no error")
	}
}

func TestAddGPUDesigns(t *testing.T) {
	t.Parallel()
	c := Default()
	model, _ := c.Model("llama3.1-70b")
	gen, skipped, err := c.AddGPUDesigns([]string{"h100", "b200"}, model, MinKVTokens)
	if err != nil {
		t.Fatal(err)
	}
	n := len(TPChoices(mustGPU(t, c, "h100"), model, MinKVTokens)) + len(TPChoices(mustGPU(t, c, "b200"), model, MinKVTokens))
	// H100·tp1 cannot hold the 70B model's 131 GiB of weights: left out
	// with the sizes.
	if len(gen) != n+n*n || len(skipped) != 1 || !strings.HasPrefix(skipped[0], "H100·tp1: ") || !strings.Contains(skipped[0], "GiB per GPU") {
		t.Fatalf("%d designs, skipped %q; want %d baselines and %d pairs, H100·tp1 left out", len(gen), skipped, n, n*n)
	}
	for _, g := range gen {
		d, err := c.Design(g.Name)
		if err != nil {
			t.Fatalf("generated design %q not in the catalog: %v", g.Name, err)
		}
		if _, err := c.Design(d.Aliases[0]); err != nil || strings.ContainsAny(d.Aliases[0], " ·/") {
			t.Errorf("alias %q of %q: %v (want plain ASCII)", d.Aliases[0], g.Name, err)
		}
	}
	if gen[0].Name != "Baseline H100·tp2" || gen[n].Name != "Splitwise H100·tp2 / H100·tp2" {
		t.Errorf("first designs %q, %q", gen[0].Name, gen[n].Name)
	}
	if _, _, err := c.AddGPUDesigns([]string{"h100", "DGX-H100"}, model, MinKVTokens); err == nil {
		t.Error("the same GPU twice: no error")
	}
	bloom, _ := c.Model("bloom-176b")
	if _, skipped, _ := c.AddGPUDesigns([]string{"l40s"}, bloom, MinKVTokens); len(skipped) != 1 {
		t.Errorf("BLOOM-176B on 8 × L40S (384 GB): skipped %v, want it left out", skipped)
	}
}

func mustGPU(t *testing.T, c *Catalog, name string) Machine {
	t.Helper()
	m, err := c.GPUMachine(name)
	if err != nil {
		t.Fatal(err)
	}
	return m
}
