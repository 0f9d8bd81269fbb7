package evaluator

import (
	"math"
	"testing"

	"splitplan/traces"
)

// TestSteadyEnergyByHand follows the steady draw on a trace small enough
// to follow: one DGX-A100, two requests arriving at 1 s and 3 s (an
// arrival window of 2 × the one 2 s gap: 4 s), each a prompt iteration and
// a decode run. The steady energy is the idle draw over the 4 s plus each
// iteration's draw above idle × its duration, whatever the run's end.
func TestSteadyEnergyByHand(t *testing.T) {
	t.Parallel()
	cl := mustCluster(t, "Baseline-A100", 1, 0, "bloom-176b", false)
	reqs := []traces.Request{
		{ID: 0, Arrival: 1, PromptTokens: 100, OutputTokens: 3},
		{ID: 1, Arrival: 3, PromptTokens: 200, OutputTokens: 2},
	}
	res := mustEval(t, cl, reqs, Options{Energy: true})
	pw := cl.PromptType.Power
	p1, _ := cl.PromptType.Perf.PromptTime(100)
	d1, _ := cl.PromptType.Perf.DecodeTime(1, 101)
	p2, _ := cl.PromptType.Perf.PromptTime(200)
	d2, _ := cl.PromptType.Perf.DecodeTime(1, 201)
	if 1+p1+2*d1 >= 3 {
		t.Fatalf("the first request ends at %.3f s, after the second arrives: the trace no longer runs alone", 1+p1+2*d1)
	}
	near(t, "end", res.EndS, 3+p2+d2, 1e-12)
	above := func(w, s float64) float64 { return (w - pw.IdleW()) * s }
	work := above(pw.IterationW(100, 0, 0, p1), p1) + 2*above(pw.IterationW(0, 1, 101, d1), d1) +
		above(pw.IterationW(200, 0, 0, p2), p2) + above(pw.IterationW(0, 1, 201, d2), d2)
	near(t, "arrival window", res.ArrivalWindowS, 4, 1e-12)
	near(t, "idle draw", res.IdleDrawW, pw.IdleW(), 1e-9)
	near(t, "work above idle", res.WorkEnergyJ, work, 1e-9*work)
	steady := pw.IdleW()*4 + work
	near(t, "steady energy", res.SteadyJ(), steady, 1e-9*steady)
	near(t, "steady kW", res.AverageKW(), steady/4/1000, 1e-12)
	near(t, "J per output token", res.JPerOutputToken(), steady/5, 1e-9)
	near(t, "J per request", res.JPerRequest(), steady/2, 1e-9)
	// The run's own energy is the idle draw over its whole length plus
	// the same work: the steady figure replaces the 4 s of the window for
	// the run's end.
	near(t, "run energy", res.EnergyJ, pw.IdleW()*res.EndS+work, 1e-9*res.EnergyJ)
}

// TestSteadyDrawIndependentOfTraceLength: the steady draw of one cluster
// at one rate is about the same from a 120 s and a 960 s trace, where the
// run's energy over its end (the figure before it) is not: the 120 s
// run's drain, idling to about 190 s, is a larger share of it.
func TestSteadyDrawIndependentOfTraceLength(t *testing.T) {
	if testing.Short() {
		t.Skip("simulates 960 s of 70 req/s")
	}
	t.Parallel()
	cl := mustCluster(t, "Splitwise-HA", 23, 19, "bloom-176b", false)
	d, err := traces.Builtin("coding")
	if err != nil {
		t.Fatal(err)
	}
	var steady, run [2]float64
	for i, dur := range []float64{120, 960} {
		reqs, err := traces.Synthesize(d, 70, dur, 0, false)
		if err != nil {
			t.Fatal(err)
		}
		res := mustEval(t, cl, reqs, Options{Energy: true, LatenciesOnly: true})
		if !(res.ArrivalWindowS > 0) {
			t.Fatalf("%g s: no arrival window (a steady run of 70 req/s)", dur)
		}
		if w := res.ArrivalWindowS; math.Abs(w-dur) > 0.01*dur {
			t.Errorf("%g s trace: arrival window %.2f s", dur, w)
		}
		steady[i], run[i] = res.AverageKW(), res.EnergyJ/res.EndS/1000
		t.Logf("%g s: steady %.1f kW, over the run to %.1f s %.1f kW", dur, steady[i], res.EndS, run[i])
	}
	if r := steady[0] / steady[1]; math.Abs(r-1) > 0.04 {
		t.Errorf("steady draw %.1f kW from 120 s against %.1f kW from 960 s (×%.3f)", steady[0], steady[1], r)
	}
	if r := run[0] / run[1]; r > 0.9 {
		t.Errorf("the run averages (%.1f and %.1f kW) agree within 10%%: the drain this test is about is gone", run[0], run[1])
	}
}
