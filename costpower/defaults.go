package costpower

import (
	"fmt"
	"strings"

	"splitplan/arch"
	"splitplan/hw"
)

// Provisioned power of a DGX-A100 in kilowatts; the other machine types are
// given relative to it, as the Splitwise paper does.
const dgxA100PowerKW = 6.5

// nodePowerPerGPUPowerW is a node's provisioned power per watt of GPU board
// power: the paper's DGX-A100 (6.5 kW for 8 × 400 W) and DGX-H100 (1.75 ×
// 6.5 kW for 8 × 700 W) both give 2.03125; the newer nodes are assumed to
// keep that ratio (CPUs, NICs, fans and conversion losses).
const nodePowerPerGPUPowerW = dgxA100PowerKW * 1000 / (8 * 400)

// GPUPriceUSDPerH is the default price of one GPU-hour of each GPU spec
// (package hw) when a node of it is rented: the paper's figures for A100
// ($17.6/h per DGX-A100) and H100 ($38/h per DGX-H100), and for the newer
// GPUs splitplan's assumption of 2026 on-demand list prices, in the same
// proportion to the H100 as their public cloud prices. They are
// assumptions a planner should replace with their own quote: a plan's
// [[machine]] table sets cost_usd_per_h.
var GPUPriceUSDPerH = map[string]float64{
	"a100_sxm": 2.2,
	"h100_sxm": 4.75,
	"h200_sxm": 5.5,
	"b200_sxm": 7.5,
	"b300_sxm": 9.0,
	"gb200":    9.0,
	"gb300":    10.5,
	"l40s":     1.5,
	"mi300x":   4.0,
}

// GPUPriceSource says where each default price of GPUPriceUSDPerH comes
// from (optimize --price and a plan's [optimize] prices override them).
var GPUPriceSource = map[string]string{
	"a100_sxm": "Splitwise paper: $17.6/h per DGX-A100",
	"h100_sxm": "Splitwise paper: $38/h per DGX-H100",
	"h200_sxm": "assumption: 1.16× H100, the ratio of 2025 public on-demand GPU-hour prices",
	"b200_sxm": "assumption: 1.58× H100, the ratio of 2025 public on-demand GPU-hour prices",
	"b300_sxm": "assumption: 1.2× B200 (no public on-demand price in 2025)",
	"gb200":    "assumption: 1.2× B200, per GPU of a compute tray",
	"gb300":    "assumption: 1.17× GB200, per GPU of a compute tray",
	"l40s":     "assumption: 0.32× H100, the ratio of 2025 public on-demand GPU-hour prices",
	"mi300x":   "assumption: 0.84× H100, the ratio of 2025 public on-demand GPU-hour prices",
}

// newMachineTypes are the node types built from the GPU spec sheets beyond
// the paper's DGX-A100 and DGX-H100: name, spec and design alias.
var newMachineTypes = []struct{ name, spec, alias string }{
	{"DGX-H200", "h200_sxm", "H200"},
	{"DGX-B200", "b200_sxm", "B200"},
	{"DGX-B300", "b300_sxm", "B300"},
	{"GB200-NVL4", "gb200", "GB200"},
	{"GB300-NVL4", "gb300", "GB300"},
	{"L40S-8", "l40s", "L40S"},
	{"MI300X-8", "mi300x", "MI300X"},
}

// NodeOf is a machine type of one node of GPU spec g, serving one model
// replica over all its GPUs, with no profile (PerfHardware is the spec's
// name, which no shipped profile uses, so the analytic model answers).
func NodeOf(name string, g hw.GPU) Machine {
	linkGbps := g.InterNodeGBs * 8
	layerwise := 0.005 // the paper's H100 figure on 400 Gbps links
	if linkGbps >= 800 {
		layerwise = 0.004 // assumption: a faster link hides more of the transfer
	}
	return Machine{
		Name: name, GPU: g.Name, GPUs: g.GPUsPerNode, GPUMemoryGiB: g.MemoryGiB,
		GPUTFLOPs: g.BF16TFLOPs, HBMBandwidthGBs: g.MemoryBWTBs * 1000, GPUPowerW: g.TDPW, NVLinkGBs: g.IntraNodeGBs,
		LinkGbps: linkGbps, LayerwiseTransferS: layerwise,
		CostUSDPerH: GPUPriceUSDPerH[g.Name] * float64(g.GPUsPerNode),
		PowerKW:     nodePowerPerGPUPowerW * g.TDPW * float64(g.GPUsPerNode) / 1000, GPUPowerCap: 1,
		PerfHardware: g.Name, TensorParallel: g.GPUsPerNode, GPUSpec: g.Name,
	}
}

// ServedPrecision is the precision a built-in architecture is served in
// by default: the one its published checkpoint ships in (DeepSeek-V3/R1
// and Kimi-K2.5 in fp8, the NVFP4 and FP8 variants as named, gpt-oss's
// MXFP4 experts), bf16 otherwise.
func ServedPrecision(a arch.Arch) arch.Precision {
	hf := strings.ToLower(a.HFName)
	switch {
	case strings.Contains(hf, "nvfp4"), strings.HasPrefix(a.Name, "gpt-oss"), a.MXFP4:
		return arch.FP4
	case strings.Contains(hf, "fp8"), strings.HasPrefix(a.Name, "deepseek"), strings.HasPrefix(a.Name, "kimi"), a.FP8Checkpoint:
		return arch.FP8
	}
	return arch.BF16
}

// paperModel is m, one of the paper's models, with its bf16 weights from
// its architecture and reference, the reference simulator's figure for
// them (ReferenceWeightBytes).
func paperModel(m Model, reference int64) Model {
	a, err := arch.Lookup(m.Arch)
	if err != nil {
		panic(fmt.Sprintf("costpower: built-in model %s has no architecture: %v", m.Name, err))
	}
	m.WeightBytes = a.WeightBytes(arch.BF16)
	m.referenceWeights, m.referenceFor = reference, m.WeightBytes
	return m
}

// ModelOf is the catalog model of architecture a served at precision p:
// its weights at p and one token's KV-cache at p.KVCache(), its shape for
// the reference-compatible sizing.
func ModelOf(a arch.Arch, p arch.Precision) Model {
	return Model{Name: a.Name, Layers: a.Layers, Hidden: a.Hidden, Heads: a.Heads, KVHeads: a.KVHeads,
		WeightBytes: a.WeightBytes(p), KVBytes: a.KVBytesPerToken(p.KVCache()), Arch: a.Name, Precision: p.String(), shape: &a}
}

// Default returns the built-in catalog: SPEC §2's DGX-A100, DGX-H100 and
// the power-capped DGX-H100cap, Llama2-70B and BLOOM-176B, the two
// baselines and the four Splitwise designs; and beyond the paper a node of
// every other GPU of package hw (DGX-H200, DGX-B200, DGX-B300, GB200 and
// GB300 compute trays of 4, 8 × L40S, 8 × MI300X) with its baseline
// (searched only when named), and every architecture of package arch at
// the precision its checkpoint ships in. The result is a fresh copy.
func Default() *Catalog {
	a100 := Machine{
		Name: "DGX-A100", GPU: "A100-80GB", GPUs: 8, GPUMemoryGiB: 80,
		GPUTFLOPs: 312, HBMBandwidthGBs: 2039, GPUPowerW: 400, NVLinkGBs: 300,
		LinkGbps: 200, LayerwiseTransferS: 0.008,
		CostUSDPerH: 17.6, PowerKW: dgxA100PowerKW, GPUPowerCap: 1,
		PerfHardware: "a100-80gb", TensorParallel: 8, GPUSpec: "a100_sxm",
	}
	h100 := Machine{
		Name: "DGX-H100", GPU: "H100-80GB", GPUs: 8, GPUMemoryGiB: 80,
		GPUTFLOPs: 989, HBMBandwidthGBs: 3352, GPUPowerW: 700, NVLinkGBs: 450,
		LinkGbps: 400, LayerwiseTransferS: 0.005,
		CostUSDPerH: 38.0, PowerKW: 1.75 * dgxA100PowerKW, GPUPowerCap: 1,
		PerfHardware: "h100-80gb", TensorParallel: 8, GPUSpec: "h100_sxm",
	}
	h100cap := h100
	h100cap.Name = "DGX-H100cap"
	h100cap.PowerKW = 1.23 * dgxA100PowerKW
	h100cap.GPUPowerCap = 0.5
	h100cap.PerfHardware = "h100-80gb-pcap"
	h100cap.GPUSpec = "" // the analytic model does not model power caps
	c := &Catalog{
		Machines: []Machine{a100, h100, h100cap},
		Models: []Model{
			// The paper's models: their bf16 weights from the architecture
			// (BLOOM-176B's 176.2 B parameters are 352.5 GB), and the
			// reference simulator's figures (329 and 135 GB) for
			// --compat splitwise-sim's KV sizing.
			paperModel(Model{Name: "bloom-176b", Layers: 70, Hidden: 14336, Heads: 112, KVHeads: 112, Arch: "bloom-176b"}, 329e9),
			paperModel(Model{Name: "llama2-70b", Layers: 80, Hidden: 8192, Heads: 64, KVHeads: 8, Arch: "llama2-70b"}, 135e9),
		},
		Designs: []Design{
			{Name: "Baseline-A100", Aliases: []string{"A100"}, Kind: KindBaseline, Machine: "DGX-A100"},
			{Name: "Baseline-H100", Aliases: []string{"H100"}, Kind: KindBaseline, Machine: "DGX-H100"},
			{Name: "Splitwise-AA", Aliases: []string{"AA"}, Kind: KindSplitwise, Prompt: "DGX-A100", Token: "DGX-A100"},
			{Name: "Splitwise-HH", Aliases: []string{"HH"}, Kind: KindSplitwise, Prompt: "DGX-H100", Token: "DGX-H100"},
			{Name: "Splitwise-HA", Aliases: []string{"HA"}, Kind: KindSplitwise, Prompt: "DGX-H100", Token: "DGX-A100"},
			{Name: "Splitwise-HHcap", Aliases: []string{"HHcap"}, Kind: KindSplitwise, Prompt: "DGX-H100", Token: "DGX-H100cap"},
		},
	}
	for _, t := range newMachineTypes {
		g, err := hw.Lookup(t.spec)
		if err != nil {
			panic("costpower: built-in machine type " + t.name + ": " + err.Error()) // the tables are generated together
		}
		c.Machines = append(c.Machines, NodeOf(t.name, g))
		c.Designs = append(c.Designs, Design{Name: "Baseline-" + t.alias, Aliases: []string{t.alias}, Kind: KindBaseline, Machine: t.name, Extra: true})
	}
	for _, a := range arch.Builtin() {
		if _, err := c.Model(a.Name); err == nil {
			continue
		}
		c.Models = append(c.Models, ModelOf(a, ServedPrecision(a)))
	}
	return c
}
