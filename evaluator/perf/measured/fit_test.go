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

// TestCellE2E: a request's end-to-end latency is its TTFT and then the
// rest of the benchmark's mean output length at its TPOT, and a cell's
// E2E MAPE is over those: TTFT and TPOT errors of opposite signs partly
// cancel in it, and the median over cells leaves the overall line out.
func TestCellE2E(t *testing.T) {
	r := Row{ID: "a", OutputTokens: 1001, TTFTms: 100, TPOTms: 10}
	// Outputs are uniform in [800, 1001]: a mean of 900.5 tokens.
	if got, want := E2Ems(r, 100, 10), 100+899.5*10.0; math.Abs(got-want) > 1e-9 {
		t.Fatalf("E2Ems = %v, want %v", got, want)
	}
	if got := E2Ems(Row{OutputTokens: 1}, 7, 3); got != 7 {
		t.Fatalf("one output token: E2Ems = %v, want the TTFT 7", got)
	}
	s := Row{ID: "b", OutputTokens: 1001, TTFTms: 100, TPOTms: 10, GPU: "h200_sxm"}
	preds := []RowPrediction{
		{Row: r, TTFTms: 200, TPOTms: 9},  // TTFT +100%, TPOT −10%
		{Row: s, TTFTms: 100, TPOTms: 11}, // TPOT +10%
		{Row: Row{ID: "c"}, Reason: "not predicted"},
	}
	cells := cellMAPEs(preds)
	meas := E2Ems(r, 100, 10)
	wantA := 100 * math.Abs(E2Ems(r, 200, 9)-meas) / meas
	wantB := 100 * math.Abs(E2Ems(s, 100, 11)-meas) / meas
	var all CellMAPE
	byGPU := map[string]CellMAPE{}
	for _, c := range cells {
		if c.All {
			all = c
		} else {
			byGPU[c.Cell.GPU] = c
		}
	}
	if len(byGPU) != 2 || all.Rows != 2 {
		t.Fatalf("cells %+v", cells)
	}
	if a := byGPU[r.GPU]; math.Abs(a.E2E-wantA) > 1e-9 || a.E2E >= a.TPOT {
		t.Errorf("cell with opposite errors: E2E %v%% (want %v%%, below its TPOT's %v%%)", a.E2E, wantA, a.TPOT)
	}
	if math.Abs(all.E2E-(wantA+wantB)/2) > 1e-9 {
		t.Errorf("pooled E2E %v%%, want %v%%", all.E2E, (wantA+wantB)/2)
	}
	// The median as MedianCellMAPE takes it (gonum's LinInterp: of two
	// cells, the lower).
	if got := MedianCellE2E(cells); math.Abs(got-min(wantA, wantB)) > 1e-9 {
		t.Errorf("median over two cells %v%%, want %v%%", got, min(wantA, wantB))
	}
	if !math.IsNaN(MedianCellE2E(nil)) {
		t.Error("median over no cells should be NaN")
	}
}
