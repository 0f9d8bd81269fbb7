package hw

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"splitplan/arch"
)

// GPU is one accelerator's spec sheet. Throughputs are dense (no
// sparsity) peaks; bandwidths are per GPU, one direction.
type GPU struct {
	// Name is the canonical name, e.g. "h100_sxm".
	Name string `toml:"name"`
	// MemoryGiB is the HBM capacity in GiB; MemoryBWTBs its bandwidth in
	// TB/s (10^12 bytes per second).
	MemoryGiB   float64 `toml:"memory_gib"`
	MemoryBWTBs float64 `toml:"memory_bw_tb_s"`
	// BF16TFLOPs, FP8TFLOPs and FP4TFLOPs are the dense tensor-core peaks
	// in TFLOP/s (10^12 FLOP per second); 0 means the GPU lacks the format.
	BF16TFLOPs float64 `toml:"bf16_tflops"`
	FP8TFLOPs  float64 `toml:"fp8_tflops"`
	FP4TFLOPs  float64 `toml:"fp4_tflops"`
	// TDPW is the board power in watts.
	TDPW float64 `toml:"tdp_w"`
	// GPUsPerNode is the GPUs sharing the fast intra-node link.
	GPUsPerNode int `toml:"gpus_per_node"`
	// IntraNodeGBs and InterNodeGBs are the per-GPU one-direction link
	// bandwidths in GB/s (10^9 bytes per second) inside a node (NVLink,
	// Infinity Fabric or PCIe) and between nodes.
	IntraNodeGBs float64 `toml:"intra_node_gb_s"`
	InterNodeGBs float64 `toml:"inter_node_gb_s"`
	// Source says where the figures come from.
	Source string `toml:"source"`
}

// MemoryBytes returns the HBM capacity in bytes (GiB × 2^30).
func (g GPU) MemoryBytes() float64 { return g.MemoryGiB * (1 << 30) }

// MemoryBytesPerS returns the HBM bandwidth in bytes per second.
func (g GPU) MemoryBytesPerS() float64 { return g.MemoryBWTBs * 1e12 }

// Tensor returns the precision the GPU's tensor cores multiply in for
// weights stored at p: p itself where the GPU has a peak for it, else
// BF16. INT4 weights and any narrow format the GPU lacks are dequantized
// in the kernel and multiplied in BF16 (weight-only quantization), which is
// what the engines run: Marlin and the W4A16 MXFP4/NVFP4 MoE kernels of
// vLLM, SGLang and TensorRT-LLM for FP4 weights on Hopper, Marlin W8A16
// for FP8 weights on an A100.
func (g GPU) Tensor(p arch.Precision) arch.Precision {
	switch p.Compute() {
	case arch.FP4:
		if g.FP4TFLOPs > 0 {
			return arch.FP4
		}
	case arch.FP8:
		if g.FP8TFLOPs > 0 {
			return arch.FP8
		}
	}
	return arch.BF16
}

// PeakFLOPs returns the dense peak in FLOP/s for matrix multiplications
// whose weights are stored at precision p: the peak of g.Tensor(p). FP4 on
// an H100 and FP8 on an A100 run at the BF16 rate.
func (g GPU) PeakFLOPs(p arch.Precision) float64 {
	switch g.Tensor(p) {
	case arch.FP4:
		return g.FP4TFLOPs * 1e12
	case arch.FP8:
		return g.FP8TFLOPs * 1e12
	}
	return g.BF16TFLOPs * 1e12
}

// Validate checks g: a name, positive finite memory, bandwidth, BF16 peak,
// power and link bandwidths, at least one GPU per node, FP8/FP4 peaks
// non-negative and finite.
func (g GPU) Validate() error {
	if strings.TrimSpace(g.Name) == "" {
		return fmt.Errorf("hw: GPU name: expected a name")
	}
	for _, f := range []struct {
		field string
		v     float64
		zero  bool
	}{
		{"memory_gib", g.MemoryGiB, false}, {"memory_bw_tb_s", g.MemoryBWTBs, false},
		{"bf16_tflops", g.BF16TFLOPs, false}, {"fp8_tflops", g.FP8TFLOPs, true},
		{"fp4_tflops", g.FP4TFLOPs, true}, {"tdp_w", g.TDPW, false},
		{"intra_node_gb_s", g.IntraNodeGBs, false}, {"inter_node_gb_s", g.InterNodeGBs, false},
	} {
		if math.IsNaN(f.v) || math.IsInf(f.v, 0) || f.v < 0 || (!f.zero && f.v == 0) {
			want := "a positive finite number"
			if f.zero {
				want = "a non-negative finite number (0: not supported)"
			}
			return fmt.Errorf("hw: GPU %s: %s: expected %s, got %v", g.Name, f.field, want, f.v)
		}
	}
	if g.GPUsPerNode < 1 {
		return fmt.Errorf("hw: GPU %s: gpus_per_node: expected a positive integer, got %d", g.Name, g.GPUsPerNode)
	}
	return nil
}

// Dominates reports whether a has at least b's dense peaks at every
// precision, HBM bandwidth, power limit and links (node size included):
// on the same work a must never be slower than b (issue 28's property,
// which the performance models' tests check over the catalog).
func Dominates(a, b GPU) bool {
	return KernelDominates(a, b) && a.TDPW >= b.TDPW && a.IntraNodeGBs >= b.IntraNodeGBs && a.InterNodeGBs >= b.InterNodeGBs &&
		a.GPUsPerNode >= b.GPUsPerNode
}

// KernelDominates reports whether a has at least b's dense peaks at every
// precision and HBM bandwidth: what a kernel running far from the power
// limit on one GPU depends on, so such a kernel is never slower on a
// (Dominates adds the power limit and the links a whole workload needs).
func KernelDominates(a, b GPU) bool {
	return a.BF16TFLOPs >= b.BF16TFLOPs && a.FP8TFLOPs >= b.FP8TFLOPs && a.FP4TFLOPs >= b.FP4TFLOPs &&
		a.MemoryBWTBs >= b.MemoryBWTBs
}

// Builtin returns the built-in GPUs (copies), sorted by name.
func Builtin() []GPU {
	all := slices.Clone(generatedGPUs)
	slices.SortFunc(all, func(a, b GPU) int { return strings.Compare(a.Name, b.Name) })
	return all
}

// Names returns the canonical names of the built-in GPUs, sorted.
func Names() []string {
	b := Builtin()
	names := make([]string, len(b))
	for i := range b {
		names[i] = b[i].Name
	}
	return names
}

// normalize reduces a GPU name to its family key: lower case, "_" and
// spaces as "-", a vendor prefix ("nvidia-", "amd-") and the form factor
// and memory suffixes (-sxm, -sxm4, -sxm5, -80gb, -141gb, ..., and the
// memory technology, -hbm3, -hbm3e) dropped. So "A100-80GB", "a100_sxm",
// "NVIDIA A100" all give "a100", and a driver's "NVIDIA H100 80GB HBM3"
// gives "h100".
func normalize(name string) string {
	s := strings.ToLower(strings.TrimSpace(name))
	s = strings.NewReplacer("_", "-", " ", "-").Replace(s)
	s = strings.TrimPrefix(strings.TrimPrefix(s, "nvidia-"), "amd-")
	parts := strings.Split(s, "-")
	kept := parts[:0]
	for i, p := range parts {
		if i > 0 && (strings.HasPrefix(p, "sxm") || strings.HasPrefix(p, "hbm") || (strings.HasSuffix(p, "gb") && isDigits(strings.TrimSuffix(p, "gb")))) {
			continue
		}
		kept = append(kept, p)
	}
	return strings.Join(kept, "-")
}

func isDigits(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		if r < '0' || r > '9' {
			return false
		}
	}
	return true
}

// Lookup returns the built-in GPU named name, case-insensitively, by its
// canonical name or an alias with the same family key: "a100",
// "a100-80gb", "A100_SXM", "h100", "h100-80gb", "h200", "b200", "b300",
// "gb200", "gb300", "l40s", "mi300x". (A power-capped "h100-80gb-pcap" is
// not an alias: its throughput differs.) The error lists the names that
// exist.
func Lookup(name string) (GPU, error) {
	want := normalize(name)
	for _, g := range Builtin() {
		if normalize(g.Name) == want {
			return g, nil
		}
	}
	return GPU{}, fmt.Errorf("hw: unknown GPU %q; built-in: %s", name, strings.Join(Names(), ", "))
}
