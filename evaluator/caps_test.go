package evaluator_test

import (
	"math/rand/v2"
	"reflect"
	"testing"

	"splitplan/costpower"
	"splitplan/evaluator"
	"splitplan/evaluator/perf/power"
	"splitplan/resolve"
	"splitplan/traces"
)

// capCatalog is the default catalog with DGX-H100 and DGX-A100 variants
// at each cap, and baselines of them.
func capCatalog(t *testing.T, caps []float64) *costpower.Catalog {
	t.Helper()
	cat := costpower.Default()
	if _, err := cat.AddCappedDesigns([]string{"Baseline-H100", "Baseline-A100", "Splitwise-HA"}, caps); err != nil {
		t.Fatal(err)
	}
	return cat
}

func randomTrace(rng *rand.Rand, n int, rps float64) []traces.Request {
	var reqs []traces.Request
	at := 0.0
	for j := 0; j < n; j++ {
		at += rng.ExpFloat64() / rps
		reqs = append(reqs, traces.Request{ID: j, Arrival: at, PromptTokens: 1 + rng.IntN(3000), OutputTokens: 1 + rng.IntN(300)})
	}
	return reqs
}

// TestCapOneIsIdentical: a machine type "capped" at its profile's own cap
// (1 for DGX-H100, 0.5 for DGX-H100cap's profile) resolves to the very
// same iteration model, and simulates byte for byte as the uncapped type.
func TestCapOneIsIdentical(t *testing.T) {
	t.Parallel()
	cat := costpower.Default()
	model, _ := cat.Model("bloom-176b")
	rng := rand.New(rand.NewPCG(15, 2))
	reqs := randomTrace(rng, 150, 4)
	for _, name := range []string{"DGX-H100", "DGX-A100", "DGX-H100cap"} {
		mc, err := cat.Machine(name)
		if err != nil {
			t.Fatal(err)
		}
		v := mc
		v.PerfPowerCap = v.GPUPowerCap // as WithCap sets it, at the same cap
		base, _, err := builtin(false).Resolve(model, mc)
		if err != nil {
			t.Fatal(err)
		}
		same, _, err := builtin(false).Resolve(model, v)
		if err != nil {
			t.Fatal(err)
		}
		if _, capped := same.(power.Capped); capped || !reflect.DeepEqual(base, same) {
			t.Errorf("%s at its own cap resolves to %T, not the uncapped model", name, same)
		}
		cl := resolved(t, cat, "Baseline-H100", 2, 0, "bloom-176b", false)
		cl.PromptType, cl.TokenType = mc, mc
		cl.PromptPerf, cl.TokenPerf = base, base
		a := evaluate(t, cl, reqs, evaluator.Options{})
		cl.PromptPerf, cl.TokenPerf = same, same
		b := evaluate(t, cl, reqs, evaluator.Options{})
		if !reflect.DeepEqual(a, b) {
			t.Errorf("%s: the simulation at its own cap differs", name)
		}
	}
	// WithCap at the machine's own cap is the machine itself.
	h, _ := cat.Machine("DGX-H100")
	if v, err := h.WithCap(1); err != nil || !reflect.DeepEqual(v, h) {
		t.Errorf("WithCap(1) = %+v, %v; want DGX-H100 itself", v, err)
	}
}

// TestCappedNeverFaster: under any cap below the profile's, no iteration
// is faster than uncapped, and a lower cap is never faster than a higher
// one; each request alone on a machine takes no less time end to end.
func TestCappedNeverFaster(t *testing.T) {
	t.Parallel()
	caps := []float64{0.35, 0.5, 0.6, 0.7, 0.8, 0.9, 1}
	cat := capCatalog(t, caps)
	model, _ := cat.Model("bloom-176b")
	rng := rand.New(rand.NewPCG(15, 3))
	for _, base := range []string{"DGX-H100", "DGX-A100"} {
		mc, _ := cat.Machine(base)
		var prev []float64 // times at the previous (higher) cap
		batches := make([][3]int, 200)
		for i := range batches {
			batches[i] = [3]int{rng.IntN(4000), rng.IntN(200), rng.IntN(400000)}
		}
		for i := len(caps) - 1; i >= 0; i-- {
			v, err := mc.WithCap(caps[i])
			if err != nil {
				t.Fatal(err)
			}
			pm, _, err := builtin(false).Resolve(model, v)
			if err != nil {
				t.Fatal(err)
			}
			times := make([]float64, len(batches))
			for k, b := range batches {
				p, d, ctx := b[0], b[1], int64(b[2])
				if p == 0 && d == 0 {
					d = 1
				}
				times[k], _ = evaluator.IterTime(pm, p, d, ctx)
				if prev != nil && times[k] < prev[k]*(1-1e-12) {
					t.Fatalf("%s at cap %v: batch %v takes %v s, less than %v s at cap %v", base, caps[i], b, times[k], prev[k], caps[i+1])
				}
			}
			prev = times
		}
	}
	// Whole requests, one at a time: E2E never shorter under a cap.
	reqs := []traces.Request{{ID: 0, Arrival: 0, PromptTokens: 1500, OutputTokens: 80}, {ID: 1, Arrival: 100, PromptTokens: 200, OutputTokens: 300}}
	var prevE2E []float64
	for i := len(caps) - 1; i >= 0; i-- {
		name := "Baseline-H100"
		if caps[i] != 1 {
			name = costpower.CappedDesignName(costpower.Design{Name: "Baseline-H100", Kind: costpower.KindBaseline}, caps[i], 0)
		}
		cl, err := resolve.NamedCluster(cat, builtin(false), name, 1, 0, "bloom-176b")
		if err != nil {
			t.Fatal(err)
		}
		res := evaluate(t, cl, reqs, evaluator.Options{})
		for k, r := range res.Requests {
			if prevE2E != nil && r.E2ES < prevE2E[k]*(1-1e-12) {
				t.Errorf("%s: request %d E2E %v s, less than %v s at the next higher cap", name, k, r.E2ES, prevE2E[k])
			}
		}
		prevE2E = []float64{res.Requests[0].E2ES, res.Requests[1].E2ES}
	}
}

// TestWithCapProvision: a capped variant's provisioned power is the power
// package's ProvisionedKW, and NodeGPUShare is the same constant.
func TestWithCapProvision(t *testing.T) {
	t.Parallel()
	if costpower.NodeGPUShare != power.NodeGPUShare {
		t.Fatalf("NodeGPUShare %v in costpower, %v in power", costpower.NodeGPUShare, power.NodeGPUShare)
	}
	cat := costpower.Default()
	for _, name := range []string{"DGX-H100", "DGX-A100", "DGX-H100cap", "DGX-B200"} {
		mc, _ := cat.Machine(name)
		for _, c := range []float64{0.4, 0.55, 0.7, 1} {
			v, err := mc.WithCap(c)
			if err != nil {
				t.Fatal(err)
			}
			want, err := power.ProvisionedKW(mc.PowerKW, mc.GPUPowerCap, c)
			if err != nil {
				t.Fatal(err)
			}
			if d := v.PowerKW - want; d > 1e-9 || d < -1e-9 {
				t.Errorf("%s at %v: %v kW, ProvisionedKW %v", name, c, v.PowerKW, want)
			}
		}
	}
}
