package measured

import (
	"bytes"
	"context"
	"errors"
	"math"
	"reflect"
	"strings"
	"testing"

	"splitplan/evaluator/perf/analytic"
)

func TestCalibrationTOMLRoundTrip(t *testing.T) {
	t.Parallel()
	in := Calibration{Entries: []Entry{
		{GPU: "h200_sxm", Engine: TRTLLM, Efficiency: analytic.Efficiency{Compute: 0.4, Memory: 0.8, Comm: 0.5, FlatLatency: 0.7, OverheadS: 0.003, SequenceOverheadS: 1e-5},
			Serving: Serving{RequestOverheadS: 0.05, WaitIterations: 7.5, ClientOverheadS: 2e-4, PromptTokenS: 4.5e-6}, Rows: 7, MAPETTFT: 12.5, MAPETPOT: 4.25},
		{GPU: "b200_sxm", Engine: VLLM, Efficiency: analytic.Efficiency{Compute: 0.3, Memory: 0.9, Comm: 0.6, OverheadS: 0.006, SequenceOverheadS: 1e-5}, Rows: 3},
		{GPU: SharedGPU, Engine: VLLM, Efficiency: analytic.Efficiency{Compute: 0.5, ExpertCompute: 0.1, Memory: 0.8, Comm: 0.6, OverheadS: 0.002, LayerOverheadS: 3e-5, SequenceOverheadS: 1e-5},
			GPUs: []string{"b200_sxm", "h100_sxm"}, Rows: 10},
	}, Hosts: []HostSpeed{{Generation: "hopper", Factor: 1, Rows: 4}, {Generation: "blackwell", Factor: 0.75, Rows: 6}}}
	var buf bytes.Buffer
	if err := in.WriteTOML(&buf); err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{"[[calibration]]", `engine = "trtllm"`, "sequence_overhead_s", "wait_iterations = 7.5", "client_overhead_s", "flat_latency = 0.7",
		"expert_compute = 0.1", "layer_overhead_s", "prompt_token_s = 4.5e-06", `gpus = ["b200_sxm", "h100_sxm"]`, `gpu = "*"`, "[[host_speed]]", `generation = "blackwell"`, "factor = 0.75"} {
		if !strings.Contains(buf.String(), key) {
			t.Errorf("TOML lacks %q:\n%s", key, buf.String())
		}
	}
	out, err := ReadTOML(&buf, "x.toml")
	if err != nil {
		t.Fatal(err)
	}
	want := []Entry{in.Entries[2], in.Entries[1], in.Entries[0]} // sorted by GPU, "*" first
	if !reflect.DeepEqual(out.Entries, want) {
		t.Errorf("round trip: got %+v, want %+v", out.Entries, want)
	}
	if wantH := []HostSpeed{in.Hosts[1], in.Hosts[0]}; !reflect.DeepEqual(out.Hosts, wantH) {
		t.Errorf("round trip of the host factors: got %+v, want %+v", out.Hosts, wantH)
	}
	for _, bad := range []string{
		"[[calibration]]\ngpu = \"h100_sxm\"\nengine = \"tgi\"\ncompute = 0.5\nmemory = 0.5\ncomm = 0.5\n",
		"[[calibration]]\ngpu = \"h100_sxm\"\nengine = \"vllm\"\ncompute = 1.5\nmemory = 0.5\ncomm = 0.5\n",
		"[[calibration]]\ngpu = \"h100_sxm\"\nengine = \"vllm\"\ncompute = 0.5\nmemory = 0.5\ncomm = 0.5\nspeed = 3\n",
		"[[calibration]]\ngpu = \"h100_sxm\"\nengine = \"vllm\"\ncompute = 0.5\nmemory = 0.5\ncomm = 0.5\nwait_iterations = -1\n",
		"[[calibration]]\ngpu = \"h100_sxm\"\nengine = \"vllm\"\ncompute = 0.5\nmemory = 0.5\ncomm = 0.5\nprompt_token_s = 0.01\n",
		"[[calibration]]\ngpu = \"h100_sxm\"\nengine = \"vllm\"\ncompute = 0.5\nmemory = 0.5\ncomm = 0.5\nflat_latency = 2\n",
		"[[calibration]]\ngpu = \"*\"\nengine = \"vllm\"\ncompute = 0.5\nmemory = 0.5\ncomm = 0.5\ncompute_exponent = 0.5\n",
		"[[host_speed]]\ngeneration = \"hopper\"\nfactor = 5\n",
		"[[host_speed]]\ngeneration = \"hopper\"\nfactor = 1\n[[host_speed]]\ngeneration = \"hopper\"\nfactor = 1.5\n",
	} {
		if _, err := ReadTOML(strings.NewReader(bad), "bad.toml"); err == nil || !strings.Contains(err.Error(), "bad.toml") {
			t.Errorf("ReadTOML(%q): error %v, want one naming the file", bad, err)
		}
	}
}

func TestLookupNearestRelative(t *testing.T) {
	t.Parallel()
	cal := Calibration{Entries: []Entry{
		{GPU: "h100_sxm", Engine: VLLM, Efficiency: analytic.Efficiency{Compute: 0.3, Memory: 0.6, Comm: 0.5, OverheadS: 0.004, SequenceOverheadS: 1e-5}},
		{GPU: "b200_sxm", Engine: VLLM, Efficiency: analytic.Efficiency{Compute: 0.4, Memory: 0.7, Comm: 0.5, OverheadS: 0.005, SequenceOverheadS: 1e-5}},
		{GPU: "gb200", Engine: SGLang, Efficiency: analytic.Efficiency{Compute: 0.5, Memory: 0.8, Comm: 0.5, OverheadS: 0.006, SequenceOverheadS: 1e-5}},
	}}
	cases := []struct {
		gpu    string
		engine Engine
		prov   string
		mem    float64
	}{
		{"h100_sxm", VLLM, Calibrated, 0.6},
		{"h200_sxm", VLLM, "spec-only (efficiencies of h100_sxm/vllm)", 0.6}, // same FLOPs, 1.43× bandwidth
		{"gb300", VLLM, "spec-only (efficiencies of b200_sxm/vllm)", 0.7},    // same engine preferred over gb200/sglang
		{"gb300", SGLang, "spec-only (efficiencies of gb200/sglang)", 0.8},
		{"h200_sxm", TRTLLM, "spec-only (efficiencies of h100_sxm/vllm)", 0.6}, // no trtllm entry: any engine
	}
	for _, c := range cases {
		eff, prov := cal.Lookup(c.gpu, c.engine)
		if prov != c.prov || eff.Memory != c.mem {
			t.Errorf("Lookup(%s, %s) = %+v, %q; want memory %g, %q", c.gpu, c.engine, eff, prov, c.mem, c.prov)
		}
	}
	if eff, prov := (Calibration{}).Lookup("h100_sxm", VLLM); eff != analytic.DefaultEfficiency || !strings.HasPrefix(prov, SpecOnly) {
		t.Errorf("empty calibration: %+v %q", eff, prov)
	}
}

// TestLookupShared checks that a GPU without an entry of its own takes its
// engine's shared entry before any relative: the physics as written (the
// analytic model carries it by the GPU's spec sheet), the host-side times
// × its generation's host factor, calibrated when the GPU's rows were
// fitted.
func TestLookupShared(t *testing.T) {
	t.Parallel()
	shared := Entry{GPU: SharedGPU, Engine: VLLM, Efficiency: analytic.Efficiency{Compute: 0.4, ExpertCompute: 0.1, Memory: 0.8, Comm: 0.5,
		OverheadS: 0.004, LayerOverheadS: 2e-5, PromptOverheadS: 1e-3, SequenceOverheadS: 1e-5},
		Serving: Serving{RequestOverheadS: 0.02, WaitIterations: 3, ClientOverheadS: 1e-4, PromptTokenS: 4e-6}, GPUs: []string{"h200_sxm", "b200_sxm"}}
	cal := Calibration{Entries: []Entry{
		shared,
		{GPU: "h100_sxm", Engine: VLLM, Efficiency: analytic.Efficiency{Compute: 0.3, Memory: 0.6, Comm: 0.5, OverheadS: 0.004}},
	}, Hosts: []HostSpeed{{Generation: "blackwell", Factor: 0.5}, {Generation: "hopper", Factor: 1}}}
	if e, prov := cal.Lookup("h100_sxm", VLLM); prov != Calibrated || e.Memory != 0.6 {
		t.Errorf("h100_sxm: %+v %q, want its own entry", e, prov)
	}
	if e, prov := cal.LookupEntry("h200_sxm", VLLM); prov != Calibrated || e.Efficiency != shared.Efficiency || e.Serving != shared.Serving {
		t.Errorf("h200_sxm (fitted, hopper): %+v %q, want the shared entry unchanged, calibrated", e, prov)
	}
	e, prov := cal.LookupEntry("b200_sxm", VLLM)
	want := shared.Efficiency
	want.OverheadS, want.LayerOverheadS, want.PromptOverheadS, want.SequenceOverheadS = 0.002, 1e-5, 5e-4, 5e-6
	if prov != Calibrated || e.Efficiency != want || e.RequestOverheadS != 0.01 || e.ClientOverheadS != 5e-5 || e.PromptTokenS != 2e-6 || e.WaitIterations != 3 {
		t.Errorf("b200_sxm (blackwell × 0.5): %+v %q, want the host-side times halved, the physics and the iterations waited kept", e, prov)
	}
	// GB300: blackwell, not fitted: spec-only, the blackwell factor.
	e, prov = cal.LookupEntry("gb300", VLLM)
	if !strings.HasPrefix(prov, SpecOnly) || !strings.Contains(prov, "shared vllm") || e.OverheadS != 0.002 || e.Compute != 0.4 {
		t.Errorf("gb300: %+v %q, want the shared entry's, spec-only, host × 0.5", e, prov)
	}
	// MI300X: no factor for its generation: 1.
	if e, _ := cal.Lookup("mi300x", VLLM); e != shared.Efficiency {
		t.Errorf("mi300x: %+v, want the shared entry's as written", e)
	}
	// Another engine with no shared entry falls back to the nearest
	// relative, never to the shared entry of another engine.
	if _, prov := cal.Lookup("b200_sxm", SGLang); prov != "spec-only (efficiencies of h100_sxm/vllm)" {
		t.Errorf("b200_sxm/sglang: %q", prov)
	}
}

func TestDefaultCalibration(t *testing.T) {
	t.Parallel()
	d := Default()
	shared := 0
	for _, e := range d.Entries {
		if e.GPU == SharedGPU {
			shared++
		} else if !e.FromProfile {
			t.Errorf("entry %s/%s fitted on serving runs: only the shared entries are", e.GPU, e.Engine)
		}
	}
	if shared != 3 || len(d.Hosts) == 0 {
		t.Fatalf("default calibration has %d shared entries and %d host factors, want one per engine and some", shared, len(d.Hosts))
	}
	if err := d.Validate(); err != nil {
		t.Fatal(err)
	}
}

// sanityRow is an agg row to vary.
var sanityRow = Row{ID: "s", Engine: VLLM, Model: "Qwen/Qwen3-32B", GPU: "h100_sxm", GEMMQuant: "fp8", Mode: Agg,
	InputTokens: 1024, OutputTokens: 256, Concurrency: 8, BatchSize: 8, Agg: Parallel{TP: 2}, TTFTms: 1, TPOTms: 1}

func TestPredictMonotone(t *testing.T) {
	t.Parallel()
	cal := Default()
	for _, e := range []Engine{VLLM, SGLang, TRTLLM} {
		for _, gpu := range []string{"h100_sxm", "b200_sxm", "gb200"} {
			prevTPOT := 0.0
			for _, c := range []int{1, 2, 4, 8, 16, 32, 64, 128, 256, 512} {
				r := sanityRow
				r.Engine, r.GPU, r.Concurrency, r.BatchSize = e, gpu, c, c
				p, err := Predict(r, cal)
				if err != nil {
					t.Fatal(err)
				}
				if p.TPOTms < prevTPOT*0.99 {
					t.Errorf("%s/%s: TPOT fell to %g ms at concurrency %d (was %g)", gpu, e, p.TPOTms, c, prevTPOT)
				}
				prevTPOT = p.TPOTms
			}
			prevTTFT := 0.0
			for _, isl := range []int{128, 256, 512, 1024, 2048, 4096, 8192, 16384} {
				r := sanityRow
				// One client: with several, closed-loop cohorts make TTFT
				// non-monotone in isl (a known weakness, see doc.go).
				r.Engine, r.GPU, r.InputTokens, r.Concurrency, r.BatchSize = e, gpu, isl, 1, 1
				p, err := Predict(r, cal)
				if err != nil {
					t.Fatal(err)
				}
				if p.TTFTms < prevTTFT*0.99 {
					t.Errorf("%s/%s: TTFT fell to %g ms at isl %d (was %g)", gpu, e, p.TTFTms, isl, prevTTFT)
				}
				prevTTFT = p.TTFTms
			}
		}
	}
}

func TestPredictUnpredictable(t *testing.T) {
	t.Parallel()
	r := sanityRow
	r.Model = "acme/Unreleased-1T"
	if _, err := Predict(r, Default()); !errors.Is(err, ErrUnpredictable) || !strings.Contains(err.Error(), "no architecture") {
		t.Errorf("a model without an architecture: error %v", err)
	}
	r = sanityRow
	r.GPU = "tpu_v5"
	if _, err := Predict(r, Default()); !errors.Is(err, ErrUnpredictable) {
		t.Errorf("unknown GPU: error %v", err)
	}
}

func TestCrossValidateSubset(t *testing.T) {
	t.Parallel()
	rows := sharedRows(t)
	var sub []Row
	for i, r := range rows {
		if i%10 == 0 && r.Mode == Agg && r.Engine == VLLM {
			sub = append(sub, r)
		}
	}
	cv, err := CrossValidate(context.Background(), sub, "gpu", Options{})
	if err != nil {
		t.Fatal(err)
	}
	cells, preds := cv.Cells, cv.Preds
	if len(cv.BaselinePreds) != len(preds) || len(cv.BaselineCells) != len(cells) {
		t.Fatalf("baseline: %d predictions, %d cells; model %d, %d", len(cv.BaselinePreds), len(cv.BaselineCells), len(preds), len(cells))
	}
	if len(preds) != len(sub) || len(cells) < 3 || !cells[len(cells)-1].All {
		t.Fatalf("%d predictions for %d rows, %d cells", len(preds), len(sub), len(cells))
	}
	for _, p := range preds {
		// A left-out GPU's rows are not among the fitted ones.
		if p.Reason == "" && !strings.HasPrefix(p.Provenance, SpecOnly) {
			t.Errorf("held-out row %s used %q efficiencies", p.Row.ID, p.Provenance)
		}
	}
	// The cells' shares of the pooled error sum to it, largest first.
	shares, n := PooledShares(cells)
	pt, pp, ok := PooledMAPE(cells)
	var st, sp float64
	for i, s := range shares {
		st, sp = st+s.TTFT, sp+s.TPOT
		if i > 0 && s.TTFT > shares[i-1].TTFT {
			t.Errorf("share %d (%s, %.2f) above the one before it (%.2f)", i, s.Cell, s.TTFT, shares[i-1].TTFT)
		}
	}
	if !ok || n == 0 || math.Abs(st-pt) > 1e-9*max(1, pt) || math.Abs(sp-pp) > 1e-9*max(1, pp) {
		t.Errorf("shares over %d rows sum to %.6f / %.6f, pooled %.6f / %.6f (%v)", n, st, sp, pt, pp, ok)
	}
	if _, err := CrossValidate(context.Background(), sub, "engine", Options{}); err == nil {
		t.Error("CrossValidate by engine: want an error")
	}
}

func BenchmarkPredictRow(b *testing.B) {
	rows := sharedRows(b)
	cal := Default()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		_, _ = Predict(rows[i%len(rows)], cal)
	}
}

// TestSetHeldOut: each shared entry gets the median over its own engine's
// cells, the overall line ignored; pair entries and an engine without
// cells keep zeros; HeldOut reports them.
func TestSetHeldOut(t *testing.T) {
	t.Parallel()
	cal := Calibration{Entries: []Entry{
		{GPU: SharedGPU, Engine: VLLM}, {GPU: SharedGPU, Engine: SGLang}, {GPU: "h100_sxm", Engine: VLLM},
	}}
	cells := []CellMAPE{
		{Cell: Cell{GPU: "a", Engine: VLLM}, TTFT: 10, TPOT: 1},
		{Cell: Cell{GPU: "b", Engine: VLLM}, TTFT: 30, TPOT: 5},
		{Cell: Cell{GPU: "c", Engine: VLLM}, TTFT: 20, TPOT: 3},
		{Cell: Cell{GPU: "d", Engine: TRTLLM}, TTFT: 99, TPOT: 99},
		{All: true, TTFT: 500, TPOT: 500},
	}
	cal.SetHeldOut(cells)
	// The median as MedianCellMAPE takes it (and perf validate prints it):
	// gonum's linear interpolation of the empirical CDF, 15 and 2 for
	// three cells 10, 20, 30 and 1, 3, 5.
	if e := cal.Entries[0]; e.HeldOutTTFT != 15 || e.HeldOutTPOT != 2 {
		t.Errorf("vllm shared entry: held out %v / %v, want 15 / 2", e.HeldOutTTFT, e.HeldOutTPOT)
	}
	if e := cal.Entries[1]; e.HeldOutTTFT != 0 || e.HeldOutTPOT != 0 {
		t.Errorf("sglang shared entry without cells: held out %v / %v, want zeros", e.HeldOutTTFT, e.HeldOutTPOT)
	}
	if e := cal.Entries[2]; e.HeldOutTTFT != 0 || e.HeldOutTPOT != 0 {
		t.Errorf("pair entry: held out %v / %v, want zeros", e.HeldOutTTFT, e.HeldOutTPOT)
	}
	if tt, tp, ok := cal.HeldOut(VLLM); !ok || tt != 15 || tp != 2 {
		t.Errorf("HeldOut(vllm) = %v, %v, %v; want 15, 2, true", tt, tp, ok)
	}
	if _, _, ok := cal.HeldOut(SGLang); ok {
		t.Error("HeldOut(sglang) reports figures it does not have")
	}
	bad := Calibration{Entries: []Entry{{GPU: SharedGPU, Engine: VLLM, Efficiency: withEngineTerms(Physics, fitStart), Serving: DefaultServing, HeldOutTPOT: math.NaN()}}}
	if err := bad.Validate(); err == nil || !strings.Contains(err.Error(), "heldout_mape_tpot") {
		t.Errorf("Validate of a NaN held-out figure: %v, want an error naming heldout_mape_tpot", err)
	}
}

// TestDefaultHeldOut: every shared entry of the embedded calibration
// carries its leave-one-GPU-out figures (go generate measures them), and
// the spec-only provenance quotes them.
func TestDefaultHeldOut(t *testing.T) {
	t.Parallel()
	cal := Default()
	shared := 0
	for _, e := range cal.Entries {
		if e.GPU != SharedGPU {
			continue
		}
		shared++
		if !(e.HeldOutTTFT > 0 && e.HeldOutTPOT > 0 && e.HeldOutTTFT < 1000 && e.HeldOutTPOT < 1000) {
			t.Errorf("shared %s entry: held-out figures %v / %v, want both measured", e.Engine, e.HeldOutTTFT, e.HeldOutTPOT)
		}
		if tt, tp, ok := cal.HeldOut(e.Engine); !ok || tt != e.HeldOutTTFT || tp != e.HeldOutTPOT {
			t.Errorf("HeldOut(%s) = %v, %v, %v", e.Engine, tt, tp, ok)
		}
	}
	if shared == 0 {
		t.Error("the embedded calibration has no shared entry")
	}
}

// TestHeldOutTargets: on the shipped benchmarks, each GPU left out of the
// fit in turn, no engine is predicted too slow (or too fast) on more than
// 75% of its rows (issue 28's bias target, met), and the held-out errors
// stay within the fit's noise (about two points) of the model's as
// shipped: median per cell 31.0% TTFT / 15.5% TPOT, pooled 34.6% /
// 19.4% (docs/model.md, "Held-out accuracy"). A loss that leans one way
// (the relative error alone: TTFTs too fast on 74–78% of an engine's
// rows), or a change that loses what the kernels and recipes gained, fails
// here. Slow (a full cross-validation), so not under -short.
func TestHeldOutTargets(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("a full cross-validation")
	}
	rows := sharedRows(t)
	cv, err := CrossValidate(context.Background(), rows, "gpu", Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range Bias(cv.Preds) {
		for _, s := range []struct {
			name string
			slow float64
		}{{"TTFT", b.SlowTTFT}, {"TPOT", b.SlowTPOT}} {
			if one := max(s.slow, 1-s.slow); one > 0.75 {
				t.Errorf("%s: %.0f%% of its %d rows' %s predicted one way, more than 75%%", b.Engine, 100*one, b.Rows, s.name)
			}
		}
	}
	tt, tp := MedianCellMAPE(cv.Cells)
	if tt > 31.3 || tp > 17.1 {
		t.Errorf("held-out median per-cell MAPE TTFT %.1f%%, TPOT %.1f%%: more than two points worse than the shipped 29.3%% / 15.1%%", tt, tp)
	}
	pt, pp, _ := PooledMAPE(cv.Cells)
	if pt > 36.1 || pp > 20.5 {
		t.Errorf("held-out pooled MAPE TTFT %.1f%%, TPOT %.1f%%: more than two points worse than the shipped 34.1%% / 18.5%%", pt, pp)
	}
	t.Logf("held out: median per cell TTFT %.1f%%, TPOT %.1f%%; pooled %.1f%% / %.1f%%", tt, tp, pt, pp)
}

// TestPromptTokenTerm: the per-prompt-token serving term adds its seconds
// × the benchmark's mean prompt length to TTFT and nothing to TPOT.
func TestPromptTokenTerm(t *testing.T) {
	t.Parallel()
	r := Row{ID: "x", Engine: VLLM, Mode: Agg, Model: "meta-llama/Llama-3.1-8B-Instruct", GPU: "h100_sxm", InputTokens: 4096, OutputTokens: 256,
		Concurrency: 4, Agg: Parallel{TP: 1}}
	p, err := newRowPredictor(context.Background(), r)
	if err != nil {
		t.Fatal(err)
	}
	sv := DefaultServing
	sv.PromptTokenS = 0
	t0, o0 := p.predict(withEngineTerms(Physics, fitStart), sv)
	sv.PromptTokenS = 5e-6
	t1, o1 := p.predict(withEngineTerms(Physics, fitStart), sv)
	if want := 5e-6 * benchMeanLength(4096); math.Abs(t1-t0-want) > 1e-12 || o1 != o0 {
		t.Errorf("TTFT %g → %g s (want +%g), TPOT %g → %g", t0, t1, want, o0, o1)
	}
}

// TestCellRatios: a cell's ratios are the medians (the middle value, or
// the mean of the two) of predicted / measured
// over its rows (above 1: too slow), the overall line's over every row;
// rows without a prediction do not count.
func TestCellRatios(t *testing.T) {
	t.Parallel()
	row := func(gpu string, ttft, tpot float64) Row {
		return Row{GPU: gpu, Model: "m", Engine: VLLM, Mode: Agg, TTFTms: ttft, TPOTms: tpot}
	}
	preds := []RowPrediction{
		{Row: row("a", 100, 10), TTFTms: 200, TPOTms: 5},
		{Row: row("a", 100, 10), TTFTms: 150, TPOTms: 10},
		{Row: row("a", 100, 10), TTFTms: 50, TPOTms: 20},
		{Row: row("b", 100, 10), TTFTms: 80, TPOTms: 12},
		{Row: row("b", 100, 10), Reason: "not predicted"},
	}
	cells := cellMAPEs(preds)
	if len(cells) != 3 || !cells[2].All {
		t.Fatalf("cells %+v: want a, b and the overall line", cells)
	}
	for _, c := range []struct {
		i          int
		ttft, tpot float64
	}{{0, 1.5, 1}, {1, 0.8, 1.2}, {2, 1.15, 1.1}} {
		if got := cells[c.i]; math.Abs(got.RatioTTFT-c.ttft) > 1e-12 || math.Abs(got.RatioTPOT-c.tpot) > 1e-12 {
			t.Errorf("cell %d (%s): ratios ×%v, ×%v, want ×%v, ×%v", c.i, got.Cell, got.RatioTTFT, got.RatioTPOT, c.ttft, c.tpot)
		}
	}
}
