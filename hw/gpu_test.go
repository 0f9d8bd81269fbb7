package hw

import (
	"math"
	"strings"
	"testing"

	"splitplan/arch"
)

func TestLookup(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"a100": "a100_sxm", "A100-80GB": "a100_sxm", "a100_sxm": "a100_sxm", "NVIDIA A100-SXM4-80GB": "a100_sxm",
		"h100": "h100_sxm", "h100-80gb": "h100_sxm", "H100_SXM": "h100_sxm", "h200": "h200_sxm", "h200-141gb": "h200_sxm",
		"NVIDIA H100 80GB HBM3": "h100_sxm", "NVIDIA H200": "h200_sxm", "b200": "b200_sxm", "b300": "b300_sxm", "gb200": "gb200", "gb300": "gb300", "l40s": "l40s", "MI300X": "mi300x",
	} {
		g, err := Lookup(in)
		if err != nil {
			t.Errorf("Lookup(%q): %v", in, err)
			continue
		}
		if g.Name != want {
			t.Errorf("Lookup(%q) = %s, want %s", in, g.Name, want)
		}
	}
	for _, bad := range []string{"h100-80gb-pcap", "tpu-v5", ""} {
		_, err := Lookup(bad)
		if err == nil || !strings.Contains(err.Error(), "h100_sxm") {
			t.Errorf("Lookup(%q): error %v should list the built-ins", bad, err)
		}
	}
}

func TestBuiltin(t *testing.T) {
	t.Parallel()
	names := Names()
	if len(names) != 9 {
		t.Errorf("got %d GPUs, want the 9 of gpus.csv: %v", len(names), names)
	}
	for i := 1; i < len(names); i++ {
		if names[i-1] >= names[i] {
			t.Errorf("Names not sorted and unique: %v", names)
		}
	}
	for _, g := range Builtin() {
		if err := g.Validate(); err != nil {
			t.Error(err)
		}
	}
	h, _ := Lookup("h100")
	if h.MemoryBytes() != 80*(1<<30) || h.MemoryBytesPerS() != 3.35e12 {
		t.Errorf("h100 memory %v B, %v B/s", h.MemoryBytes(), h.MemoryBytesPerS())
	}
}

func TestPeakFLOPs(t *testing.T) {
	t.Parallel()
	a, _ := Lookup("a100")
	h, _ := Lookup("h100")
	b, _ := Lookup("b200")
	for _, c := range []struct {
		g    GPU
		p    arch.Precision
		want float64
	}{
		{a, arch.BF16, 312e12}, {a, arch.FP8, 312e12}, {a, arch.FP4, 312e12}, {a, arch.INT4, 312e12},
		{h, arch.BF16, 989e12}, {h, arch.FP8, 1978e12}, {h, arch.FP4, 989e12}, {h, arch.INT4, 989e12},
		{b, arch.FP4, 9000e12}, {b, arch.FP8, 4500e12},
	} {
		if got := c.g.PeakFLOPs(c.p); math.Abs(got-c.want) > 1 {
			t.Errorf("%s PeakFLOPs(%v) = %v, want %v", c.g.Name, c.p, got, c.want)
		}
	}
}

func TestValidate(t *testing.T) {
	t.Parallel()
	h, _ := Lookup("h100")
	for _, c := range []struct {
		mut  func(g *GPU)
		want string
	}{
		{func(g *GPU) { g.Name = " " }, "name"},
		{func(g *GPU) { g.MemoryGiB = 0 }, "memory_gib"},
		{func(g *GPU) { g.MemoryBWTBs = math.NaN() }, "memory_bw_tb_s"},
		{func(g *GPU) { g.FP8TFLOPs = -1 }, "fp8_tflops"},
		{func(g *GPU) { g.IntraNodeGBs = math.Inf(1) }, "intra_node_gb_s"},
		{func(g *GPU) { g.GPUsPerNode = 0 }, "gpus_per_node"},
	} {
		g := h
		c.mut(&g)
		if err := g.Validate(); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Validate: error %v, want one naming %s", err, c.want)
		}
	}
}
