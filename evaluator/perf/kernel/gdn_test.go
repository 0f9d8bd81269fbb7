package kernel

import (
	"math"
	"strings"
	"testing"

	"splitplan/arch"
	"splitplan/hw"
)

// gdnFile reads one of the repository's Gated DeltaNet measurement files.
func gdnFile(t *testing.T, name string) []GDNRow {
	t.Helper()
	return dataFile(t, ReadGDNFile, "gdn-kernels", name)
}

// TestGDNIsTheFit: the embedded Gated DeltaNet constants are the fits on
// the H100's measurements (GDN) and the B200's (GDNBlackwell) that go
// generate writes, and the kernel layer's times (GDNTime) predict the
// H200's and GB200's, which no fit sees, within the generated comment's
// figures.
func TestGDNIsTheFit(t *testing.T) {
	t.Parallel()
	for _, f := range []struct {
		gpu, file string
		embedded  GDNParams
	}{{"h100_sxm", "gdn_h100.csv.gz", GDN}, {"b200_sxm", "gdn_b200.csv.gz", GDNBlackwell}} {
		got, err := FitGDN(lookupGPU(t, f.gpu), gdnFile(t, f.file))
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range []struct {
			name      string
			got, want float64
		}{{"prefill_latency_s", got.PrefillLatencyS, f.embedded.PrefillLatencyS}, {"prefill_token_s", got.PrefillTokenS, f.embedded.PrefillTokenS},
			{"prefill_compute", got.PrefillCompute, f.embedded.PrefillCompute}, {"decode_latency_s", got.DecodeLatencyS, f.embedded.DecodeLatencyS},
			{"decode_memory", got.DecodeMemory, f.embedded.DecodeMemory}} {
			if math.Abs(c.got/c.want-1) > 1e-4 {
				t.Errorf("%s %s: fit %g, embedded %g: run go generate ./evaluator/perf/kernel", f.gpu, c.name, c.got, c.want)
			}
		}
	}
	// Held out: the GB200 by Blackwell's constants (carried by its peak
	// and bandwidth), the H200 by Hopper's. Before Blackwell had its own,
	// the H100's carried put the GB200 at 26.3% / 16.9%.
	for _, c := range []struct {
		n              string
		prefill, decod float64
	}{{"h100", 20, 12}, {"h200", 27, 13}, {"b200", 18, 8}, {"gb200", 18, 8}} {
		v := ValidateGDN(lookupGPU(t, c.n), gdnFile(t, "gdn_"+c.n+".csv.gz"))
		if v.Prefill.N < 4000 || v.Decode.N < 400 || v.Prefill.Median > c.prefill || v.Decode.Median > c.decod {
			t.Errorf("%s: prompts %+v, decodes %+v: want medians within %v%% and %v%% over the whole file", c.n, v.Prefill, v.Decode, c.prefill, c.decod)
		}
	}
}

// TestGDNDominance: a GPU with at least another's peaks and bandwidth
// (hw.KernelDominates, implied by hw.Dominates) never takes longer
// over a Gated DeltaNet layer, prompt or decode, though
// the two generations' constants are fitted apart and the B200's
// measured kernels are slower than the H200's on many shapes; and each
// GPU's time is its own generation's where no GPU it dominates is faster.
func TestGDNDominance(t *testing.T) {
	t.Parallel()
	gpus := hw.Builtin()
	var shapes []GDNRow
	for _, heads := range []int{4, 16, 64} {
		for _, tok := range []int{1, 64, 1024, 8192, 65536} {
			shapes = append(shapes, GDNRow{Prefill: true, Batch: 1, Tokens: tok, KHeads: heads / 4, KDim: 128, VHeads: heads, VDim: 128})
		}
		for _, b := range []int{1, 8, 64, 512} {
			shapes = append(shapes, GDNRow{Batch: b, Tokens: b, KHeads: heads / 4, KDim: 128, VHeads: heads, VDim: 128})
		}
	}
	bad, own := 0, 0
	for _, a := range gpus {
		for _, r := range shapes {
			ta := GDNTime(a, r)
			if ta == GDNOn(a).Time(a, r) {
				own++
			}
			for _, b := range gpus {
				if hw.KernelDominates(a, b) { // gdnPeers' rule; hw.Dominates implies it
					if tb := GDNTime(b, r); ta > tb*(1+1e-12) {
						bad++
						if bad <= 5 {
							t.Errorf("%s dominates %s but takes %.4g s against %.4g s on %+v", a.Name, b.Name, ta, tb, r)
						}
					}
				}
			}
		}
	}
	if bad > 0 {
		t.Errorf("%d violations", bad)
	}
	if own == 0 {
		t.Error("no GPU ever takes its own generation's time")
	}
}

// TestReadGDN: a layer's two kernels are summed; a shape missing one is
// left out; bad values name the file and line.
func TestReadGDN(t *testing.T) {
	t.Parallel()
	head := strings.Join(gdnColumns, ",") + "\n"
	row := func(phase, kernel, batch, ms string) string {
		return phase + "," + kernel + "," + batch + ",1," + batch + ",2,128,8,128,m," + ms + "\n"
	}
	rows, err := ReadGDNCSV(strings.NewReader(head+row("context", "conv", "4", "0.01")+row("context", "chunk", "4", "0.04")+
		row("generation", "update", "4", "0.005")), "x.csv")
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 1 || !rows[0].Prefill || math.Abs(rows[0].TimeS-50e-6) > 1e-12 || rows[0].VHeads != 8 {
		t.Errorf("rows %+v: want one prompt layer of 50 µs, 8 value heads", rows)
	}
	for _, c := range []struct{ src, want string }{
		{head + row("prefill", "conv", "4", "0.01"), "x.csv:2: phase"},
		{head + row("context", "conv", "0", "0.01"), "x.csv:2: batch_size"},
		{head + row("context", "conv", "4", "-1"), "x.csv:2: latency_ms"},
		{head + row("context", "a", "4", "0.01") + row("context", "b", "4", "0.01") + row("context", "c", "4", "0.01"), "3 kernel rows"},
		{head + row("context", "a", "4", "0.01"), "no shape with both"},
		{"phase\n", "x.csv"},
	} {
		if _, err := ReadGDNCSV(strings.NewReader(c.src), "x.csv"); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: error %v, want %q", c.src, err, c.want)
		}
	}
}

// TestLayerGDN: a model's Gated DeltaNet layers add their kernels' time,
// GDNTime's, to its prompts and decodes, its value heads shared over the TP
// group; without their heads the layers cost only their projections.
func TestLayerGDN(t *testing.T) {
	t.Parallel()
	a := lookupArch(t, "qwen3.5-397b-a17b")
	if a.LinearValueHeads == 0 {
		t.Fatal("the built-in Qwen3.5 has no linear-attention heads")
	}
	bare := a
	bare.LinearKeyHeads, bare.LinearValueHeads, bare.LinearKeyHeadDim, bare.LinearValueHeadDim = 0, 0, 0, 0
	g := lookupGPU(t, "b200_sxm")
	const tp = 8
	with, err := New(Default, a, g, tp, arch.BF16, arch.FP8)
	if err != nil {
		t.Fatal(err)
	}
	without, err := New(Default, bare, g, tp, arch.BF16, arch.FP8)
	if err != nil {
		t.Fatal(err)
	}
	n, hv := float64(a.LinearAttentionLayers), float64(a.LinearValueHeads/tp)
	dk, dv := float64(a.LinearKeyHeadDim), float64(a.LinearValueHeadDim)
	prompt := func(l *Layer, tok int) float64 { return l.Time(tok, 1, float64(tok)*float64(tok+1)/2, 0, 0, 1, nil) }
	decode := func(l *Layer, b int) float64 { return l.Time(0, 0, 0, b, float64(b)*4096, 1, nil) }
	for _, tok := range []int{1, 1024, 8192} {
		got, want := prompt(with, tok)-prompt(without, tok), n*GDNTime(g, GDNRow{Prefill: true, Batch: 1, Tokens: tok, KDim: int(dk), VHeads: int(hv), VDim: int(dv)})
		if math.Abs(got/want-1) > 1e-9 {
			t.Errorf("%d prompt tokens: the layers add %.4g s, want %.4g s", tok, got, want)
		}
	}
	for _, b := range []int{1, 64, 256} {
		got, want := decode(with, b)-decode(without, b), n*GDNTime(g, GDNRow{Batch: b, Tokens: b, KDim: int(dk), VHeads: int(hv), VDim: int(dv)})
		if math.Abs(got/want-1) > 1e-9 {
			t.Errorf("a decode of %d: the layers add %.4g s, want %.4g s", b, got, want)
		}
	}
	var bd Breakdown
	with.Time(0, 0, 0, 256, 256*4096, 1, &bd)
	if bd.Total() <= 0 || math.Abs(bd.Total()/decode(with, 256)-1) > 1e-12 {
		t.Errorf("breakdown %+v does not add up to the time %g", bd, decode(with, 256))
	}
}

// TestGDNLayerTermsCovered: the kernel layer keeps only the peers' term
// sets that can be the least (gdnLayerTerms), and on every GPU of the
// catalog they give exactly the least of all its peers' times.
func TestGDNLayerTermsCovered(t *testing.T) {
	t.Parallel()
	const n, hv, dk, dv = 45, 8, 128, 128
	fewer := false
	for _, g := range hw.Builtin() {
		kept := gdnLayerTerms(g, n, hv, dk, dv)
		peers := gdnPeers(g)
		fewer = fewer || len(kept) < len(peers)
		for _, pt := range []float64{1, 64, 1024, 8192, 65536} {
			for _, inv := range []float64{1, 1.25} {
				want := math.Inf(1)
				for _, h := range peers {
					s, _ := GDNOn(h).layerTerms(h, n, hv, dk, dv).prompt(pt, inv)
					want = min(want, s)
				}
				got := math.Inf(1)
				for _, k := range kept {
					s, _ := k.prompt(pt, inv)
					got = min(got, s)
				}
				if got != want {
					t.Errorf("%s: a prompt of %v tokens takes %v s over the kept sets, %v s over every peer", g.Name, pt, got, want)
				}
			}
		}
		for _, d := range []float64{1, 8, 64, 512} {
			want, got := math.Inf(1), math.Inf(1)
			for _, h := range peers {
				want = min(want, GDNOn(h).layerTerms(h, n, hv, dk, dv).decode(d))
			}
			for _, k := range kept {
				got = min(got, k.decode(d))
			}
			if got != want {
				t.Errorf("%s: a decode of %v takes %v s over the kept sets, %v s over every peer", g.Name, d, got, want)
			}
		}
	}
	if !fewer {
		t.Error("no GPU's peers were ever covered: nothing pruned")
	}
}
