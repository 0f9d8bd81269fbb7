package costpower

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"splitplan/arch"
	"splitplan/hw"
	"splitplan/memory"
)

// GiB is 2^30 bytes.
const GiB = 1 << 30

// Machine is one DGX-class server type: its GPUs, its links to other
// machines and what it costs to run.
type Machine struct {
	// Name identifies the type, e.g. "DGX-A100".
	Name string `toml:"name"`
	// GPU names the accelerator, e.g. "A100-80GB".
	GPU string `toml:"gpu"`
	// GPUs is the number of GPUs in the machine (one model replica with
	// tensor parallelism over them).
	GPUs int `toml:"gpus"`
	// GPUMemoryGiB is the HBM of one GPU in GiB.
	GPUMemoryGiB float64 `toml:"gpu_memory_gib"`
	// GPUTFLOPs is one GPU's dense bf16 tensor-core peak in TFLOP/s
	// (shown by catalog; the analytic model reads its spec sheet).
	GPUTFLOPs float64 `toml:"gpu_tflops"`
	// HBMBandwidthGBs is one GPU's memory bandwidth in GB/s.
	HBMBandwidthGBs float64 `toml:"hbm_bandwidth_gbs"`
	// GPUPowerW is one GPU's rated power in watts.
	GPUPowerW float64 `toml:"gpu_power_w"`
	// NVLinkGBs is one GPU's NVLink (or, without NVLink, PCIe) bandwidth
	// to the others of its node in GB/s, one way.
	NVLinkGBs float64 `toml:"nvlink_gbs"`
	// LinkGbps is the InfiniBand bandwidth to another machine in Gbit/s;
	// between two machines the slower end wins.
	LinkGbps float64 `toml:"link_gbps"`
	// LayerwiseTransferS is the visible cost in seconds of a layer-wise
	// (overlapped) KV-cache transfer over this machine's link.
	LayerwiseTransferS float64 `toml:"layerwise_transfer_s"`
	// CostUSDPerH is the cost of running the machine, dollars per hour.
	CostUSDPerH float64 `toml:"cost_usd_per_h"`
	// PowerKW is the provisioned power of the machine in kilowatts.
	PowerKW float64 `toml:"power_kw"`
	// GPUPowerCap is the fraction of rated GPU power the GPUs are capped
	// at (1 when uncapped).
	GPUPowerCap float64 `toml:"gpu_power_cap"`
	// PerfPowerCap is the cap the performance profile of PerfHardware was
	// measured at, when it differs from GPUPowerCap (a capped variant made
	// by WithCap); 0 means GPUPowerCap.
	PerfPowerCap float64 `toml:"perf_power_cap,omitempty"`
	// PurchaseUSD is the machine's purchase price in dollars for the
	// ownership goal (0: its GPUs × GPUPurchaseUSD).
	PurchaseUSD float64 `toml:"purchase_usd,omitempty"`
	// PerfHardware is the hardware key of the machine's performance
	// profile, e.g. "a100-80gb".
	PerfHardware string `toml:"perf_hardware"`
	// TensorParallel is the tensor-parallel degree of a model replica: a
	// divisor of GPUs, the machine serving GPUs/TensorParallel replicas
	// (normally GPUs: one replica).
	TensorParallel int `toml:"tensor_parallel"`
	// GPUSpec names the GPU's spec sheet (package hw, e.g. "h200_sxm")
	// that the analytic performance model uses for a model with no
	// profile on PerfHardware ("" when there is none).
	GPUSpec string `toml:"gpu_spec"`
	// NodeGPUs, when positive, says the machine is one model replica (a
	// slice of TensorParallel GPUs) of a node of NodeGPUs GPUs, as the
	// simulator runs it (see Instance); 0 for a whole node.
	NodeGPUs int `toml:"node_gpus"`
	// GPUMemoryUtilization is the share of each GPU's memory the serving
	// engine may use (vLLM's gpu_memory_utilization); 0 means
	// memory.DefaultUtilization (0.9).
	GPUMemoryUtilization float64 `toml:"gpu_memory_utilization,omitempty"`
}

// checkSpecFigures refuses figures the performance model would not read:
// a machine priced by a GPU spec sheet (GPUSpec) takes its compute peak
// and bandwidth from the sheet, so a gpu_tflops or hbm_bandwidth_gbs
// other than the sheet's (beyond rounding) would show in the catalog and
// change nothing (gpu_power_w is read: the power model's board power).
func (m Machine) checkSpecFigures() error {
	if m.GPUSpec == "" {
		return nil
	}
	g, err := hw.Lookup(m.GPUSpec)
	if err != nil {
		return fmt.Errorf("gpu_spec: %w", err)
	}
	for _, f := range []struct {
		key       string
		got, want float64
	}{{"gpu_tflops", m.GPUTFLOPs, g.BF16TFLOPs}, {"hbm_bandwidth_gbs", m.HBMBandwidthGBs, g.MemoryBWTBs * 1000}} {
		if f.got != 0 && math.Abs(f.got-f.want) > 0.005*f.want {
			return fmt.Errorf("%s = %g, but the analytic model prices this machine by the %s spec sheet (%g): the key would change only what catalog shows. To model another GPU, give a new machine its own gpu_spec, or measure it (perf fit --kernels)",
				f.key, f.got, m.GPUSpec, f.want)
		}
	}
	return nil
}

// The largest figures a plan may give: far beyond any machine or model
// built or announced (the widest NVLink domain planned has 576 GPUs, the
// largest GPU memory 288 GB, the largest open model about 2 TB of bf16
// weights), they keep every product of the figures (a machine's bytes of
// memory, KV tokens × bytes per token, a pool's dollars and kilowatts)
// finite and exact, and refuse a typo's 1e300 instead of printing it.
var (
	machineBounds = []bound[Machine]{
		{"gpus", 4096, func(m Machine) float64 { return float64(m.GPUs) }},
		{"node_gpus", 65536, func(m Machine) float64 { return float64(m.NodeGPUs) }},
		{"gpu_memory_gib", 16384, func(m Machine) float64 { return m.GPUMemoryGiB }},
		{"gpu_tflops", 1e6, func(m Machine) float64 { return m.GPUTFLOPs }},
		{"hbm_bandwidth_gbs", 1e6, func(m Machine) float64 { return m.HBMBandwidthGBs }},
		{"nvlink_gbs", 1e6, func(m Machine) float64 { return m.NVLinkGBs }},
		{"gpu_power_w", 1e5, func(m Machine) float64 { return m.GPUPowerW }},
		{"link_gbps", 1e7, func(m Machine) float64 { return m.LinkGbps }},
		{"layerwise_transfer_s", 3600, func(m Machine) float64 { return m.LayerwiseTransferS }},
		{"cost_usd_per_h", 1e6, func(m Machine) float64 { return m.CostUSDPerH }},
		{"power_kw", 1e5, func(m Machine) float64 { return m.PowerKW }},
		{"purchase_usd", 1e10, func(m Machine) float64 { return m.PurchaseUSD }},
	}
	modelBounds = []bound[Model]{
		{"layers", 10000, func(m Model) float64 { return float64(m.Layers) }},
		{"hidden", 1 << 20, func(m Model) float64 { return float64(m.Hidden) }},
		{"weight_bytes", 1e15, func(m Model) float64 { return float64(m.WeightBytes) }},
		{"kv_bytes_per_token", 1 << 30, func(m Model) float64 { return float64(m.KVBytes) }},
	}
)

// bound is the largest value of a plan's key, read off an entry by of.
type bound[T any] struct {
	key string
	max float64
	of  func(T) float64
}

// checkBounds refuses the first figure of entry x (a machine or a model,
// what) above its bound.
func checkBounds[T any](what string, bounds []bound[T], x T) error {
	for _, b := range bounds {
		if v := b.of(x); v > b.max {
			return fmt.Errorf("%s = %s is beyond any %s (at most %s)", b.key, figure(v), what, figure(b.max))
		}
	}
	return nil
}

// figure writes a plan's figure as it would be written: whole numbers in
// full, others in %g.
func figure(v float64) string {
	if v == math.Trunc(v) && math.Abs(v) < 1e21 {
		return strconv.FormatFloat(v, 'f', -1, 64)
	}
	return strconv.FormatFloat(v, 'g', -1, 64)
}

// checkArchShape refuses, for a model with an architecture, a layers,
// hidden, heads or kv_heads other than the architecture's: the memory
// model and the analytic model read the architecture, so the key would
// change only what catalog shows (and, under --compat splitwise-sim, the
// reference simulator's KV rule), as a gpu_tflops on a gpu_spec machine
// would.
func (m Model) checkArchShape() error {
	a, ok := m.ArchShape()
	if !ok {
		return nil
	}
	for _, f := range []struct {
		key       string
		got, want int
	}{{"layers", m.Layers, a.Layers}, {"hidden", m.Hidden, a.Hidden}, {"heads", m.Heads, a.Heads}, {"kv_heads", m.KVHeads, a.KVHeads}} {
		if f.got != f.want {
			return fmt.Errorf("%s = %d, but its architecture %s has %d: the memory and performance models read the architecture, so the key would change only what catalog shows. To serve another shape, give it as a model of its own (--model-config FILE, or a [[model]] of a new name without arch)",
				f.key, f.got, a.Name, f.want)
		}
	}
	return nil
}

// MemoryBytes is the machine's total GPU memory in bytes.
func (m Machine) MemoryBytes() int64 {
	return int64(math.Round(float64(m.GPUs) * m.GPUMemoryGiB * GiB))
}

// Model is an LLM as a cluster serves it: its shape, the bytes of its
// weights and of one token's KV-cache at the precision it is served in.
type Model struct {
	// Name identifies the model, e.g. "bloom-176b"; it is also the model
	// key of its performance profiles.
	Name string `toml:"name"`
	// Layers is the number of transformer layers.
	Layers int `toml:"layers"`
	// Hidden is the hidden size.
	Hidden int `toml:"hidden"`
	// Heads is the number of query heads.
	Heads int `toml:"heads"`
	// KVHeads is the number of key/value heads (Heads for multi-head
	// attention, fewer for grouped-query attention).
	KVHeads int `toml:"kv_heads"`
	// WeightBytes is the size of the weights in bytes.
	WeightBytes int64 `toml:"weight_bytes"`
	// KVBytes, when positive, is the KV-cache size of one token in bytes
	// (from the architecture: grouped-query or multi-head latent
	// attention, the KV precision); 0 derives it from the heads (fp16).
	KVBytes int64 `toml:"kv_bytes_per_token"`
	// Arch names the model's architecture (package arch) for the
	// analytic performance model ("" when it has none).
	Arch string `toml:"arch"`
	// Precision is the precision of its weights and KV-cache: bf16, fp8
	// or fp4 (default bf16).
	Precision string `toml:"precision"`

	// shape is the architecture the model was made from (ModelOf), nil
	// when it was not; Memory then looks Arch up among the built-ins.
	shape *arch.Arch
	// referenceWeights, when positive, is the weights the reference
	// simulator counts for a paper's model (ReferenceWeightBytes) in place
	// of referenceFor, the built-in WeightBytes: once WeightBytes is
	// anything else (a plan's weight_bytes or precision), it counts.
	referenceWeights, referenceFor int64
}

// ReferenceWeightBytes is the model's weights as --compat splitwise-sim
// sizes its KV cache: the reference simulator's own figure for the
// paper's models (BLOOM-176B 329 GB, Llama2-70B 135 GB, a little under
// their bf16 weights), else WeightBytes.
func (m Model) ReferenceWeightBytes() int64 {
	if m.referenceWeights > 0 && m.WeightBytes == m.referenceFor {
		return m.referenceWeights
	}
	return m.WeightBytes
}

// KVBytesPerToken is the KV-cache size of one token: KVBytes when set,
// else 2 (K and V) × layers × kv_heads × head_dim × 2 bytes (fp16).
func (m Model) KVBytesPerToken() int64 {
	if m.KVBytes > 0 {
		return m.KVBytes
	}
	if m.KVHeads == 0 {
		return m.ReferenceKVBytesPerToken()
	}
	headDim := int64(m.Hidden / m.Heads)
	return 2 * int64(m.Layers) * int64(m.KVHeads) * headDim * 2
}

// ReferenceKVBytesPerToken is the reference simulator's KV-cache size of
// one token (--compat splitwise-sim): it ignores grouped-query attention,
// 2 × layers × hidden × 2 bytes.
func (m Model) ReferenceKVBytesPerToken() int64 {
	return 2 * int64(m.Layers) * int64(m.Hidden) * 2
}

// KVCapacityBytes is the KV cache, in bytes of KVBytesPerToken, that one
// model replica on machine type mc holds: KVCapacityTokens × the bytes
// of one token (0 when the weights do not fit).
func (m Model) KVCapacityBytes(mc Machine) int64 {
	return m.KVCapacityTokens(mc) * m.KVBytesPerToken()
}

// ReferenceKVCapacityBytes is the reference simulator's KV cache of one
// model replica on machine type mc, in bytes of ReferenceKVBytesPerToken:
// all of the machine's memory less its weights (ReferenceWeightBytes;
// negative when they do not fit).
func (m Model) ReferenceKVCapacityBytes(mc Machine) int64 {
	return mc.MemoryBytes() - m.ReferenceWeightBytes()
}

// KVCapacityTokens is the number of tokens of KV cache one model replica
// of m holds on machine type mc, the memory model's (Memory; 0 when the
// weights do not fit).
func (m Model) KVCapacityTokens(mc Machine) int64 {
	b, err := m.Memory(mc)
	if err != nil {
		return 0
	}
	return b.Tokens
}

// ArchShape is the model's architecture: the one it was made from (ModelOf),
// else the built-in named by its arch field; false when it has none.
func (m Model) ArchShape() (arch.Arch, bool) {
	if m.shape != nil {
		return *m.shape, true
	}
	if m.Arch == "" {
		return arch.Arch{}, false
	}
	a, err := arch.Lookup(m.Arch)
	return a, err == nil
}

// ServedPrecision is the model's precision field parsed (bf16 when unset
// or not understood; Validate rejects the latter).
func (m Model) ServedPrecision() arch.Precision {
	p, err := arch.ParsePrecision(m.Precision)
	if err != nil || m.Precision == "" {
		return arch.BF16
	}
	return p
}

// Memory is the memory budget of one GPU of a model replica of m on
// machine type mc (package memory): mc's GPU memory and tensor
// parallelism, its GPUMemoryUtilization, m's weights (WeightBytes, at the
// served precision) and KV cache per token per GPU. With an architecture
// (ArchShape) the cache per GPU keeps MLA latents and, when kv_heads < tp,
// key/value heads whole on every GPU, at the served KV precision, the
// weights per GPU add the projections every GPU holds whole
// (arch.Arch.ReplicatedWeightBytes), the recurrent states of its
// linear-attention layers are held beside them (arch.Arch.RecurrentStateBytesPerGPU),
// and the activation reserve follows its shape; without one the cache is
// KVBytesPerToken split over the kv heads (each GPU at least one) and the
// reserve follows hidden with a 4 × hidden FFN. A replica whose weights do
// not fit returns a *memory.WeightsDoNotFitError with the sizes.
func (m Model) Memory(mc Machine) (memory.Budget, error) {
	tp := max(mc.TensorParallel, 1)
	r := memory.Replica{TP: tp}
	if a, ok := m.ArchShape(); ok {
		kvp := m.ServedPrecision().KVCache()
		r = memory.ForShape(a, tp, m.ServedPrecision(), kvp)
		if total := a.KVBytesPerToken(kvp); m.KVBytes > 0 && total > 0 && m.KVBytes != total {
			// a plan's own per-token figure, replicated as the architecture's is
			r.KVBytesPerTokenPerGPU *= float64(m.KVBytes) / float64(total)
		}
	} else {
		kvh := max(m.KVHeads, 1)
		perGPU := (kvh + tp - 1) / tp
		r.KVBytesPerTokenPerGPU = float64(m.KVBytesPerToken()) * float64(perGPU) / float64(kvh)
		h := float64(m.Hidden)
		hd := h / float64(max(m.Heads, 1))
		r.ActivationBytesPerToken = 2 * (2*h + math.Max(float64(m.Heads+2*kvh)*hd, 8*h)/float64(tp))
	}
	// The model's own name and weights (a plan's weight_bytes), the
	// machine's GPU.
	r.Model, r.GPU, r.HBMBytes, r.WeightBytes = m.Name, mc.GPULabel(), mc.GPUMemoryGiB*GiB, float64(m.WeightBytes)
	return memory.Plan(r, memory.Settings{Utilization: mc.GPUMemoryUtilization})
}

// Design kinds.
const (
	// KindBaseline is a co-located design: every machine runs both phases.
	KindBaseline = "baseline"
	// KindSplitwise is a phase-split design: a prompt pool and a token pool.
	KindSplitwise = "splitwise"
)

// Design is a cluster shape: a baseline of one machine type, or a
// Splitwise design pairing a prompt machine type with a token machine type.
type Design struct {
	// Name identifies the design, e.g. "Splitwise-HA".
	Name string `toml:"name"`
	// Aliases are other accepted names, e.g. "HA".
	Aliases []string `toml:"aliases"`
	// Extra designs are searched only when named (optimize --designs),
	// not as part of "all" (the paper's six designs).
	Extra bool `toml:"extra"`
	// Kind is KindBaseline or KindSplitwise.
	Kind string `toml:"kind"`
	// Machine is the machine type of a baseline.
	Machine string `toml:"machine"`
	// Prompt is the machine type of a Splitwise design's prompt pool.
	Prompt string `toml:"prompt"`
	// Token is the machine type of a Splitwise design's token pool.
	Token string `toml:"token"`
}

// IsBaseline reports whether d is a co-located design.
func (d Design) IsBaseline() bool { return d.Kind == KindBaseline }

// MinCounts returns the smallest cluster of d: one machine for a baseline
// (prompt 1, token 0), one of each pool for a Splitwise design.
func (d Design) MinCounts() (prompt, token int) {
	if d.IsBaseline() {
		return 1, 0
	}
	return 1, 1
}

// Catalog holds the machine types, models and designs splitplan knows.
type Catalog struct {
	Machines []Machine `toml:"machine"`
	Models   []Model   `toml:"model"`
	Designs  []Design  `toml:"design"`
}

// Machine returns the machine type called name (case-insensitive).
func (c *Catalog) Machine(name string) (Machine, error) {
	for _, m := range c.Machines {
		if strings.EqualFold(m.Name, name) {
			return m, nil
		}
	}
	names := make([]string, len(c.Machines))
	for i, m := range c.Machines {
		names[i] = m.Name
	}
	return Machine{}, fmt.Errorf("unknown machine type %q (known: %s)", name, strings.Join(names, ", "))
}

// Model returns the model called name (case-insensitive).
func (c *Catalog) Model(name string) (Model, error) {
	for _, m := range c.Models {
		if strings.EqualFold(m.Name, name) {
			return m, nil
		}
	}
	names := make([]string, len(c.Models))
	for i, m := range c.Models {
		names[i] = m.Name
	}
	return Model{}, fmt.Errorf("unknown model %q (known: %s)", name, strings.Join(names, ", "))
}

// Design returns the design called name or one of its aliases, in any
// case: "Splitwise-HH", "hh" and "HH" name the same design.
func (c *Catalog) Design(name string) (Design, error) {
	for _, d := range c.Designs {
		if strings.EqualFold(d.Name, name) {
			return d, nil
		}
		for _, a := range d.Aliases {
			if strings.EqualFold(a, name) {
				return d, nil
			}
		}
	}
	return Design{}, fmt.Errorf("unknown design %q (known: %s)", name, strings.Join(c.DesignNames(), ", "))
}

// DefaultDesigns lists the designs searched when none is named: all but
// the extra ones, in catalog order.
func (c *Catalog) DefaultDesigns() []Design {
	var out []Design
	for _, d := range c.Designs {
		if !d.Extra {
			out = append(out, d)
		}
	}
	return out
}

// DefaultDesignNames lists the names of DefaultDesigns.
func (c *Catalog) DefaultDesignNames() []string {
	var names []string
	for _, d := range c.DefaultDesigns() {
		names = append(names, d.Name)
	}
	return names
}

// DesignNames lists the designs' names in catalog order.
func (c *Catalog) DesignNames() []string {
	names := make([]string, len(c.Designs))
	for i, d := range c.Designs {
		names[i] = d.Name
	}
	return names
}

// Validate checks every entry and every cross-reference, naming the entry
// and field of the first problem.
func (c *Catalog) Validate() error {
	seen := map[string]bool{}
	for i, m := range c.Machines {
		where := fmt.Sprintf("machine %q", m.Name)
		switch {
		case m.Name == "":
			return fmt.Errorf("machine %d: name is missing", i+1)
		case seen["m:"+strings.ToLower(m.Name)]:
			return fmt.Errorf("%s: defined twice", where)
		case m.GPUs <= 0:
			return fmt.Errorf("%s: gpus must be at least 1, got %d", where, m.GPUs)
		case !(m.GPUMemoryGiB > 0) || math.IsInf(m.GPUMemoryGiB, 0):
			return fmt.Errorf("%s: gpu_memory_gib must be a positive number, got %v", where, m.GPUMemoryGiB)
		case !(m.LinkGbps > 0) || math.IsInf(m.LinkGbps, 0):
			return fmt.Errorf("%s: link_gbps must be a positive number, got %v", where, m.LinkGbps)
		case m.LayerwiseTransferS < 0 || math.IsNaN(m.LayerwiseTransferS) || math.IsInf(m.LayerwiseTransferS, 0):
			return fmt.Errorf("%s: layerwise_transfer_s must be zero or positive seconds, got %v", where, m.LayerwiseTransferS)
		case !(m.CostUSDPerH > 0) || math.IsInf(m.CostUSDPerH, 0):
			// Zero would make every cost ratio and per-dollar figure NaN or infinite.
			return fmt.Errorf("%s: cost_usd_per_h must be a positive number of dollars per hour, got %v", where, m.CostUSDPerH)
		case !(m.PowerKW > 0) || math.IsInf(m.PowerKW, 0):
			return fmt.Errorf("%s: power_kw must be a positive number of kW, got %v", where, m.PowerKW)
		case m.GPUPowerCap < 0 || m.GPUPowerCap > 1 || math.IsNaN(m.GPUPowerCap):
			return fmt.Errorf("%s: gpu_power_cap must be a fraction in (0, 1], got %v", where, m.GPUPowerCap)
		case m.PurchaseUSD < 0 || math.IsNaN(m.PurchaseUSD) || math.IsInf(m.PurchaseUSD, 0):
			return fmt.Errorf("%s: purchase_usd must be 0 (the default price of its GPUs) or a positive number of dollars, got %v", where, m.PurchaseUSD)
		case m.PerfPowerCap < 0 || m.PerfPowerCap > 1 || math.IsNaN(m.PerfPowerCap):
			return fmt.Errorf("%s: perf_power_cap must be 0 (the gpu_power_cap) or a fraction in (0, 1], got %v", where, m.PerfPowerCap)
		case m.PerfHardware == "":
			return fmt.Errorf("%s: perf_hardware is missing (the hardware key of its performance profile, e.g. \"a100-80gb\")", where)
		case m.TensorParallel <= 0 || m.GPUs%m.TensorParallel != 0:
			return fmt.Errorf("%s: tensor_parallel must be a divisor of gpus (%d): a machine serves gpus/tensor_parallel model replicas; got %d", where, m.GPUs, m.TensorParallel)
		case m.GPUMemoryUtilization < 0 || m.GPUMemoryUtilization > 1 || math.IsNaN(m.GPUMemoryUtilization):
			return fmt.Errorf("%s: gpu_memory_utilization must be 0 (the default, %g) or a fraction in (0, 1], got %v", where, memory.DefaultUtilization, m.GPUMemoryUtilization)
		case m.NodeGPUs < 0 || (m.NodeGPUs > 0 && m.NodeGPUs%m.GPUs != 0):
			return fmt.Errorf("%s: node_gpus must be 0 (a whole node) or a multiple of gpus (%d), got %d", where, m.GPUs, m.NodeGPUs)
		}
		for _, f := range []struct {
			name string
			v    float64
		}{{"gpu_tflops", m.GPUTFLOPs}, {"hbm_bandwidth_gbs", m.HBMBandwidthGBs}, {"gpu_power_w", m.GPUPowerW}, {"nvlink_gbs", m.NVLinkGBs}} {
			if f.v < 0 || math.IsNaN(f.v) || math.IsInf(f.v, 0) {
				return fmt.Errorf("%s: %s must be zero or positive, got %v", where, f.name, f.v)
			}
		}
		if err := checkBounds("machine", machineBounds, m); err != nil {
			return fmt.Errorf("%s: %w", where, err)
		}
		if err := m.checkSpecFigures(); err != nil {
			return fmt.Errorf("%s: %w", where, err)
		}
		seen["m:"+strings.ToLower(m.Name)] = true
	}
	for i, m := range c.Models {
		where := fmt.Sprintf("model %q", m.Name)
		switch {
		case m.Name == "":
			return fmt.Errorf("model %d: name is missing", i+1)
		case seen["o:"+strings.ToLower(m.Name)]:
			return fmt.Errorf("%s: defined twice", where)
		case m.Layers <= 0:
			return fmt.Errorf("%s: layers must be at least 1, got %d", where, m.Layers)
		case m.Hidden <= 0:
			return fmt.Errorf("%s: hidden must be at least 1, got %d", where, m.Hidden)
		case m.Heads <= 0 || m.Hidden%m.Heads != 0:
			return fmt.Errorf("%s: heads must be a positive divisor of hidden (%d), got %d", where, m.Hidden, m.Heads)
		case m.KVHeads <= 0 || m.KVHeads > m.Heads || m.Heads%m.KVHeads != 0:
			return fmt.Errorf("%s: kv_heads must be a positive divisor of heads (%d), got %d", where, m.Heads, m.KVHeads)
		case m.WeightBytes <= 0:
			return fmt.Errorf("%s: weight_bytes must be positive, got %d", where, m.WeightBytes)
		case m.KVBytes < 0:
			return fmt.Errorf("%s: kv_bytes_per_token must be zero (derived from the heads) or positive, got %d", where, m.KVBytes)
		}
		if err := checkBounds("model", modelBounds, m); err != nil {
			return fmt.Errorf("%s: %w", where, err)
		}
		if err := m.checkArchShape(); err != nil {
			return fmt.Errorf("%s: %w", where, err)
		}
		switch strings.ToLower(m.Precision) {
		case "", "bf16", "fp16", "fp8", "fp4", "nvfp4", "mxfp4":
		default:
			return fmt.Errorf("%s: precision must be bf16, fp8 or fp4, got %q", where, m.Precision)
		}
		seen["o:"+strings.ToLower(m.Name)] = true
	}
	for i, d := range c.Designs {
		where := fmt.Sprintf("design %q", d.Name)
		if d.Name == "" {
			return fmt.Errorf("design %d: name is missing", i+1)
		}
		for _, n := range append([]string{d.Name}, d.Aliases...) {
			if seen["d:"+strings.ToLower(n)] {
				return fmt.Errorf("%s: name or alias %q is already used by another design", where, n)
			}
			seen["d:"+strings.ToLower(n)] = true
		}
		switch d.Kind {
		case KindBaseline:
			if d.Machine == "" {
				return fmt.Errorf("%s: a baseline needs machine (its machine type)", where)
			}
			if d.Prompt != "" || d.Token != "" {
				return fmt.Errorf("%s: a baseline has no prompt or token pool; set machine only", where)
			}
			if _, err := c.Machine(d.Machine); err != nil {
				return fmt.Errorf("%s: machine: %w", where, err)
			}
		case KindSplitwise:
			if d.Prompt == "" || d.Token == "" {
				return fmt.Errorf("%s: a splitwise design needs both prompt and token (machine types of its pools)", where)
			}
			if d.Machine != "" {
				return fmt.Errorf("%s: a splitwise design has prompt and token pools; machine is for baselines", where)
			}
			if _, err := c.Machine(d.Prompt); err != nil {
				return fmt.Errorf("%s: prompt: %w", where, err)
			}
			if _, err := c.Machine(d.Token); err != nil {
				return fmt.Errorf("%s: token: %w", where, err)
			}
		default:
			return fmt.Errorf("%s: kind must be %q or %q, got %q", where, KindBaseline, KindSplitwise, d.Kind)
		}
	}
	return nil
}

// Cluster is a design with machine counts and its machine types resolved.
type Cluster struct {
	// Design is the cluster's design.
	Design Design
	// PromptType is the prompt pool's machine type; for a baseline, the
	// type of every machine.
	PromptType Machine
	// TokenType is the token pool's machine type; for a baseline, the
	// same as PromptType.
	TokenType Machine
	// Prompt is the number of prompt machines; for a baseline, the number
	// of machines.
	Prompt int
	// Token is the number of token machines (0 for a baseline).
	Token int
}

// NewCluster is ClusterOf for the design called design (Design): for a
// name a user typed; a caller holding the Design calls ClusterOf.
func (c *Catalog) NewCluster(design string, prompt, token int) (Cluster, error) {
	d, err := c.Design(design)
	if err != nil {
		return Cluster{}, err
	}
	return c.ClusterOf(d, prompt, token)
}

// ClusterOf is design d with prompt and token machines (for a baseline,
// prompt machines in all and token 0), its machine types resolved from c.
func (c *Catalog) ClusterOf(d Design, prompt, token int) (Cluster, error) {
	var err error
	cl := Cluster{Design: d, Prompt: prompt, Token: token}
	if d.IsBaseline() {
		if prompt <= 0 {
			return Cluster{}, fmt.Errorf("%s needs at least 1 machine, got %d", d.Name, prompt)
		}
		if token != 0 {
			return Cluster{}, fmt.Errorf("%s is a baseline: it has no token pool (got %d token machines)", d.Name, token)
		}
		if cl.PromptType, err = c.Machine(d.Machine); err != nil {
			return Cluster{}, err
		}
		cl.TokenType = cl.PromptType
		return cl, nil
	}
	if prompt <= 0 || token <= 0 {
		return Cluster{}, fmt.Errorf("%s needs at least 1 prompt and 1 token machine, got %d and %d", d.Name, prompt, token)
	}
	if cl.PromptType, err = c.Machine(d.Prompt); err != nil {
		return Cluster{}, err
	}
	if cl.TokenType, err = c.Machine(d.Token); err != nil {
		return Cluster{}, err
	}
	return cl, nil
}

// MaxPoolMachines bounds the machines of a pool of a cluster that is
// simulated (resolve.NewCluster refuses more; a search's --max-machines
// and its growth to a budget stop there too): a simulation's state grows
// with its machines, and no inference fleet is larger. ClusterOf itself
// does not bound them: the costs and powers of larger counts are
// arithmetic.
const MaxPoolMachines = 10000

// Machines is the number of machines in the cluster.
func (cl Cluster) Machines() int { return cl.Prompt + cl.Token }

// CostUSDPerH is the cluster's cost in dollars per hour.
func (cl Cluster) CostUSDPerH() float64 {
	return float64(cl.Prompt)*cl.PromptType.CostUSDPerH + float64(cl.Token)*cl.TokenType.CostUSDPerH
}

// PowerKW is the cluster's provisioned power in kilowatts.
func (cl Cluster) PowerKW() float64 {
	return float64(cl.Prompt)*cl.PromptType.PowerKW + float64(cl.Token)*cl.TokenType.PowerKW
}

// String names the cluster, e.g. "Splitwise-HH 35P/5T" or "Baseline-H100 ×40".
func (cl Cluster) String() string {
	if cl.Design.IsBaseline() {
		return fmt.Sprintf("%s ×%d", cl.Design.Name, cl.Prompt)
	}
	return fmt.Sprintf("%s %dP/%dT", cl.Design.Name, cl.Prompt, cl.Token)
}

// LinkBetween is the bandwidth in bytes per second and the layer-wise
// transfer cost in seconds of the link between a and b: the slower end wins.
func LinkBetween(a, b Machine) (bytesPerS, layerwiseS float64) {
	gbps := math.Min(a.LinkGbps, b.LinkGbps)
	return gbps * 1e9 / 8, math.Max(a.LayerwiseTransferS, b.LayerwiseTransferS)
}
