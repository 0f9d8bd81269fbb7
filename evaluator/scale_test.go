package evaluator

import (
	"math"
	"reflect"
	"testing"

	"splitplan/traces"
)

// scaleWorkload is coding at rps for durS seconds.
func scaleWorkload(t *testing.T, rps, durS float64) []traces.Request {
	t.Helper()
	d, err := traces.Builtin("coding")
	if err != nil {
		t.Fatal(err)
	}
	reqs, err := traces.Synthesize(d, rps, durS, 3, false)
	if err != nil {
		t.Fatal(err)
	}
	return reqs
}

// TestScalingOneStepChangesNothing: a schedule of the cluster's own
// counts is the run without scaling, request for request, energy and all;
// every machine is powered the whole run.
func TestScalingOneStepChangesNothing(t *testing.T) {
	t.Parallel()
	reqs := scaleWorkload(t, 40, 120)
	for _, c := range []struct {
		design        string
		prompt, token int
	}{{"HH", 20, 6}, {"Baseline-H100", 30, 0}} {
		cl, err := TestCluster(c.design, c.prompt, c.token, "bloom-176b", false)
		if err != nil {
			t.Fatal(err)
		}
		plain, err := Evaluate(cl, reqs, Options{Energy: true})
		if err != nil {
			t.Fatal(err)
		}
		scaled, err := Evaluate(cl, reqs, Options{Energy: true, Scaling: &Scaling{Steps: []ScaleStep{{0, c.prompt, c.token}}, DelayS: 300}})
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(plain.Requests, scaled.Requests) || plain.EnergyJ != scaled.EnergyJ || plain.EndS != scaled.EndS {
			t.Errorf("%s: a one-step schedule changed the run (energy %v → %v)", c.design, plain.EnergyJ, scaled.EnergyJ)
		}
		for _, m := range scaled.Machines {
			if m.PoweredS != scaled.EndS {
				t.Errorf("%s: machine %d powered %v s of a %v s run", c.design, m.ID, m.PoweredS, scaled.EndS)
			}
		}
	}
}

// TestScalingSchedule: a baseline of 4 machines cut to 2 at 60 s and back
// to 4 at 120 s (delay 10 s): no request starts on a machine out of
// service, the retired machines are powered until they drained and again
// from 110 s, and every request finishes.
func TestScalingSchedule(t *testing.T) {
	t.Parallel()
	reqs := scaleWorkload(t, 6, 180)
	cl, err := TestCluster("Baseline-H100", 4, 0, "bloom-176b", false)
	if err != nil {
		t.Fatal(err)
	}
	sc := &Scaling{Steps: []ScaleStep{{0, 4, 0}, {60, 2, 0}, {120, 4, 0}}, DelayS: 10}
	res, err := Evaluate(cl, reqs, Options{Energy: true, Scaling: sc})
	if err != nil {
		t.Fatal(err)
	}
	if res.Completed != len(reqs) {
		t.Fatalf("%d of %d requests finished", res.Completed, len(reqs))
	}
	serving := map[int]bool{} // the machines arrivals between 60 and 120 s went to
	lastEnd := map[int]float64{}
	for _, r := range res.Requests {
		if r.ArrivalS >= 60 && r.ArrivalS < 120 {
			serving[r.PromptMachine] = true
		}
		if r.ArrivalS < 60 {
			lastEnd[r.PromptMachine] = math.Max(lastEnd[r.PromptMachine], r.ArrivalS+r.E2ES)
		}
	}
	if len(serving) != 2 {
		t.Errorf("between 60 s and 120 s, arrivals went to %d machines, want 2", len(serving))
	}
	idleW := 0.0
	for _, m := range res.Machines {
		if !serving[m.ID] {
			continue
		}
		if m.PoweredS != res.EndS {
			t.Errorf("machine %d served throughout but was powered %v of %v s", m.ID, m.PoweredS, res.EndS)
		}
		idleW = m.IdleEnergyJ / (m.PoweredS - m.BusyS)
	}
	for _, m := range res.Machines {
		if serving[m.ID] {
			continue
		}
		// Off from when it drained (at 60 s or its last request's end)
		// to 110 s, when it starts for the step at 120 s.
		drained := math.Max(60, lastEnd[m.ID])
		want := drained + (res.EndS - 110)
		if drained > 110 {
			want = res.EndS
		}
		if math.Abs(m.PoweredS-want) > 1e-6 {
			t.Errorf("retired machine %d powered %v s, want %v (drained at %v)", m.ID, m.PoweredS, want, drained)
		}
		// Started 10 s before its step: that time is its starting time.
		if want := 10.0; drained < 110 && m.StartingS != want || drained >= 110 && m.StartingS != 0 {
			t.Errorf("retired machine %d: starting time %v s (drained at %v)", m.ID, m.StartingS, drained)
		}
		// Idle power is drawn only while powered.
		if w := m.IdleEnergyJ / (m.PoweredS - m.BusyS); math.Abs(w-idleW) > 1e-9*idleW {
			t.Errorf("machine %d: idle draw %v W over its powered idle time, the others' %v W", m.ID, w, idleW)
		}
	}
}

// TestAutoscalerFollowsLoad: under a rate that triples halfway, the
// autoscaler serves with few machines first and more later, every request
// finishes, and the run is deterministic.
func TestAutoscalerFollowsLoad(t *testing.T) {
	t.Parallel()
	d, err := traces.Builtin("coding")
	if err != nil {
		t.Fatal(err)
	}
	prof, err := traces.ParseDiurnal("diurnal:peak=40,trough=4,period=1200s,phase=600s")
	if err != nil {
		t.Fatal(err)
	}
	reqs, _, err := traces.SynthesizeArrivals(t.Context(), d, prof.Mean(), 1200, 2, false, false, traces.Arrivals{Profile: prof}, nil)
	if err != nil {
		t.Fatal(err)
	}
	cl, err := TestCluster("HH", 24, 8, "bloom-176b", false)
	if err != nil {
		t.Fatal(err)
	}
	sc := &Scaling{Steps: []ScaleStep{{0, 2, 1}}, DelayS: 30, Auto: &AutoScale{PeriodS: 30, CooldownS: 120, TargetUtil: 0.6, MinPrompt: 2, MinToken: 1}}
	run := func() *Result {
		res, err := Evaluate(cl, reqs, Options{Energy: true, Scaling: sc})
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	res := run()
	if res.Completed != len(reqs) {
		t.Fatalf("%d of %d requests finished", res.Completed, len(reqs))
	}
	used := map[int]bool{}
	early := map[int]bool{}
	for _, r := range res.Requests {
		used[r.PromptMachine] = true
		if r.ArrivalS < 60 {
			early[r.PromptMachine] = true
		}
	}
	if len(early) > 3 || len(used) < 6 {
		t.Errorf("prompt machines used: %d in the first minute, %d in all", len(early), len(used))
	}
	powered := 0.0
	for _, m := range res.Machines {
		powered += m.PoweredS
	}
	if all := float64(len(res.Machines)) * res.EndS; !(powered < 0.8*all) {
		t.Errorf("machines powered %v of %v machine-seconds: the autoscaler saved nothing", powered, all)
	}
	again := run()
	if !reflect.DeepEqual(res.Requests, again.Requests) || !reflect.DeepEqual(res.Machines, again.Machines) {
		t.Error("two autoscaled runs differ")
	}
}

// TestScalingErrors: bad schedules are refused.
func TestScalingErrors(t *testing.T) {
	t.Parallel()
	reqs := scaleWorkload(t, 2, 20)
	cl, err := TestCluster("HH", 4, 2, "bloom-176b", false)
	if err != nil {
		t.Fatal(err)
	}
	for _, sc := range []*Scaling{
		{Steps: []ScaleStep{{5, 1, 1}}},
		{Steps: []ScaleStep{{0, 5, 1}}},
		{Steps: []ScaleStep{{0, 1, 0}}},
		{Steps: []ScaleStep{{0, 1, 1}, {0, 2, 2}}},
		{Steps: []ScaleStep{{0, 1, 1}}, DelayS: -1},
		{Steps: []ScaleStep{{0, 1, 1}}, Auto: &AutoScale{PeriodS: 0, TargetUtil: 0.5, MinPrompt: 1, MinToken: 1}},
		{Steps: []ScaleStep{{0, 1, 1}, {10, 2, 2}}, Auto: &AutoScale{PeriodS: 10, TargetUtil: 0.5, MinPrompt: 1, MinToken: 1}},
	} {
		if _, err := Evaluate(cl, reqs, Options{Scaling: sc}); err == nil {
			t.Errorf("%+v accepted", sc)
		}
	}
	if _, err := Evaluate(cl, reqs, Options{Compat: true, Scaling: &Scaling{Steps: []ScaleStep{{0, 4, 2}}}}); err == nil {
		t.Error("scaling accepted in compat mode")
	}
}

// TestScalingCarriesQueues: by hand, one machine takes a burst of 250
// prompts in the first 10 s, and two more start serving at 30 s. The
// burst stays on the machine it was routed to and runs past 30 s (its
// queue carries over the step and past 40 s, nothing lost); the requests arriving at
// 40 s go to the new, idle machines and start at once, as fast as a
// request alone on an idle cluster.
func TestScalingCarriesQueues(t *testing.T) {
	t.Parallel()
	var reqs []traces.Request
	const burst = 250
	for i := range burst {
		reqs = append(reqs, traces.Request{ID: i, Arrival: float64(i) / 25, PromptTokens: 1500, OutputTokens: 50})
	}
	for i := range 2 {
		reqs = append(reqs, traces.Request{ID: burst + i, Arrival: 40, PromptTokens: 1500, OutputTokens: 50})
	}
	cl, err := TestCluster("Baseline-H100", 3, 0, "bloom-176b", false)
	if err != nil {
		t.Fatal(err)
	}
	res, err := Evaluate(cl, reqs, Options{Scaling: &Scaling{Steps: []ScaleStep{{0, 1, 0}, {30, 3, 0}}}})
	if err != nil {
		t.Fatal(err)
	}
	alone, err := Evaluate(cl, reqs[burst:burst+1], Options{})
	if err != nil {
		t.Fatal(err)
	}
	if res.Completed != len(reqs) {
		t.Fatalf("%d of %d requests finished", res.Completed, len(reqs))
	}
	lastBurst := 0.0
	for _, r := range res.Requests[:burst] {
		if r.PromptMachine != res.Requests[0].PromptMachine {
			t.Errorf("burst request %d on machine %d, not on the one serving", r.ID, r.PromptMachine)
		}
		lastBurst = max(lastBurst, r.ArrivalS+r.E2ES)
	}
	if !(lastBurst > 40) {
		t.Fatalf("the burst ended at %.1f s, before the step: the test carries nothing over", lastBurst)
	}
	for _, r := range res.Requests[burst:] {
		if r.PromptMachine == res.Requests[0].PromptMachine {
			t.Errorf("request %d at 40 s joined the backlog on machine %d", r.ID, r.PromptMachine)
		}
		if math.Abs(r.TTFTS-alone.Requests[0].TTFTS) > 1e-9 {
			t.Errorf("request %d at 40 s: TTFT %.4f s, %.4f s alone", r.ID, r.TTFTS, alone.Requests[0].TTFTS)
		}
	}
}
