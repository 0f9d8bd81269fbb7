package kernel

import (
	"math"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"splitplan/arch"
	"splitplan/hw"
)

// moeFile reads one of the repository's MoE kernel measurement files.
func moeFile(t *testing.T, name string) []MoERow {
	t.Helper()
	return dataFile(t, ReadMoEFile, "moe-kernels", name)
}

// dataFile reads file name of the repository's data directory dir with
// read (ReadMoEFile, ReadGDNFile), failing the test on an error.
func dataFile[T any](t *testing.T, read func(string) ([]T, error), dir, name string) []T {
	t.Helper()
	rows, err := read(filepath.Join("..", "..", "..", "data", dir, name))
	if err != nil {
		t.Fatal(err)
	}
	return rows
}

// TestExpertKernelsAreTheFit: the embedded MoE kernels are what
// FitExpertKernels gives with the embedded dense constants (go generate
// keeps them in step): Hopper's on the shipped H100 file, Blackwell's own
// on the B200 one, vLLM's Marlin on Blackwell on the B200's int4 Marlin
// rows; every kernel is fitted, each fraction below the dense one.
func TestExpertKernelsAreTheFit(t *testing.T) {
	if testing.Short() {
		t.Skip("refits the MoE kernels (seconds)")
	}
	t.Parallel()
	got, err := FitExpertKernels(Default, lookupGPU(t, "h100_sxm"), moeFile(t, "moe_h100.csv.gz"))
	if err != nil {
		t.Fatal(err)
	}
	var bw, marlin []MoERow
	for _, r := range moeFile(t, "moe_b200.csv.gz") {
		switch {
		case r.Family().Blackwell():
			bw = append(bw, r)
		case r.BlackwellMarlin():
			marlin = append(marlin, r)
		}
	}
	b200 := lookupGPU(t, "b200_sxm")
	kb, err := FitExpertKernels(Default, b200, bw)
	if err != nil {
		t.Fatal(err)
	}
	km, err := FitExpertKernels(Default, b200, marlin)
	if err != nil {
		t.Fatal(err)
	}
	for k, e := range kb {
		got[k] = e
	}
	got[VLLMMarlinBlackwell] = km[VLLMMarlin]
	if len(got) != len(ExpertKernels) {
		t.Fatalf("fitted %d kernels, embedded %d", len(got), len(ExpertKernels))
	}
	for k, e := range ExpertKernels {
		f := got[k]
		if math.Abs(f.Compute/e.Compute-1) > 1e-4 || math.Abs(f.LatencyS/e.LatencyS-1) > 1e-3 {
			t.Errorf("%s: embedded %+v, the fit gives %+v: run go generate ./evaluator/perf/kernel", k, e, f)
		}
		if !(e.Compute > 0 && e.Compute < Default.GEMMCompute) {
			t.Errorf("%s: compute fraction %v, want in (0, the dense %v)", k, e.Compute, Default.GEMMCompute)
		}
	}
}

// TestExpertKernelsHeldOut: on the measurements the fits never see — the
// H200's for Hopper's kernels, the GB200's for Blackwell's own — the MoE
// kernels carried by the spec sheet stay within the bounds docs/model.md
// quotes for the pooled error (H200 median 14.7%, P90 48.2%; GB200 15.5%,
// 47.6%).
func TestExpertKernelsHeldOut(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		gpu, file string
		blackwell bool
		median    float64
	}{{"h200_sxm", "moe_h200.csv.gz", false, 15}, {"gb200", "moe_gb200.csv.gz", true, 16}} {
		var rows []MoERow
		for _, r := range moeFile(t, c.file) {
			if r.Family().Blackwell() == c.blackwell {
				rows = append(rows, r)
			}
		}
		v := ValidateExpertKernels(Default, lookupGPU(t, c.gpu), ExpertKernels, rows)
		p := v[MoEKernel(Pooled)]
		if p.N < 10000 || p.Median > c.median || p.P90 > 50 {
			t.Errorf("%s held out: %d rows, median %.1f%%, P90 %.1f%%: want ≥ 10,000 rows within %g%% / 50%%", c.gpu, p.N, p.Median, p.P90, c.median)
		}
	}
}

// TestExpertKernelChoice: the kernel each engine runs routed experts
// with, by weights and GPU generation.
func TestExpertKernelChoice(t *testing.T) {
	t.Parallel()
	h100, h200, b200, a100, mi := lookupGPU(t, "h100_sxm"), lookupGPU(t, "h200_sxm"), lookupGPU(t, "b200_sxm"), lookupGPU(t, "a100"), lookupGPU(t, "mi300x")
	moe := lookupArch(t, "qwen3-235b-a22b")
	dense := lookupArch(t, "llama3.1-70b")
	if k := ExpertKernel("vllm", dense, arch.BF16, h100, Switches{}); k != "" {
		t.Errorf("a dense model: %q, want none", k)
	}
	for _, c := range []struct {
		engine string
		w      arch.Precision
		g      hw.GPU
		marlin bool
		want   MoEKernel
	}{
		{"vllm", arch.BF16, h100, false, VLLMTriton},
		{"vllm", arch.FP8, h200, false, VLLMTritonFP8},
		{"vllm", arch.FP4, h200, false, VLLMTritonMXFP4},
		{"vllm", arch.FP4, h200, true, VLLMMarlin},
		{"vllm", arch.INT4, h100, false, VLLMMarlin},
		{"vllm", arch.INT4, b200, false, VLLMMarlinBlackwell},
		{"vllm", arch.INT4, mi, false, VLLMMarlinBlackwell},
		{"vllm", arch.FP4, a100, false, VLLMMarlin},
		{"vllm", arch.FP4, b200, true, VLLMTRTLLMGen},
		{"vllm", arch.BF16, b200, false, VLLMTRTLLMGen},
		{"vllm", arch.FP8, b200, false, VLLMTRTLLMGenFP8},
		{"vllm", arch.FP8, a100, false, ""},
		{"vllm", arch.BF16, a100, false, VLLMTriton},
		{"vllm", arch.BF16, mi, false, VLLMTriton},
		{"vllm", arch.FP8, mi, false, VLLMTritonFP8},
		{"vllm", arch.FP4, mi, false, ""},
		{"sglang", arch.BF16, h100, false, SGLangTriton},
		{"sglang", arch.FP8, h100, false, SGLangTritonFP8},
		{"sglang", arch.FP8, b200, false, SGLangTRTLLMGenFP8},
		{"sglang", arch.BF16, b200, false, SGLangTRTLLMGen},
		{"sglang", arch.BF16, mi, false, SGLangTriton},
		{"sglang", arch.FP8, mi, false, SGLangTritonFP8},
		{"sglang", arch.FP4, h200, false, SGLangTritonMXFP4},
		{"sglang", arch.FP4, b200, false, SGLangTRTLLMGen},
		{"sglang", arch.FP4, a100, false, ""},
		{"sglang", arch.INT4, b200, false, SGLangMarlin},
		{"trtllm", arch.BF16, h100, false, TRTLLMCutlass},
		{"trtllm", arch.BF16, b200, false, TRTLLMCutlass},
		{"trtllm", arch.FP8, h200, false, TRTLLMCutlassFP8},
		{"trtllm", arch.FP8, b200, false, TRTLLMDeepGEMMFP8},
		{"trtllm", arch.FP4, h200, false, TRTLLMW4A16},
		{"trtllm", arch.FP4, b200, false, TRTLLMGenFP4},
		{"trtllm", arch.INT4, a100, false, ""},
		{"trtllm", arch.BF16, mi, false, ""},
		{"none", arch.BF16, h100, false, ""},
	} {
		if got := ExpertKernel(c.engine, moe, c.w, c.g, Switches{MarlinMXFP4: c.marlin}); got != c.want {
			t.Errorf("%s %v on %s (Marlin switch %v): %q, want %q", c.engine, c.w, c.g.Name, c.marlin, got, c.want)
		}
		if c.want != "" {
			if _, ok := ExpertKernels[c.want]; !ok {
				t.Errorf("%q is chosen but not measured", c.want)
			}
		}
	}
	// TensorRT-LLM runs MXFP4 checkpoints (gpt-oss) with MXFP8 activations
	// on Blackwell, NVFP4 ones through its NVFP4 kernel.
	oss := lookupArch(t, "gpt-oss-120b")
	if k := ExpertKernel("trtllm", oss, arch.FP4, b200, Switches{}); k != TRTLLMGenMXFP4 {
		t.Errorf("gpt-oss (MXFP4) with TensorRT-LLM on the B200: %q, want %q", k, TRTLLMGenMXFP4)
	}
	if k := ExpertKernel("trtllm", oss, arch.FP4, h200, Switches{}); k != TRTLLMW4A16 {
		t.Errorf("gpt-oss with TensorRT-LLM on the H200: %q, want %q", k, TRTLLMW4A16)
	}
}

// TestWithExpertKernel: a measured MoE kernel slows an MoE model's long
// prefill on the H100 by its fraction (its routed experts' GEMMs are
// compute-bound there), leaves a dense model and decode-bound batches
// almost as they were, and "" or an unknown kernel changes nothing.
func TestWithExpertKernel(t *testing.T) {
	t.Parallel()
	g := lookupGPU(t, "h100_sxm")
	moe := lookupArch(t, "qwen3-235b-a22b")
	layer := func(p Params, a arch.Arch) *Layer {
		l, err := New(p, a, g, 8, arch.BF16, arch.BF16)
		if err != nil {
			t.Fatal(err)
		}
		return l
	}
	prefill := func(l *Layer) float64 { return l.Time(8192, 1, 8192*8193/2, 0, 0, 1, nil) }
	decode := func(l *Layer) float64 { return l.Time(0, 0, 0, 1, 2048, 1, nil) }
	base, marlin := layer(Default, moe), layer(Default.WithExpertKernel(VLLMMarlin), moe)
	if r := prefill(marlin) / prefill(base); !(r > 1.5) {
		t.Errorf("Qwen3-235B 8,192-token prefill, Marlin over the dense fraction: ×%.2f, want > 1.5", r)
	}
	if r := decode(marlin) / decode(base); math.Abs(r-1) > 0.01 {
		t.Errorf("Qwen3-235B one decode, Marlin over the dense fraction: ×%.3f, want within 1%% (weight-bound)", r)
	}
	for _, k := range []MoEKernel{"", "no-such-kernel"} {
		if Default.WithExpertKernel(k) != Default {
			t.Errorf("WithExpertKernel(%q) changed the constants", k)
		}
	}
	// A profiled GPU's routing time and tile (perf fit --kernels) are
	// its grouped GEMMs', not the engine kernel's: a measured kernel
	// drops them, an unmeasured one keeps them.
	user := Default
	user.ExpertCompute, user.ExpertLayerS, user.ExpertTileRows = 0.3, 80e-6, 64
	if q := user.WithExpertKernel(VLLMMarlin); q.ExpertLayerS != 0 || q.ExpertTileRows != 0 || q.ExpertCompute != ExpertKernels[VLLMMarlin].Compute {
		t.Errorf("WithExpertKernel(vllm-marlin) on a profiled fit: expert_compute %v, expert_layer_s %v, expert_tile_rows %v, want Marlin's, 0 and 0", q.ExpertCompute, q.ExpertLayerS, q.ExpertTileRows)
	}
	if user.WithExpertKernel("") != user {
		t.Error(`WithExpertKernel("") changed a profiled fit`)
	}
	noTile := user
	noTile.ExpertTileRows = 0
	if a, b := decode(layer(Default, moe)), decode(layer(noTile, moe)); !(b > a+float64(moe.MoELayers())*70e-6) {
		t.Errorf("one decode with 80 µs of routing per MoE layer: %v s against %v without, want ≥ %d × 70 µs more", b, a, moe.MoELayers())
	}
	// The tile: a decode of 16 requests touches about 16 × 8 experts of
	// 128 with one row each, computed as 64-row tiles: slower, never
	// faster.
	batch := func(l *Layer) float64 { return l.Time(0, 0, 0, 16, 16*2048, 1, nil) }
	if a, b := batch(layer(noTile, moe)), batch(layer(user, moe)); !(b > a) {
		t.Errorf("16 decodes with a 64-row tile: %v s against %v without, want slower", b, a)
	}
	dense := lookupArch(t, "llama3.1-70b")
	if a, b := prefill(layer(Default, dense)), prefill(layer(Default.WithExpertKernel(VLLMMarlin), dense)); a != b {
		t.Errorf("a dense model's prefill moved with an MoE kernel: %v → %v", a, b)
	}
}

// TestReadMoECSVErrors: a bad MoE measurement file is refused with its
// name and line.
func TestReadMoECSVErrors(t *testing.T) {
	t.Parallel()
	head := strings.Join(moeColumns, ",") + "\n"
	for _, c := range []struct{ name, body, want string }{
		{"empty", "", "f.csv: empty file"},
		{"missing column", "engine,kernel_source\n", `f.csv:1: missing column "moe_dtype"`},
		{"bad tokens", head + "vllm,k,bfloat16,0,4096,1536,8,128,1,0.1\n", "f.csv:2: num_tokens"},
		{"bad latency", head + "vllm,k,bfloat16,8,4096,1536,8,128,1,-1\n", "f.csv:2: latency_ms"},
		{"latency beyond an hour", head + "vllm,k,bfloat16,8,4096,1536,8,128,1,1e300\n", `f.csv:2: latency_ms = "1e300": expected a time between`},
		{"latency under a microsecond", head + "vllm,k,bfloat16,8,4096,1536,8,128,1,1e-300\n", `f.csv:2: latency_ms = "1e-300": expected a time between`},
		{"bad dtype", head + "vllm,k,fp6,8,4096,1536,8,128,1,0.1\n", "f.csv:2: moe_dtype"},
		{"topk", head + "vllm,k,bfloat16,8,4096,1536,9,8,1,0.1\n", "f.csv:2: topk 9 exceeds"},
		{"tp", head + "vllm,k,bfloat16,8,4096,1536,8,128,7,0.1\n", "f.csv:2: inter_size 1536 does not divide"},
		{"no rows", head, "f.csv: no rows"},
	} {
		_, err := ReadMoECSV(strings.NewReader(c.body), "f.csv")
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want an error containing %q", c.name, err, c.want)
		}
	}
	rows, err := ReadMoECSV(strings.NewReader(head+"sglang,sglang_fused_moe_triton,fp8_block,64,7168,2048,8,256,2,1.5\n"), "f.csv")
	if err != nil || len(rows) != 1 || rows[0].Family() != SGLangTritonFP8 || rows[0].TimeS != 1.5e-3 || rows[0].Line != 2 {
		t.Errorf("one good row: %+v, %v", rows, err)
	}
}

// TestMoEFilesFamilies: every row of the shipped files belongs to a
// measured family; the H100 and H200 files measure Hopper's kernels, the
// B200 and GB200 files the same kernels (Blackwell's own and those it
// carries from Hopper), and every embedded kernel has rows.
func TestMoEFilesFamilies(t *testing.T) {
	t.Parallel()
	fams := func(rows []MoERow) []MoEKernel {
		var out []MoEKernel
		for _, r := range rows {
			f := r.Family()
			if f == "" {
				t.Fatalf("line %d: %s %s %s has no family", r.Line, r.Engine, r.Kernel, r.DType)
			}
			if !slices.Contains(out, f) {
				out = append(out, f)
			}
		}
		slices.Sort(out)
		return out
	}
	h1, h2 := fams(moeFile(t, "moe_h100.csv.gz")), fams(moeFile(t, "moe_h200.csv.gz"))
	b1, b2 := fams(moeFile(t, "moe_b200.csv.gz")), fams(moeFile(t, "moe_gb200.csv.gz"))
	if !slices.Equal(h1, h2) || !slices.Equal(b1, b2) {
		t.Errorf("families: H100 %v, H200 %v; B200 %v, GB200 %v", h1, h2, b1, b2)
	}
	for k := range ExpertKernels {
		if k == VLLMMarlinBlackwell {
			k = VLLMMarlin
		}
		if !slices.Contains(h1, k) && !slices.Contains(b1, k) {
			t.Errorf("%s: no row in the files", k)
		}
		if k.Blackwell() && slices.Contains(h1, k) {
			t.Errorf("%s: a Blackwell kernel in the H100 file", k)
		}
	}
}

// TestExpertFixedS checks the MoE kernels' fixed times: vLLM's and
// SGLang's measured ones, none for TensorRT-LLM and dense models, and a
// stronger GPU (hw.Dominates) never given a longer one, over the catalog.
func TestExpertFixedS(t *testing.T) {
	moe, _ := arch.Lookup("qwen3-30b-a3b")
	dense, _ := arch.Lookup("llama3.1-8b")
	gpu := func(n string) hw.GPU {
		g, err := hw.Lookup(n)
		if err != nil {
			t.Fatal(err)
		}
		return g
	}
	h100, b200, a100 := gpu("h100_sxm"), gpu("b200_sxm"), gpu("a100_sxm")
	for _, c := range []struct {
		engine string
		a      arch.Arch
		w      arch.Precision
		g      hw.GPU
		want   float64
		why    string
	}{
		{"vllm", moe, arch.FP8, h100, ExpertKernels[VLLMTritonFP8].LatencyS, "measured"},
		{"sglang", moe, arch.BF16, h100, ExpertKernels[SGLangTriton].LatencyS, "measured"},
		{"vllm", moe, arch.FP8, b200, ExpertKernels[VLLMTRTLLMGenFP8].LatencyS, "measured, below the H100's"},
		{"vllm", moe, arch.INT4, b200, ExpertKernels[VLLMMarlin].LatencyS, "Blackwell's Marlin (119 µs) capped at the H100's, which the B200 dominates"},
		{"vllm", moe, arch.FP8, a100, ExpertKernels[VLLMTritonFP8].LatencyS, "not measured on the A100 (no fp8 tensor cores): the greatest of the GPUs dominating it"},
		{"trtllm", moe, arch.FP8, h100, 0, "TensorRT-LLM fuses them"},
		{"vllm", dense, arch.BF16, h100, 0, "dense"},
		{"none", moe, arch.BF16, h100, 0, "no engine"},
	} {
		if got := ExpertFixedS(c.engine, c.a, c.w, c.g, Switches{}); got != c.want {
			t.Errorf("%s %s %v on %s: %.4g s, want %.4g s (%s)", c.engine, c.a.Name, c.w, c.g.Name, got, c.want, c.why)
		}
	}
	if ExpertKernels[VLLMMarlinBlackwell].LatencyS <= ExpertKernels[VLLMMarlin].LatencyS {
		t.Fatal("Blackwell's Marlin no longer slower than the H100's: the cap above tests nothing")
	}
	eachPath(t, func(e string, w arch.Precision, sw Switches, g hw.GPU) {
		if f := ExpertFixedS(e, moe, w, g, sw); f < 0 || f > MaxExpertLayerS {
			t.Errorf("%s %v on %s: %g s", e, w, g.Name, f)
		}
	}, func(e string, w arch.Precision, sw Switches, g, g2 hw.GPU) {
		if f, f2 := ExpertFixedS(e, moe, w, g, sw), ExpertFixedS(e, moe, w, g2, sw); f2 > f {
			t.Errorf("%s %v: %s (at least %s's specs) %.4g s > %.4g s", e, w, g2.Name, g.Name, f2, f)
		}
	})
}

// eachPath calls one for every engine, precision, Marlin switch and
// catalog GPU, and pair for each of those with a second GPU g2 that
// dominates g (hw.Dominates), failing t if there is no such pair.
func eachPath(t *testing.T, one func(e string, w arch.Precision, sw Switches, g hw.GPU), pair func(e string, w arch.Precision, sw Switches, g, g2 hw.GPU)) {
	t.Helper()
	gpus := hw.Builtin()
	var pairs int
	for _, e := range []string{"vllm", "sglang", "trtllm"} {
		for _, w := range []arch.Precision{arch.BF16, arch.FP8, arch.FP4, arch.INT4} {
			for _, marlin := range []bool{false, true} {
				sw := Switches{MarlinMXFP4: marlin}
				for _, g := range gpus {
					one(e, w, sw, g)
					for _, g2 := range gpus {
						if g2.Name != g.Name && hw.Dominates(g2, g) {
							pairs++
							pair(e, w, sw, g, g2)
						}
					}
				}
			}
		}
	}
	if pairs == 0 {
		t.Fatal("no dominating pairs")
	}
}

// TestExpertCompute: a kernel keeps its fitted fraction on the generation
// it is fitted on; one carried elsewhere is no faster than on the fitted
// GPUs that dominate it, and over every engine, precision and dominating
// pair the dominating GPU's routed-expert throughput is at least the
// other's.
func TestExpertCompute(t *testing.T) {
	t.Parallel()
	moe := lookupArch(t, "qwen3-235b-a22b")
	h100, b200, mi := lookupGPU(t, "h100_sxm"), lookupGPU(t, "b200_sxm"), lookupGPU(t, "mi300x")
	if got, want := ExpertCompute("sglang", moe, arch.FP8, h100, Switches{}), ExpertKernels[SGLangTritonFP8].Compute; got != want {
		t.Errorf("SGLang fp8 on the H100: %g, want its fitted %g", got, want)
	}
	if got, want := ExpertCompute("sglang", moe, arch.FP8, b200, Switches{}), ExpertKernels[SGLangTRTLLMGenFP8].Compute; got != want {
		t.Errorf("SGLang fp8 on the B200: %g, want its fitted %g", got, want)
	}
	// The MI300X carries Hopper's Triton fp8 kernel; at its fitted
	// fraction it would beat the B200, which dominates it.
	carried := ExpertKernels[SGLangTritonFP8].Compute * mi.PeakFLOPs(arch.FP8)
	b := ExpertCompute("sglang", moe, arch.FP8, b200, Switches{}) * b200.PeakFLOPs(arch.FP8)
	if !(carried > b) {
		t.Fatalf("the carried kernel (%.3g FLOP/s) no longer beats the B200's (%.3g): the cap below tests nothing", carried, b)
	}
	if got := ExpertCompute("sglang", moe, arch.FP8, mi, Switches{}) * mi.PeakFLOPs(arch.FP8); math.Abs(got/b-1) > 1e-9 {
		t.Errorf("SGLang fp8 on the MI300X: %.4g FLOP/s, want the B200's %.4g", got, b)
	}
	if ExpertCompute("vllm", lookupArch(t, "llama3.1-70b"), arch.BF16, h100, Switches{}) != 0 {
		t.Error("a dense model has an expert fraction")
	}
	eachPath(t, func(e string, w arch.Precision, sw Switches, g hw.GPU) {
		if c := ExpertCompute(e, moe, w, g, sw); c < 0 || c > MaxComputeFraction {
			t.Errorf("%s %v on %s: fraction %g", e, w, g.Name, c)
		}
	}, func(e string, w arch.Precision, sw Switches, g, g2 hw.GPU) {
		c, c2 := ExpertCompute(e, moe, w, g, sw), ExpertCompute(e, moe, w, g2, sw)
		if c > 0 && c2 > 0 && c2*g2.PeakFLOPs(w) < c*g.PeakFLOPs(w)*(1-1e-12) {
			t.Errorf("%s %v: %s (at least %s's specs) runs routed experts at %.4g FLOP/s < %.4g", e, w, g2.Name, g.Name, c2*g2.PeakFLOPs(w), c*g.PeakFLOPs(w))
		}
	})
}
