package evaluator_test

import (
	"math"
	"math/rand/v2"
	"testing"

	"splitplan/costpower"
	"splitplan/evaluator"
	"splitplan/hw"
	"splitplan/resolve"
	"splitplan/traces"
)

// boardW is one GPU's board power of machine type mc, as the power model
// reads it: GPUPowerW, else its spec's TDP.
func boardW(t *testing.T, mc costpower.Machine) float64 {
	t.Helper()
	if mc.GPUPowerW > 0 {
		return mc.GPUPowerW
	}
	g, err := hw.Lookup(mc.GPUSpecName())
	if err != nil {
		t.Fatal(err)
	}
	return g.TDPW
}

// TestEnergyPerReplicaProperty draws random GPU designs (a baseline or a
// Splitwise pair over the catalog's GPUs at every tensor parallelism that
// fits, capped or not), node counts and loads, and checks that the energy
// is physical whatever the replicas per node (issue 29.1): a replica's
// idle draw is its own GPUs' (TP/GPUs of its node's, the same per GPU at
// every TP), the node's replicas together draw no more than its GPUs at
// their cap, and the simulated energy lies between the nodes' idle draw
// and both the GPUs' most and the provisioned power over the run.
func TestEnergyPerReplicaProperty(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(29, 1))
	models := []string{"llama3.1-8b", "qwen3-8b", "llama3.1-70b"}
	gpus := []string{"h100", "h200", "a100", "b200", "gb200", "l40s", "mi300x"}
	perGPUIdle := map[string]float64{} // GPU spec and cap → idle W per GPU
	n := 24
	if testing.Short() {
		n = 10
	}
	tested := map[int]int{} // replicas per node → cases
	for i := 0; i < n; i++ {
		model := models[rng.IntN(len(models))]
		cat := costpower.Default()
		pick := []string{gpus[rng.IntN(len(gpus))]}
		if g := gpus[rng.IntN(len(gpus))]; g != pick[0] {
			pick = append(pick, g)
		}
		var caps []float64
		if rng.IntN(3) == 0 {
			caps = []float64{0.6, 1}
		}
		m, err := cat.Model(model)
		if err != nil {
			t.Fatal(err)
		}
		designs, _, err := cat.AddCappedGPUDesigns(pick, caps, m, costpower.MinKVTokens)
		if err != nil {
			t.Fatal(err)
		}
		if len(designs) == 0 {
			i--
			continue
		}
		d := designs[rng.IntN(len(designs))]
		prompt, token := 1+rng.IntN(2), 1+rng.IntN(2)
		if d.Prompt.Name == d.Token.Name && d.Name[:8] == "Baseline" {
			token = 0
		}
		cl, err := resolve.NamedCluster(cat, builtin(false), d.Name, prompt, token, model)
		if err != nil {
			t.Fatalf("%s ×%d/%d %s: %v", d.Name, prompt, token, model, err)
		}
		if cl.PromptPower == nil || cl.TokenPower == nil {
			t.Fatalf("%s: no power model: %s", d.Name, cl.PowerNote)
		}
		// A replica's draw is its own GPUs': idle TP × the per-GPU idle
		// draw, the same per GPU at every TP of the same GPU and cap; its
		// most TP × cap × board power.
		for _, side := range []struct {
			mc costpower.Machine
			pw interface {
				IdleW() float64
				MaxW() float64
				CapFraction() float64
			}
		}{{cl.PromptType, cl.PromptPower}, {cl.TokenType, cl.TokenPower}} {
			tp := side.mc.TensorParallel
			w := boardW(t, side.mc)
			if hi := float64(tp) * side.pw.CapFraction() * w; math.Abs(side.pw.MaxW()-hi) > 1e-9*hi {
				t.Errorf("%s: a replica of %d GPUs draws at most %.1f W, want its own GPUs' %.1f W", side.mc.Name, tp, side.pw.MaxW(), hi)
			}
			key := side.mc.GPUFamily() + costpower.CapSuffix(side.pw.CapFraction())
			per := side.pw.IdleW() / float64(tp)
			if prev, ok := perGPUIdle[key]; ok && math.Abs(prev-per) > 1e-9*per {
				t.Errorf("%s: idle %.2f W per GPU at tp %d, %.2f W at another tp: a replica bills more GPUs than its own", side.mc.Name, per, tp, prev)
			}
			perGPUIdle[key] = per
			if !(per > 0 && per < w) {
				t.Errorf("%s: idle %.2f W per GPU, outside (0, %.0f W board power)", side.mc.Name, per, w)
			}
			tested[side.mc.InstancesPerMachine()]++
		}
		// A random load, light or heavy.
		var reqs []traces.Request
		at, rate := 0.0, 0.5+20*rng.Float64()
		for j := 0; j < 40+rng.IntN(60); j++ {
			at += rng.ExpFloat64() / rate
			reqs = append(reqs, traces.Request{ID: j, Arrival: at, PromptTokens: 1 + rng.IntN(4000), OutputTokens: 1 + rng.IntN(400)})
		}
		res := evaluate(t, cl, reqs, evaluator.Options{Energy: true})
		if !res.EnergyKnown || !(res.EndS > 0) {
			t.Fatalf("%s: energy unknown", cl)
		}
		// The nodes' GPUs: idle ≤ drawn ≤ their most ≤ provisioned.
		kp, kt := cl.PromptType.InstancesPerMachine(), cl.TokenType.InstancesPerMachine()
		idleW := float64(cl.Prompt*kp)*cl.PromptPower.IdleW() + float64(cl.Token*kt)*cl.TokenPower.IdleW()
		gpuMaxW := float64(cl.Prompt*cl.PromptType.GPUs)*cl.PromptPower.CapFraction()*boardW(t, cl.PromptType) +
			float64(cl.Token*cl.TokenType.GPUs)*cl.TokenPower.CapFraction()*boardW(t, cl.TokenType)
		provW := cl.PowerKW() * 1000
		e, end := res.EnergyJ, res.EndS
		if e < idleW*end*(1-1e-9) {
			t.Errorf("%s: %.4g J below the nodes' idle draw %.1f W × %.3f s", cl, e, idleW, end)
		}
		if e > gpuMaxW*end*(1+1e-9) {
			t.Errorf("%s: %.4g J above the nodes' GPUs at their cap, %.1f W × %.3f s", cl, e, gpuMaxW, end)
		}
		if e > provW*end*(1+1e-9) {
			t.Errorf("%s: %.4g J above the provisioned %.1f kW × %.3f s", cl, e, provW/1000, end)
		}
		if kwh := res.KWhPerDay(); kwh > gpuMaxW*24/1000*(1+1e-9) {
			t.Errorf("%s: %.1f kWh/day, more than its GPUs can draw in a day (%.1f)", cl, kwh, gpuMaxW*24/1000)
		}
	}
	if tested[1] == 0 || tested[2]+tested[4]+tested[8] == 0 {
		t.Errorf("replicas per node tested %v: want whole-node replicas and several per node", tested)
	}
	t.Logf("replicas per node → pools tested: %v", tested)
}
