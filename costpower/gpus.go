package costpower

import (
	"errors"
	"fmt"
	"math"
	"sort"
	"strings"

	"splitplan/memory"
)

// MinKVTokens is the KV-cache, in tokens, that a tensor-parallel instance
// must hold next to its weights to be proposed by GPU-pair design
// generation: two 8k-token requests. An instance that fits its weights
// but less cache could only serve short requests one or two at a time;
// the simulator still rejects a request that does not fit at all.
const MinKVTokens = 16384

// GPUFamily is the short, lower-case name of a machine type's GPU, the
// key of --gpus and --price: "a100", "h100", "h200", "b200", "gb200",
// "l40s", "mi300x". It comes from the GPU spec ("h200_sxm" → "h200"),
// else from the GPU field ("H100-80GB" → "h100"). A power-capped type
// shares its GPU's family (its GPUs are priced alike).
func (m Machine) GPUFamily() string {
	s := strings.ToLower(m.GPUSpecName())
	for _, cut := range []string{"_", "-"} {
		if i := strings.Index(s, cut); i > 0 {
			s = s[:i]
		}
	}
	return s
}

// GPUSpecName is the name under which package hw knows the machine's
// GPU: its GPUSpec, else its GPU field.
func (m Machine) GPUSpecName() string {
	if m.GPUSpec != "" {
		return m.GPUSpec
	}
	return m.GPU
}

// NodeGPUCount is the GPUs of the node a machine type belongs to: the
// machine's own GPUs, or for an instance slice (Instance) the GPUs of the
// node it is a slice of.
func (m Machine) NodeGPUCount() int {
	if m.NodeGPUs > 0 {
		return m.NodeGPUs
	}
	return m.GPUs
}

// InstancesPerMachine is the number of model replicas a machine serves:
// GPUs / TensorParallel (1 when the replica spans every GPU).
func (m Machine) InstancesPerMachine() int {
	if m.TensorParallel > 0 && m.TensorParallel < m.GPUs && m.GPUs%m.TensorParallel == 0 {
		return m.GPUs / m.TensorParallel
	}
	return 1
}

// Instance is one model replica of machine type m as the simulator runs
// it: TensorParallel of its GPUs, with the machine's cost, provisioned
// power and network link in proportion (TensorParallel/GPUs of each), and
// NodeGPUs set to the machine's GPUs. A machine serving one replica is its
// own instance.
func (m Machine) Instance() Machine {
	k := m.InstancesPerMachine()
	if k == 1 {
		return m
	}
	out := m
	out.Name = m.Name + " instance"
	out.GPUs, out.NodeGPUs = m.TensorParallel, m.GPUs
	out.CostUSDPerH = m.CostUSDPerH / float64(k)
	out.PowerKW = m.PowerKW / float64(k)
	out.LinkGbps = m.LinkGbps / float64(k)
	return out
}

// GPULabel is a machine type's GPU as tables show it: its family in upper
// case, "cap" added for a power-capped catalog type, and a capped variant
// (WithCap) its cap in percent, e.g. "H200", "H100cap", "H100@70"; a
// capped variant of a capped catalog type keeps "cap" (its profile is the
// capped type's), e.g. "H100cap@70", so that no two types share a label.
func (m Machine) GPULabel() string {
	f := strings.ToUpper(m.GPUFamily())
	switch {
	case m.PerfPowerCap > 0 && m.PerfPowerCap != m.GPUPowerCap:
		if m.PerfPowerCap < 1 {
			f += "cap"
		}
		f += CapSuffix(m.GPUPowerCap)
	case m.GPUPowerCap > 0 && m.GPUPowerCap < 1:
		f += "cap"
	}
	return f
}

// Label is a machine type's short name in design names: its GPULabel and
// its tensor parallelism, e.g. "H200·tp8".
func (m Machine) Label() string {
	return fmt.Sprintf("%s·tp%d", m.GPULabel(), m.TensorParallel)
}

// WithTP is node type m serving the model with tensor parallelism tp
// (which divides its GPUs): GPUs/tp replicas per machine, each over tp
// GPUs, named "<node>·tp<tp>". Cost and provisioned power stay the
// node's: a search counts whole machines; the simulator runs each replica
// (Instance) with its share of the node's memory and network link.
func (m Machine) WithTP(tp int) (Machine, error) {
	if tp < 1 || m.GPUs%tp != 0 {
		return Machine{}, fmt.Errorf("machine %q: tensor parallelism %d must divide its %d GPUs", m.Name, tp, m.GPUs)
	}
	out := m
	base := m.Name
	if i := strings.Index(base, "·tp"); i > 0 {
		base = base[:i]
	}
	out.Name = fmt.Sprintf("%s·tp%d", base, tp)
	out.TensorParallel = tp
	return out, nil
}

// TPChoices lists the tensor parallelisms of node type m that can serve
// model: the divisors of its GPUs whose memory holds the weights and at
// least minKVTokens of KV-cache, smallest first.
func TPChoices(m Machine, model Model, minKVTokens int64) []int {
	var out []int
	for tp := 1; tp <= m.GPUs; tp++ {
		if m.GPUs%tp != 0 {
			continue
		}
		node, err := m.WithTP(tp)
		if err != nil {
			continue
		}
		if model.KVCapacityTokens(node.Instance()) >= minKVTokens {
			out = append(out, tp)
		}
	}
	return out
}

// NoFitReason says why node type m serves model at no tensor parallelism
// (TPChoices is empty), with the sizes of its largest replica (all its
// GPUs): the weights per GPU against the memory the engine may use, or
// the KV-cache tokens left against minKVTokens.
func NoFitReason(m Machine, model Model, minKVTokens int64) string {
	return TPRefusal(m, model, m.GPUs, minKVTokens)
}

// TPRefusal says why node type m at tensor parallelism tp cannot serve
// model, with the sizes per GPU ("" when it can).
func TPRefusal(m Machine, model Model, tp int, minKVTokens int64) string {
	node, err := m.WithTP(tp)
	if err != nil {
		return err.Error()
	}
	b, err := model.Memory(node.Instance())
	var nf *memory.WeightsDoNotFitError
	if errors.As(err, &nf) {
		return fmt.Sprintf("%s: %s %s", node.Label(), model.Name, strings.TrimPrefix(nf.Sizes(), "its "))
	}
	if err != nil {
		return fmt.Sprintf("%s: %v", node.Label(), err)
	}
	if b.Tokens >= minKVTokens {
		return ""
	}
	return fmt.Sprintf("%s: %s leaves room for %d tokens of KV cache (%.1f GiB per GPU after %.1f GiB of weights), fewer than the %d required",
		node.Label(), model.Name, b.Tokens, b.KV/GiB, b.Weights/GiB, minKVTokens)
}

// GPUMachine resolves an entry of --gpus: a machine type's name
// ("DGX-H200"), a baseline design's alias ("H200"), or a GPU family
// ("h200", "h200_sxm"), in any case. A family with several machine types
// (h100: DGX-H100 and the capped DGX-H100cap) resolves to the uncapped
// one.
func (c *Catalog) GPUMachine(name string) (Machine, error) {
	key := strings.TrimSpace(name)
	if m, err := c.Machine(key); err == nil {
		return m, nil
	}
	if d, err := c.Design(key); err == nil && d.IsBaseline() {
		return c.Machine(d.Machine)
	}
	fam := Machine{GPUSpec: key}.GPUFamily()
	for _, m := range c.Machines {
		if m.GPUFamily() == fam && !(m.GPUPowerCap > 0 && m.GPUPowerCap < 1) && m.NodeGPUs == 0 {
			return m, nil
		}
	}
	return Machine{}, fmt.Errorf("unknown GPU %q (known: %s)", name, strings.Join(c.GPUFamilies(), ", "))
}

// GPUFamilies lists the GPU families of the catalog's node types, sorted.
func (c *Catalog) GPUFamilies() []string {
	seen := map[string]bool{}
	var out []string
	for _, m := range c.Machines {
		if f := m.GPUFamily(); !seen[f] && m.NodeGPUs == 0 {
			seen[f] = true
			out = append(out, f)
		}
	}
	sort.Strings(out)
	return out
}

// SetGPUPrice sets the price of one GPU-hour of a GPU family (a --gpus
// name) on every machine type of that family: a machine costs the price ×
// its GPUs. It returns the machine types changed.
func (c *Catalog) SetGPUPrice(gpu string, usdPerGPUHour float64) ([]string, error) {
	if !(usdPerGPUHour > 0) || math.IsInf(usdPerGPUHour, 0) {
		return nil, fmt.Errorf("the price of %s must be a positive number of dollars per GPU-hour, got %v", gpu, usdPerGPUHour)
	}
	if usdPerGPUHour > MaxGPUHourUSD {
		return nil, fmt.Errorf("the price of %s, $%s per GPU-hour, is beyond any GPU's (at most $%s; a GPU-hour rents for a few dollars)", gpu, figure(usdPerGPUHour), figure(MaxGPUHourUSD))
	}
	m, err := c.GPUMachine(gpu)
	if err != nil {
		return nil, err
	}
	fam := m.GPUFamily()
	var changed []string
	for i := range c.Machines {
		if c.Machines[i].GPUFamily() == fam {
			c.Machines[i].CostUSDPerH = usdPerGPUHour * float64(c.Machines[i].GPUs)
			if err := checkBounds("machine", machineBounds, c.Machines[i]); err != nil {
				return nil, fmt.Errorf("machine %q: %w", c.Machines[i].Name, err)
			}
			changed = append(changed, c.Machines[i].Name)
		}
	}
	return changed, nil
}

// MaxGPUHourUSD is the most a GPU-hour may cost (SetGPUPrice): a
// hundred times what the dearest GPU rents for, as the plan's bounds are
// beyond any machine (machineBounds).
const MaxGPUHourUSD = 1000

// GPUDesign is a design generated from a GPU list: a baseline of one
// instance type or a Splitwise pair of them.
type GPUDesign struct {
	// Name is the design's catalog name.
	Name string
	// Prompt and Token are the pools' instance types (the same for a
	// baseline).
	Prompt, Token Machine
}

// BaselineName and SplitwiseName name generated designs, e.g.
// "Baseline H200·tp8" and "Splitwise B200·tp4 / H200·tp8".
func BaselineName(m Machine) string { return "Baseline " + m.Label() }

// SplitwiseName names the phase-split design of prompt and token types.
func SplitwiseName(prompt, token Machine) string {
	return fmt.Sprintf("Splitwise %s / %s", prompt.Label(), token.Label())
}

// AddGPUDesigns adds to c, for the node types named by gpus (GPUMachine
// names, each once), a machine type per tensor parallelism that can
// serve model (TPChoices with minKVTokens), a baseline per instance type
// and a Splitwise design per ordered pair of instance types (same-type
// pairs included). It returns the designs in order: baselines first, in
// the order of gpus and TP, then the pairs. skipped says, per GPU, why no
// instance type of it can serve the model, or why its tensor parallelisms
// below the smallest proposed cannot, with the sizes.
func (c *Catalog) AddGPUDesigns(gpus []string, model Model, minKVTokens int64) (designs []GPUDesign, skipped []string, err error) {
	return c.AddCappedGPUDesigns(gpus, nil, model, minKVTokens)
}

// AddCappedGPUDesigns is AddGPUDesigns with every instance type also in a
// variant per power cap of caps (WithCap; a cap of 1 is the instance type
// itself), so that the pairs pair a prompt cap with a token cap. No caps
// is AddGPUDesigns.
func (c *Catalog) AddCappedGPUDesigns(gpus []string, caps []float64, model Model, minKVTokens int64) (designs []GPUDesign, skipped []string, err error) {
	var insts []Machine
	seen := map[string]bool{}
	for _, g := range gpus {
		m, err := c.GPUMachine(g)
		if err != nil {
			return nil, nil, err
		}
		if seen[m.Name] {
			return nil, nil, fmt.Errorf("GPU %q is named twice (as %s)", g, m.Name)
		}
		seen[m.Name] = true
		tps := TPChoices(m, model, minKVTokens)
		if len(tps) == 0 {
			skipped = append(skipped, NoFitReason(m, model, minKVTokens))
			continue
		}
		for tp := 1; tp < tps[0]; tp++ {
			if m.GPUs%tp == 0 {
				skipped = append(skipped, TPRefusal(m, model, tp, minKVTokens))
			}
		}
		for _, tp := range tps {
			inst, err := m.WithTP(tp)
			if err != nil {
				return nil, nil, err
			}
			if len(caps) == 0 {
				insts = append(insts, inst)
			}
			for i := range caps { // the highest cap first: it wins ties
				v, err := inst.WithCap(caps[len(caps)-1-i])
				if err != nil {
					return nil, nil, err
				}
				insts = append(insts, v)
			}
		}
	}
	for _, inst := range insts {
		if _, err := c.Machine(inst.Name); err != nil {
			c.Machines = append(c.Machines, inst)
		}
	}
	add := func(d Design, g GPUDesign) {
		if _, err := c.Design(d.Name); err != nil {
			c.Designs = append(c.Designs, d)
		}
		designs = append(designs, g)
	}
	for _, m := range insts {
		n := BaselineName(m)
		add(Design{Name: n, Aliases: []string{DesignAlias(n)}, Kind: KindBaseline, Machine: m.Name, Extra: true},
			GPUDesign{Name: n, Prompt: m, Token: m})
	}
	for _, p := range insts {
		for _, t := range insts {
			n := SplitwiseName(p, t)
			add(Design{Name: n, Aliases: []string{DesignAlias(n)}, Kind: KindSplitwise, Prompt: p.Name, Token: t.Name, Extra: true},
				GPUDesign{Name: n, Prompt: p, Token: t})
		}
	}
	return designs, skipped, c.Validate()
}
