package evaluator

import (
	"math"
	"math/rand/v2"
	"reflect"
	"testing"

	"splitplan/traces"
)

// TestEnergyByHand checks energy conservation on a trace small enough to
// follow: one DGX-A100 serving one request of a 100-token prompt and 3
// output tokens arriving at 2 s runs one prompt iteration (its first
// token), then a decode run of 2 iterations at a context of 101 tokens.
// Its energy is the two runs' power × duration plus idle power × the rest
// of [0, end].
func TestEnergyByHand(t *testing.T) {
	t.Parallel()
	cl := mustCluster(t, "Baseline-A100", 1, 0, "bloom-176b", false)
	if cl.PromptType.Power == nil {
		t.Fatal("no power model for the DGX-A100")
	}
	res := mustEval(t, cl, []traces.Request{{ID: 0, Arrival: 2, PromptTokens: 100, OutputTokens: 3}}, Options{Energy: true})
	pw := cl.PromptType.Power
	d1, _ := cl.PromptType.Perf.PromptTime(100)
	d2, _ := cl.PromptType.Perf.DecodeTime(1, 101)
	end := 2 + d1 + 2*d2
	near(t, "end", res.EndS, end, 1e-12)
	busy := pw.IterationW(100, 0, 0, d1)*d1 + 2*pw.IterationW(0, 1, 101, d2)*d2
	idle := pw.IdleW() * (end - d1 - 2*d2)
	if !res.EnergyKnown {
		t.Fatal("energy unknown")
	}
	m := res.Machines[0]
	near(t, "idle energy", m.IdleEnergyJ, idle, 1e-9*idle)
	near(t, "machine energy", m.EnergyJ, busy+idle, 1e-9*(busy+idle))
	near(t, "total energy", res.EnergyJ, busy+idle, 1e-9*(busy+idle))
	near(t, "average kW", res.AverageKW(), (busy+idle)/end/1000, 1e-12)
	near(t, "J per output token", res.JPerOutputToken(), (busy+idle)/3, 1e-9)
	// The prompt draws more than idle; idle is 8 GPUs × the idle fraction
	// of 400 W.
	if !(pw.IterationW(100, 0, 0, d1) > pw.IdleW()) {
		t.Errorf("a prompt draws %v W, no more than idle %v W", pw.IterationW(100, 0, 0, d1), pw.IdleW())
	}
}

// TestEnergyBounds checks, over random workloads, designs and policies,
// that each machine's energy lies between its idle power and its maximum
// power over the run, that the total is the machines' sum, and that the
// idle part is idle power × (end − busy time).
func TestEnergyBounds(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(15, 1))
	designs := []struct {
		name          string
		prompt, token int
	}{{"Splitwise-HA", 2, 1}, {"Splitwise-AA", 1, 2}, {"Baseline-H100", 2, 0}, {"Splitwise-HH", 1, 1}}
	steadyRuns := 0
	for i := 0; i < 12; i++ {
		d := designs[i%len(designs)]
		cl, err := TestCluster(d.name, d.prompt, d.token, "llama2-70b", i%5 == 4)
		if err != nil {
			t.Fatal(err)
		}
		if i%3 == 1 {
			cl.Policy = Policy{Kind: PolicySarathi}
		}
		var reqs []traces.Request
		at := 0.0
		for j := 0; j < 60; j++ {
			at += rng.ExpFloat64() / (2 + 6*rng.Float64())
			reqs = append(reqs, traces.Request{ID: j, Arrival: at, PromptTokens: 1 + rng.IntN(3000), OutputTokens: 1 + rng.IntN(300)})
		}
		res := mustEval(t, cl, reqs, Options{Compat: i%5 == 4, Energy: true})
		if !res.EnergyKnown {
			t.Fatalf("%s: energy unknown", cl)
		}
		var sum, idleW, maxW float64
		for k, m := range res.Machines {
			pw := cl.TokenType.Power
			if k < cl.Prompt {
				pw = cl.PromptType.Power
			}
			idleW += pw.IdleW()
			maxW += pw.MaxW()
			lo, hi := pw.IdleW()*res.EndS, pw.MaxW()*res.EndS
			if m.EnergyJ < lo*(1-1e-9) || m.EnergyJ > hi*(1+1e-9) {
				t.Errorf("%s machine %d: %.1f J outside [idle, max] × %.3f s = [%.1f, %.1f]", cl, k, m.EnergyJ, res.EndS, lo, hi)
			}
			if want := pw.IdleW() * math.Max(0, res.EndS-m.BusyS); math.Abs(m.IdleEnergyJ-want) > 1e-9*want+1e-9 {
				t.Errorf("%s machine %d: idle energy %v, want %v", cl, k, m.IdleEnergyJ, want)
			}
			sum += m.EnergyJ
		}
		if math.Abs(sum-res.EnergyJ) > 1e-9*sum {
			t.Errorf("%s: total %v J, machines add up to %v", cl, res.EnergyJ, sum)
		}
		// The steady draw (or the run's, without a window) lies between
		// the machines' idle and most draw.
		if kw := res.AverageKW() * 1000; kw < idleW*(1-1e-9) || kw > maxW*(1+1e-9) {
			t.Errorf("%s: steady draw %.1f W outside [idle, max] = [%.1f, %.1f] (window %.3f s)", cl, kw, idleW, maxW, res.ArrivalWindowS)
		}
		if res.ArrivalWindowS > 0 {
			steadyRuns++
		}
	}
	if steadyRuns == 0 {
		t.Error("no run had a steady state")
	}
}

// TestEnergyPerTokenLatenciesOnly: J per output token is the same whether
// the simulation keeps full results or only the latencies (as searches do).
func TestEnergyPerTokenLatenciesOnly(t *testing.T) {
	t.Parallel()
	cl := mustCluster(t, "Splitwise-HH", 3, 2, "bloom-176b", false)
	reqs := randomRequests(300, 20, 2000, 200, 11)
	full := mustEval(t, cl, reqs, Options{Energy: true})
	lean := mustEval(t, cl, reqs, Options{LatenciesOnly: true, Energy: true})
	if full.JPerOutputToken() == 0 || full.JPerOutputToken() != lean.JPerOutputToken() || full.OutputTokens() != lean.OutputTokens() {
		t.Errorf("J per output token %v with full results, %v with latencies only (%d and %d tokens)",
			full.JPerOutputToken(), lean.JPerOutputToken(), full.OutputTokens(), lean.OutputTokens())
	}
}

// TestEnergyOffLeavesTheRest: without Options.Energy a simulation reports
// no energy, and everything else it reports is what it reports with it,
// over random workloads, designs, policies and the compat scheduler.
func TestEnergyOffLeavesTheRest(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(16, 1))
	designs := []struct {
		name          string
		prompt, token int
	}{{"Splitwise-HA", 2, 1}, {"Baseline-H100", 2, 0}, {"Splitwise-HH", 1, 2}, {"Splitwise-HHcap", 2, 1}}
	for i := 0; i < 10; i++ {
		d := designs[i%len(designs)]
		compat := i%5 == 4
		cl, err := TestCluster(d.name, d.prompt, d.token, "bloom-176b", compat)
		if err != nil {
			t.Fatal(err)
		}
		if i%3 == 1 {
			cl.Policy = Policy{Kind: PolicySarathi}
		}
		reqs := randomRequests(80, 3+6*rng.Float64(), 3000, 300, uint64(i))
		on := mustEval(t, cl, reqs, Options{Compat: compat, Energy: true})
		off := mustEval(t, cl, reqs, Options{Compat: compat})
		if !on.EnergyKnown || off.EnergyKnown || off.EnergyJ != 0 {
			t.Fatalf("%s: energy known %v with Options.Energy, %v (%v J) without", cl, on.EnergyKnown, off.EnergyKnown, off.EnergyJ)
		}
		for k := range on.Machines {
			if off.Machines[k].EnergyJ != 0 || off.Machines[k].IdleEnergyJ != 0 {
				t.Errorf("%s machine %d: energy %v J without Options.Energy", cl, k, off.Machines[k].EnergyJ)
			}
			on.Machines[k].EnergyJ, on.Machines[k].IdleEnergyJ = 0, 0
		}
		on.EnergyKnown, on.EnergyJ, on.IdleDrawW, on.WorkEnergyJ, on.ArrivalWindowS = false, 0, 0, 0, 0
		if !reflect.DeepEqual(on, off) {
			t.Errorf("%s: the results differ beyond the energy with and without Options.Energy", cl)
		}
	}
}
