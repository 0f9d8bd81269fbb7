package kernel

import (
	"math"
	"path/filepath"
	"strings"
	"testing"

	"splitplan/arch"
)

func gdnFile(t *testing.T, name string) []GDNRow {
	t.Helper()
	rows, err := ReadGDNFile(filepath.Join("..", "..", "..", "data", "gdn-kernels", name))
	if err != nil {
		t.Fatal(err)
	}
	return rows
}

// TestGDNIsTheFit: the embedded Gated DeltaNet constants are the fit on
// the H100's measurements (go generate writes them), and carried by the
// spec sheet they predict the H200's, B200's and GB200's within the
// generated comment's figures.
func TestGDNIsTheFit(t *testing.T) {
	t.Parallel()
	h100 := lookupGPU(t, "h100_sxm")
	rows := gdnFile(t, "gdn_h100.csv.gz")
	got, err := FitGDN(h100, rows)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name      string
		got, want float64
	}{{"prefill_latency_s", got.PrefillLatencyS, GDN.PrefillLatencyS}, {"prefill_token_s", got.PrefillTokenS, GDN.PrefillTokenS},
		{"prefill_compute", got.PrefillCompute, GDN.PrefillCompute}, {"decode_latency_s", got.DecodeLatencyS, GDN.DecodeLatencyS},
		{"decode_memory", got.DecodeMemory, GDN.DecodeMemory}} {
		if math.Abs(c.got/c.want-1) > 1e-4 {
			t.Errorf("%s: fit %g, embedded %g: run go generate ./evaluator/perf/kernel", c.name, c.got, c.want)
		}
	}
	for _, n := range []string{"h100", "h200", "b200", "gb200"} {
		v := ValidateGDN(GDN, lookupGPU(t, n), gdnFile(t, "gdn_"+n+".csv.gz"))
		if v.Prefill.N < 4000 || v.Decode.N < 400 || v.Prefill.Median > 30 || v.Decode.Median > 20 {
			t.Errorf("%s: prompts %+v, decodes %+v: want medians within 30%% and 20%% over the whole file", n, v.Prefill, v.Decode)
		}
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
// GDN's, to its prompts and decodes, its value heads shared over the TP
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
		got, want := prompt(with, tok)-prompt(without, tok), n*GDN.PrefillTime(g, float64(tok), hv, dk, dv, 1)
		if math.Abs(got/want-1) > 1e-9 {
			t.Errorf("%d prompt tokens: the layers add %.4g s, want %.4g s", tok, got, want)
		}
	}
	for _, b := range []int{1, 64, 256} {
		got, want := decode(with, b)-decode(without, b), n*GDN.DecodeTime(g, float64(b), hv, dk, dv)
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
