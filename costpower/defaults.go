package costpower

// Provisioned power of a DGX-A100 in kilowatts; the other machine types are
// given relative to it, as the Splitwise paper does.
const dgxA100PowerKW = 6.5

// Default returns the built-in catalog of SPEC §2: DGX-A100, DGX-H100 and
// the power-capped DGX-H100cap; Llama2-70B and BLOOM-176B; the two
// baselines and the four Splitwise designs. The result is a fresh copy.
func Default() *Catalog {
	a100 := Machine{
		Name: "DGX-A100", GPU: "A100-80GB", GPUs: 8, GPUMemoryGiB: 80,
		GPUTFLOPs: 19.5, HBMBandwidthGBs: 2039, GPUPowerW: 400, NVLinkGBs: 50,
		LinkGbps: 200, LayerwiseTransferS: 0.008,
		CostUSDPerH: 17.6, PowerKW: dgxA100PowerKW, GPUPowerCap: 1,
		PerfHardware: "a100-80gb", TensorParallel: 8,
	}
	h100 := Machine{
		Name: "DGX-H100", GPU: "H100-80GB", GPUs: 8, GPUMemoryGiB: 80,
		GPUTFLOPs: 66.9, HBMBandwidthGBs: 3352, GPUPowerW: 700, NVLinkGBs: 100,
		LinkGbps: 400, LayerwiseTransferS: 0.005,
		CostUSDPerH: 38.0, PowerKW: 1.75 * dgxA100PowerKW, GPUPowerCap: 1,
		PerfHardware: "h100-80gb", TensorParallel: 8,
	}
	h100cap := h100
	h100cap.Name = "DGX-H100cap"
	h100cap.PowerKW = 1.23 * dgxA100PowerKW
	h100cap.GPUPowerCap = 0.5
	h100cap.PerfHardware = "h100-80gb-pcap"
	return &Catalog{
		Machines: []Machine{a100, h100, h100cap},
		Models: []Model{
			{Name: "bloom-176b", Layers: 70, Hidden: 14336, Heads: 112, KVHeads: 112, WeightBytes: 329e9},
			{Name: "llama2-70b", Layers: 80, Hidden: 8192, Heads: 64, KVHeads: 8, WeightBytes: 135e9},
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
}
