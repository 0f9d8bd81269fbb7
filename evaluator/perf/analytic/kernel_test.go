package analytic

import (
	"testing"

	"splitplan/arch"
	"splitplan/hw"
)

func kernelModel(t *testing.T, model, gpu string, tp int, eff Efficiency) *Model {
	t.Helper()
	a, err := arch.Lookup(model)
	if err != nil {
		t.Fatal(err)
	}
	g, err := hw.Lookup(gpu)
	if err != nil {
		t.Fatal(err)
	}
	eff.Kernels = true
	m, err := New(Config{Arch: a, GPU: g, TP: tp, Weights: arch.BF16, KV: arch.BF16, Eff: eff})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// TestKernelCrossGPU checks the carry rule's consequences named by issue
// 28: H200 prefill (2,048 tokens and more: compute-bound) within 5% of
// H100's, H200 decode faster by less than
// the 1.43× bandwidth ratio, B300 never slower than B200.
func TestKernelCrossGPU(t *testing.T) {
	for _, model := range []string{"llama3.1-8b", "llama3.1-70b"} {
		tp := 1
		if model == "llama3.1-70b" {
			tp = 4
		}
		h100 := kernelModel(t, model, "h100_sxm", tp, Efficiency{})
		h200 := kernelModel(t, model, "h200_sxm", tp, Efficiency{})
		b200 := kernelModel(t, model, "b200_sxm", tp, Efficiency{})
		b300 := kernelModel(t, model, "b300_sxm", tp, Efficiency{})
		for _, L := range []int{2048, 8192, 16384} {
			r := h100.PromptChunkTime(L, 0) / h200.PromptChunkTime(L, 0)
			if r < 1 || r > 1.05 {
				t.Errorf("%s prefill %d: H100/H200 = %.3f, want in [1, 1.05]", model, L, r)
			}
		}
		for _, b := range []int{1, 16, 64} {
			for _, ctx := range []int64{2048, 8192} {
				th1, _ := h100.DecodeTime(b, int64(b)*ctx)
				th2, _ := h200.DecodeTime(b, int64(b)*ctx)
				if r := th1 / th2; r <= 1 || r >= 4.8/3.35 {
					t.Errorf("%s decode %d@%d: H100/H200 = %.3f, want in (1, 1.43)", model, b, ctx, r)
				}
				tb2, _ := b200.DecodeTime(b, int64(b)*ctx)
				tb3, _ := b300.DecodeTime(b, int64(b)*ctx)
				if tb3 > tb2*(1+1e-12) {
					t.Errorf("%s decode %d@%d: B300 %.4g s slower than B200 %.4g s", model, b, ctx, tb3, tb2)
				}
			}
		}
	}
}

// TestKernelA100 checks issue 28's A100 targets for the kernel layer
// alone (the engine terms come on top, see measured): Llama-3.1-8B TP 1
// decode of one request at 2,048 context within 1.6× the bandwidth floor
// (weights and KV at spec bandwidth), and 32 requests at 4,096 context
// below 26 ms.
func TestKernelA100(t *testing.T) {
	m := kernelModel(t, "llama3.1-8b", "a100_sxm", 1, Efficiency{})
	a := m.Config().Arch
	g := m.Config().GPU
	floor := (float64(a.WeightBytes(arch.BF16)) + float64(a.KVBytesForContext(arch.BF16, 2048))) / g.MemoryBytesPerS()
	one, _ := m.DecodeTime(1, 2048)
	b32, _ := m.DecodeTime(32, 32*4096)
	t.Logf("A100 8B: 1@2048 %.2f ms (floor %.2f ms, %.2f×); 32@4096 %.2f ms", one*1e3, floor*1e3, one/floor, b32*1e3)
	if one > 1.6*floor {
		t.Errorf("1@2048: %.2f ms > 1.6 × %.2f ms", one*1e3, floor*1e3)
	}
	if b32 > 26e-3 {
		t.Errorf("32@4096: %.2f ms > 26 ms", b32*1e3)
	}
}
