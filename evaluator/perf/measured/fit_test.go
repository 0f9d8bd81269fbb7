package measured

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"
)

// TestPredictTermsMatchesPredict: the fit's fast path (the physics at
// Physics precomputed, the engine terms linear) gives the TTFT and TPOT
// that the full iteration model gives with the same efficiencies, for agg
// and disaggregated rows, at any host factor.
func TestPredictTermsMatchesPredict(t *testing.T) {
	t.Parallel()
	rows := sharedRows(t)
	var sub []Row
	for i, r := range rows {
		if i%23 == 0 || (r.Mode == Disagg && i%5 == 0) {
			sub = append(sub, r)
		}
	}
	preds, _, err := prepare(context.Background(), sub, Options{})
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(3, 4))
	modes := map[Mode]int{}
	for _, p := range preds {
		th := EngineTerms{1e-4 + 3e-3*rng.Float64(), 1e-6 + 5e-5*rng.Float64(), 5e-3 * rng.Float64(), 5e-5 * rng.Float64()}
		sv := Serving{RequestOverheadS: 0.1 * rng.Float64(), WaitIterations: 10 * rng.Float64(), ClientOverheadS: 1e-3 * rng.Float64(), PromptTokenS: 1e-5 * rng.Float64()}
		h := 0.5 + rng.Float64()
		ft, fo := p.predictTerms(th, sv, h)
		eff, hsv := hostScaled(withEngineTerms(Physics, th), sv, h)
		gt, gO := p.predict(eff, hsv)
		if math.Abs(ft-gt) > 1e-9*gt || math.Abs(fo-gO) > 1e-9*gO || !(gt > 0) {
			t.Errorf("%s (%s): fast path %g s / %g s, full model %g s / %g s", p.row.ID, p.row.Mode, ft, fo, gt, gO)
		}
		modes[p.row.Mode]++
	}
	if modes[Agg] < 20 || modes[Disagg] < 5 {
		t.Errorf("rows checked per mode: %v", modes)
	}
}

// TestCalibrateFreezesPhysics: a calibration fitted on a subset holds
// every physical field at Physics and fits the engine terms, one entry
// per engine shared by its GPUs, and a host factor per generation with
// hopper's 1; cancelling the context stops it with the context's error.
func TestCalibrateFreezesPhysics(t *testing.T) {
	t.Parallel()
	rows := sharedRows(t)
	var sub []Row
	for i, r := range rows {
		if i%12 == 0 && r.Engine != SGLang {
			sub = append(sub, r)
		}
	}
	cal, rep, err := Calibrate(context.Background(), sub, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(cal.Entries) != 2 || len(rep.Entries) != 2 {
		t.Fatalf("entries %+v, want one shared entry for vllm and one for trtllm", cal.Entries)
	}
	for _, e := range cal.Entries {
		phys := e.Efficiency
		phys.OverheadS, phys.LayerOverheadS, phys.PromptOverheadS, phys.SequenceOverheadS = 0, 0, 0, 0
		if e.GPU != SharedGPU || phys != Physics || len(e.GPUs) < 2 {
			t.Errorf("%s/%s: physics %+v (want %+v), fitted on %v", e.GPU, e.Engine, phys, Physics, e.GPUs)
		}
		if engineTermsOf(e.Efficiency) == fitStart && e.Serving == DefaultServing {
			t.Errorf("%s: the engine terms stayed at the start", e.Engine)
		}
	}
	gens := map[string]float64{}
	for _, h := range cal.Hosts {
		gens[h.Generation] = h.Factor
	}
	if gens["hopper"] != 1 || gens["blackwell"] == 0 {
		t.Errorf("host factors %+v, want hopper 1 and a blackwell factor", cal.Hosts)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, _, err := Calibrate(ctx, sub, Options{}); err != context.Canceled {
		t.Errorf("cancelled Calibrate: error %v, want context.Canceled", err)
	}
}
