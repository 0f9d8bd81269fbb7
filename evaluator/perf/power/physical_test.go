package power

import (
	"math"
	"math/rand/v2"
	"testing"

	"splitplan/arch"
	"splitplan/costpower"
	"splitplan/evaluator/perf"
	"splitplan/evaluator/perf/analytic"
	"splitplan/hw"
)

// machines are power models of the catalog's machines serving Llama2-70B
// (the A100 profiled, the others spec-only) at their own caps and at 0.5.
func machines(t *testing.T) []*Model {
	t.Helper()
	a, err := arch.Lookup("llama2-70b")
	if err != nil {
		t.Fatal(err)
	}
	var out []*Model
	for _, mc := range costpower.Default().Machines {
		if mc.GPU == "L40S" || mc.Name == "L40S-8" {
			continue // 8 × 45 GiB: fits, but keep the test on the DGX-class machines
		}
		for _, c := range []float64{0, 0.5} {
			g, err := hw.Lookup(mc.GPUSpecName())
			if err != nil {
				t.Fatal(err)
			}
			m, err := ForReplica(replicaOf(mc, g, c), a, arch.BF16, ProfileEfficiency(g.Name))
			if err != nil {
				t.Fatalf("%s: %v", mc.Name, err)
			}
			out = append(out, m)
		}
	}
	return out
}

// replicaOf is one model replica of machine type mc under cap c (0: its
// own), as resolve.PowerReplica makes it (this package's tests cannot
// import the resolver, which imports this package).
func replicaOf(mc costpower.Machine, g hw.GPU, c float64) Replica {
	mc = mc.Instance()
	tp := mc.TensorParallel
	if tp <= 0 {
		tp = mc.GPUs
	}
	if c == 0 {
		c = mc.GPUPowerCap
	}
	return Replica{Name: mc.Name, GPU: g, TP: tp, GPUs: max(mc.GPUs, tp), BoardW: mc.GPUPowerW, CapFraction: c}
}

// TestDrawBounds: over random iterations and durations, a machine's draw
// lies between its idle draw and GPUs × cap × board power, and an
// iteration's energy is its draw times its duration, never negative.
func TestDrawBounds(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(1, 2))
	for _, m := range machines(t) {
		for range 2000 {
			p, d := rng.IntN(8192), rng.IntN(256)
			ctx := int64(d) * int64(1+rng.IntN(4096))
			s := rng.Float64() * 2
			w := m.IterationW(p, d, ctx, s)
			if !(w >= m.IdleW()-1e-9 && w <= m.MaxW()+1e-9) {
				t.Fatalf("%v: IterationW(%d, %d, %d, %g) = %g W, outside [idle %g, max %g]", m.Provenance(), p, d, ctx, s, w, m.IdleW(), m.MaxW())
			}
			j := m.IterationJ(p, d, ctx, s)
			if j < 0 || math.Abs(j-w*s) > 1e-9*max(1, j) {
				t.Fatalf("IterationJ = %g J, want IterationW × seconds = %g", j, w*s)
			}
		}
		if m.IterationW(0, 0, 0, 1) != m.IdleW() || m.IterationJ(100, 1, 100, 0) != 0 {
			t.Errorf("no work or no time: %g W, %g J; want the idle draw and 0 J", m.IterationW(0, 0, 0, 1), m.IterationJ(100, 1, 100, 0))
		}
	}
}

// TestDrawNonDecreasingInLoad: with each iteration lasting what the
// analytic model (capped as the machine is) says, more work of any kind
// never takes less energy (exactly); an iteration of more work of any
// kind never draws less power beyond drawDipTolerance.
func TestDrawNonDecreasingInLoad(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(3, 4))
	worst := map[string]float64{}
	defer func() { t.Logf("largest relative dips in draw: %v", worst) }()
	for _, m := range machines(t) {
		clock, err := BuiltinCap.ClockFraction(m.CapFraction())
		if err != nil {
			t.Fatal(err)
		}
		at := func(p, d int, ctx int64) (float64, float64) {
			s := m.an.BatchTimeAtClock(batchOf(p, d, ctx), clock)
			return m.IterationW(p, d, ctx, s), m.IterationJ(p, d, ctx, s)
		}
		check := func(what string, p0, d0 int, c0 int64, p1, d1 int, c1 int64) {
			w0, j0 := at(p0, d0, c0)
			w1, j1 := at(p1, d1, c1)
			worst[what] = max(worst[what], (w0-w1)/w0)
			if j1 < j0 || w1 < w0*(1-drawDipTolerance[what]) {
				t.Fatalf("%v cap %g, %s: (%d, %d, %d) draws %g W, %g J; (%d, %d, %d) draws %g W, %g J",
					m.Provenance(), m.CapFraction(), what, p0, d0, c0, w0, j0, p1, d1, c1, w1, j1)
			}
		}
		for range 2000 {
			p, d := rng.IntN(16384), rng.IntN(512)
			per := int64(1 + rng.IntN(8192))
			ctx := int64(d) * per
			more := 1 + rng.IntN(4096)
			check("prompt tokens", p, 0, 0, p+more, 0, 0)
			check("decodes", 0, d, ctx, 0, d+1, ctx+per)
			check("context", 0, d, ctx, 0, d, ctx+int64(rng.IntN(1<<20)))
			check("mixed prompt tokens", p, d, ctx, p+more, d, ctx)
			check("mixed decodes", p, d, ctx, p, d+1, ctx+per)
			check("mixed context", p, d, ctx, p, d, ctx+int64(rng.IntN(1<<20)))
		}
	}
}

// drawDipTolerance is how far, relatively, a machine's draw may fall when
// an iteration's work of each kind grows. The per-sequence host overheads
// and the all-reduces lengthen a decode iteration a little faster than its
// HBM traffic grows (the GPU waits on the host: found dips below 0.3%); in
// a mixed iteration, prompt tokens joining long-context decodes lengthen it
// more than they add busy time, as the attention flips from memory- to
// compute-bound (found dips up to 7.3%). Since the calibration charges a
// fixed cost per layer per iteration, a short prompt iteration whose weight
// reads are memory-bound can draw a little more than a longer one that
// turns compute-bound (found dips up to 4.9%). Energy never falls.
// (Prompt tokens: the dip is where a prompt iteration turns from memory-
// to compute-bound while its fixed costs, which draw idle power, stay;
// 6.03% at worst since the prompt-iteration overhead, 5–6% before.)
// Mixed context: with the H100 kernel fit a busy second of compute draws
// 1.62 of board power and one of HBM traffic 0.62, so decode context added
// to a compute-bound mixed iteration adds time at the lower, memory-bound
// draw and lowers the iteration's average (found 7.7%; at most 20%, as for
// decode context below; the energy grows).
// Decode context: with the kernel layer a decode's GEMMs and attention
// FLOPs blend into its memory-bound time (the smooth roofline corner), so
// more context on a decode whose compute share is not negligible (a large
// batch on the A100, whose bf16 ridge is low) adds HBM time at the lower
// draw, down to a memory-bound decode's draw: idle + HBM fraction, 0.80 of
// board power against the compute-bound 1.0 at the limit, so the dip is at
// most 20% (found 7.1%; the energy always grows).
var drawDipTolerance = map[string]float64{
	"prompt tokens": 0.07, "decodes": 0.005, "context": 0.2,
	"mixed prompt tokens": 0.1, "mixed decodes": 0.005, "mixed context": 0.2,
}

// TestCapLatency: over random iterations, a capped model is never faster
// than the uncapped one, is non-increasing in the cap, and a cap of 1 is
// the uncapped model itself, bit for bit.
func TestCapLatency(t *testing.T) {
	t.Parallel()
	a, _ := arch.Lookup("bloom-176b")
	g, _ := hw.Lookup("h100_sxm")
	an, err := analytic.New(analytic.Config{Arch: a, GPU: g, TP: 8, Weights: arch.BF16, KV: arch.BF16, Eff: ProfileEfficiency(g.Name)})
	if err != nil {
		t.Fatal(err)
	}
	var base perf.IterationModel = an
	same, err := NewCapped(base, an, BuiltinCap, 1, 1)
	if err != nil || same != base {
		t.Fatalf("NewCapped at a cap of 1 = %v, %v; want the model itself", same, err)
	}
	caps := []float64{0.35, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1}
	models := make([]perf.IterationModel, len(caps))
	for i, c := range caps {
		if models[i], err = NewCapped(base, an, BuiltinCap, 1, c); err != nil {
			t.Fatal(err)
		}
	}
	rng := rand.New(rand.NewPCG(5, 6))
	for range 3000 {
		p, d := rng.IntN(16384), rng.IntN(512)
		ctx := int64(d) * int64(1+rng.IntN(8192))
		prev := math.Inf(1)
		for i, m := range models {
			var s, u float64
			switch rng.IntN(3) {
			case 0:
				s, _ = m.PromptTime(p)
				u, _ = base.PromptTime(p)
				if i > 0 {
					s2, _ := models[i-1].PromptTime(p)
					prev = s2
				}
			case 1:
				s, _ = m.DecodeTime(d, ctx)
				u, _ = base.DecodeTime(d, ctx)
				if i > 0 {
					s2, _ := models[i-1].DecodeTime(d, ctx)
					prev = s2
				}
			default:
				s, _ = m.MixedTime(p, d, ctx)
				u, _ = base.MixedTime(p, d, ctx)
				if i > 0 {
					s2, _ := models[i-1].MixedTime(p, d, ctx)
					prev = s2
				}
			}
			if s < u {
				t.Fatalf("cap %g: %g s, below the uncapped %g s", caps[i], s, u)
			}
			if s > prev {
				t.Fatalf("cap %g: %g s, above the tighter cap %g's %g s", caps[i], s, caps[i-1], prev)
			}
			if caps[i] == 1 && s != u {
				t.Fatalf("cap 1: %g s, want the uncapped %g s exactly", s, u)
			}
		}
	}
	// A compute-bound prompt slows by about 1/clock, a small decode not at all.
	f, _ := BuiltinCap.ClockFraction(0.5)
	k, _ := BuiltinCap.LatencyMultiplier(an, batchOf(8192, 0, 0), 1, 0.5)
	if math.Abs(k-1/f) > 0.1/f {
		t.Errorf("8k-token prompt at cap 0.5: multiplier %g, want about 1/clock = %g", k, 1/f)
	}
	if k, _ := BuiltinCap.LatencyMultiplier(an, batchOf(0, 8, 8*1024), 1, 0.5); math.Abs(k-1) > 0.01 {
		t.Errorf("8-request decode at cap 0.5: multiplier %g, want 1 within 1%% (memory-bound: only the GEMMs' small compute share slows)", k)
	}
}

// TestClockFraction: the clock is 1 at a cap of 1, rises with the cap, and
// caps at or below the static draw are errors.
func TestClockFraction(t *testing.T) {
	t.Parallel()
	if f, err := BuiltinCap.ClockFraction(1); f != 1 || err != nil {
		t.Errorf("ClockFraction(1) = %g, %v; want 1", f, err)
	}
	prev := 0.0
	for c := BuiltinCap.StaticFraction + 0.01; c <= 1; c += 0.01 {
		f, err := BuiltinCap.ClockFraction(c)
		if err != nil || !(f > prev && f <= 1) {
			t.Fatalf("ClockFraction(%g) = %g, %v; want in (%g, 1]", c, f, err, prev)
		}
		prev = f
	}
	for _, c := range []float64{0, -1, BuiltinCap.StaticFraction, math.NaN()} {
		if _, err := BuiltinCap.ClockFraction(c); err == nil {
			t.Errorf("ClockFraction(%g): no error", c)
		}
	}
}

// TestProvisionedKW: the paper's DGX-H100 at a GPU cap of 0.5 is its
// DGX-H100cap (1.23 × 6.5 kW), the machine's own cap gives its PowerKW
// exactly, and the provision rises with the cap.
func TestProvisionedKW(t *testing.T) {
	t.Parallel()
	cat := costpower.Default()
	h100, err := cat.Machine("DGX-H100")
	if err != nil {
		t.Fatal(err)
	}
	hcap, err := cat.Machine("DGX-H100cap")
	if err != nil {
		t.Fatal(err)
	}
	if kw, err := ProvisionedKW(h100.PowerKW, h100.GPUPowerCap, 0.5); err != nil || math.Abs(kw-hcap.PowerKW) > 1e-9 {
		t.Errorf("DGX-H100 at 0.5: %g kW, %v; want DGX-H100cap's %g kW", kw, err, hcap.PowerKW)
	}
	if kw, err := ProvisionedKW(hcap.PowerKW, hcap.GPUPowerCap, 1); err != nil || math.Abs(kw-h100.PowerKW) > 1e-9 {
		t.Errorf("DGX-H100cap at 1: %g kW, %v; want DGX-H100's %g kW", kw, err, h100.PowerKW)
	}
	if kw, _ := ProvisionedKW(h100.PowerKW, h100.GPUPowerCap, 1); kw != h100.PowerKW {
		t.Errorf("DGX-H100 at its own cap: %g kW, want %g exactly", kw, h100.PowerKW)
	}
	prev := 0.0
	for c := 0.1; c <= 1; c += 0.1 {
		kw, err := ProvisionedKW(h100.PowerKW, h100.GPUPowerCap, c)
		if err != nil || kw <= prev {
			t.Fatalf("cap %g: %g kW, %v; want above %g", c, kw, err, prev)
		}
		prev = kw
	}
	if _, err := ProvisionedKW(h100.PowerKW, h100.GPUPowerCap, 0); err == nil {
		t.Error("cap 0: no error")
	}
}

// TestProvenance: the H100 (FittedGPU) is profiled with the held-out
// figure, the others spec-only.
func TestProvenance(t *testing.T) {
	t.Parallel()
	for _, m := range machines(t) {
		p := m.Provenance()
		want := SpecOnly
		if m.an.Config().GPU.Name == FittedGPU {
			want = Profiled
			if p.Error != BuiltinHeldOutError {
				t.Errorf("%s provenance %v lacks the held-out error", FittedGPU, p)
			}
		}
		if p.Kind != want {
			t.Errorf("%s: provenance %v, want %v", m.an.Config().GPU.Name, p, want)
		}
	}
}
