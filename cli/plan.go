package cli

import (
	"bytes"
	"fmt"
	"os"
	"slices"
	"sort"
	"splitplan/resolve"
	"strings"

	"github.com/BurntSushi/toml"
	"github.com/urfave/cli/v2"

	"splitplan/arch"
	"splitplan/costpower"
	"splitplan/evaluator/perf"
	"splitplan/hw"
)

// planFile is the layout of a --plan TOML file: each package's section.
type planFile struct {
	Machines []toml.Primitive `toml:"machine"`
	Models   []toml.Primitive `toml:"model"`
	Designs  []toml.Primitive `toml:"design"`
	Perf     []perf.Pair      `toml:"perf"`
	// The part tables (plan_parts.go), checked and applied to the flags
	// before the command runs.
	Optimize   map[string]any `toml:"optimize"`
	Workload   map[string]any `toml:"workload"`
	SLO        map[string]any `toml:"slo"`
	Simulation map[string]any `toml:"simulation"`
	Cluster    map[string]any `toml:"cluster"`
	// GPUMemoryUtilization is the serving engine's share of each GPU's
	// memory on every machine type whose [[machine]] table does not set
	// gpu_memory_utilization (0: the default, 0.9); --gpu-memory-utilization
	// overrides both.
	GPUMemoryUtilization float64 `toml:"gpu_memory_utilization"`
}

// plan is what a plan file (or the built-in defaults) gives the commands.
type plan struct {
	Catalog *costpower.Catalog
	Perf    *perf.Table
	// Archs are architectures read from --model-config files.
	Archs []arch.Arch
	// configModel is the name of the --model-config model ("" without).
	configModel string
	// physics makes perfSource resolve every machine type with the
	// analytic model (one provenance per comparison).
	physics bool
	// kernels are the kernel layers --kernels-fit measured, by GPU.
	kernels map[string]resolve.KernelFit
}

// planFrom loads --plan and adds --model-config's model, when the command
// has the flags.
func planFrom(c *cli.Context) (*plan, error) {
	p, err := loadPlan(c.String("plan"))
	if err != nil {
		return nil, err
	}
	if p.configModel, err = p.addModelConfig(c); err != nil {
		return nil, err
	}
	if err := p.setMemoryUtilization(c); err != nil {
		return nil, err
	}
	if err := p.addKernelFits(c); err != nil {
		return nil, err
	}
	return p, nil
}

// kernelsFitFlag names kernel layers measured on users' GPUs (perf fit
// --kernels): a machine type on such a GPU uses its own kernel layer.
var kernelsFitFlag = &cli.StringSliceFlag{Name: "kernels-fit",
	Usage: "kernel-layer TOML `FILE` written by perf fit --kernels (repeatable, one a GPU): machines on that GPU use its measured kernel layer instead of the H100's carried by the spec sheet (provenance measured)"}

// addKernelFits reads --kernels-fit, when the command has it.
func (p *plan) addKernelFits(c *cli.Context) error {
	for _, path := range c.StringSlice(kernelsFitFlag.Name) { // nil without the flag
		kf, err := readKernelFit(path)
		if err != nil {
			return err
		}
		g, _ := hw.Lookup(kf.GPU) // readKernelFit checked it
		if p.kernels == nil {
			p.kernels = map[string]resolve.KernelFit{}
		}
		if prev, ok := p.kernels[g.Name]; ok {
			return badInputf("--kernels-fit %s: %s already has a kernel layer (%s)", path, g.Name, prev.Source)
		}
		params := kf.Kernel
		p.kernels[g.Name] = resolve.KernelFit{Params: &params, Source: path}
	}
	return nil
}

// errCompatUtilization refuses --gpu-memory-utilization beside --compat
// splitwise-sim, which sizes the KV cache by the reference simulator's
// rule and would otherwise ignore the flag.
var errCompatUtilization = badInputf("--gpu-memory-utilization: --compat splitwise-sim sizes the KV cache by the reference simulator's rule (all of the machine's memory less the weights), which has no engine share; leave one of them out")

// checkCompatMemory refuses an engine memory share (the flag, or a
// plan's gpu_memory_utilization) in compat mode, whose memory rule has
// none, rather than ignoring it.
func (p *plan) checkCompatMemory(c *cli.Context, compat bool) error {
	if !compat {
		return nil
	}
	if isSet(c, memoryUtilizationFlag.Name) {
		return errCompatUtilization
	}
	for _, m := range p.Catalog.Machines {
		if m.GPUMemoryUtilization != 0 {
			return badInputf("%s: gpu_memory_utilization (machine type %s): --compat splitwise-sim sizes the KV cache by the reference simulator's rule (all of the machine's memory less the weights), which has no engine share; leave the key out or run without --compat", c.String("plan"), m.Name)
		}
	}
	return nil
}

// memoryUtilization is --gpu-memory-utilization and whether it was given,
// refused outside (0, 1].
func memoryUtilization(c *cli.Context) (u float64, set bool, err error) {
	if !isSet(c, memoryUtilizationFlag.Name) {
		return 0, false, nil
	}
	u = c.Float64(memoryUtilizationFlag.Name)
	if !(u > 0 && u <= 1) {
		return u, true, badInputf("--gpu-memory-utilization %v: expected a fraction of each GPU's memory in (0, 1], like 0.9", u)
	}
	return u, true, nil
}

// setMemoryUtilization sets --gpu-memory-utilization, when given, on
// every machine type of the plan.
func (p *plan) setMemoryUtilization(c *cli.Context) error {
	u, set, err := memoryUtilization(c)
	if !set || err != nil {
		return err
	}
	for i := range p.Catalog.Machines {
		p.Catalog.Machines[i].GPUMemoryUtilization = u
	}
	return nil
}

// modelName is the model a command serves: --model, else the
// --model-config model, else --model's default.
func (p *plan) modelName(c *cli.Context) string {
	if p.configModel != "" && !isSet(c, "model") {
		return p.configModel
	}
	return c.String("model")
}

// perfSource is where the plan's performance models come from: its
// profiled pairs, then the analytic model with the built-in calibration.
func (p *plan) perfSource() resolve.Source {
	src := resolve.NewSource(p.Perf)
	src.Archs = p.Archs
	src.Physics = p.physics
	src.Kernels = p.kernels
	return src
}

// modelConfigFlag reads a model's architecture from a Hugging Face
// config.json.
var modelConfigFlag = &cli.StringFlag{Name: "model-config", Usage: "Hugging Face config.json `FILE` of a model to serve (its architecture; bf16 weights unless the config says otherwise); it is the --model unless --model names another"}

// archFromFlags is the architecture of --model-config when given, else of
// the built-in model named model.
func archFromFlags(c *cli.Context, model string) (arch.Arch, error) {
	if path := c.String("model-config"); path != "" {
		a, err := arch.ParseConfigFile(path)
		if err != nil {
			return arch.Arch{}, badInputf("--model-config: %v", err)
		}
		return a, nil
	}
	a, err := arch.Lookup(model)
	if err != nil {
		return arch.Arch{}, badInputf("--model: %v", err)
	}
	return a, nil
}

// addModelConfig adds the model of --model-config (when given) to the
// plan's catalog and returns its name ("" without the flag).
func (p *plan) addModelConfig(c *cli.Context) (string, error) {
	if c.String("model-config") == "" {
		return "", nil
	}
	a, err := archFromFlags(c, "")
	if err != nil {
		return "", err
	}
	m := costpower.ModelOf(a, costpower.ServedPrecision(a))
	replaced := false
	for i := range p.Catalog.Models {
		if strings.EqualFold(p.Catalog.Models[i].Name, m.Name) {
			p.Catalog.Models[i], replaced = m, true
		}
	}
	if !replaced {
		p.Catalog.Models = append(p.Catalog.Models, m)
	}
	p.Archs = append(p.Archs, a)
	if err := p.Catalog.Validate(); err != nil {
		return "", badInputf("--model-config: %v", err)
	}
	return m.Name, nil
}

// loadPlan returns the built-in catalog and performance models, changed
// by the plan file at path when path is not empty.
func loadPlan(path string) (*plan, error) {
	p := &plan{Catalog: costpower.Default(), Perf: perf.Builtin().Clone()}
	if path == "" {
		return p, nil
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, badInputf("--plan: %v", err)
	}
	if err := p.apply(data, path); err != nil {
		return nil, badInput(err)
	}
	return p, nil
}

// apply decodes a plan document onto p; name is used in messages.
func (p *plan) apply(data []byte, name string) error {
	var f planFile
	md, err := toml.NewDecoder(bytes.NewReader(data)).Decode(&f)
	if err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	sec := costpower.Section{Machines: f.Machines, Models: f.Models, Designs: f.Designs}
	if err := p.Catalog.Apply(md, sec); err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	var keys []string
	for _, k := range md.Undecoded() {
		// The part tables' values (a table of numbers such as [slo] abs)
		// are checked key by key where they are applied (plan_parts.go).
		if len(k) > 1 && slices.ContainsFunc(planParts, func(p planPart) bool { return p.Table == k[0] }) {
			continue
		}
		keys = append(keys, k.String())
	}
	if len(keys) > 0 {
		return fmt.Errorf("%s: unknown key %s (a plan has [[machine]], [[model]], [[design]] and [[perf]] tables, the tables [workload], [slo], [simulation], [cluster] and [optimize], and the key gpu_memory_utilization; see examples/)",
			name, strings.Join(keys, ", "))
	}
	if md.IsDefined("gpu_memory_utilization") && f.GPUMemoryUtilization == 0 {
		return fmt.Errorf("%s: gpu_memory_utilization = 0: leave the key out for the default, 0.9, or give a fraction in (0, 1]", name)
	}
	if u := f.GPUMemoryUtilization; u != 0 {
		if !(u > 0 && u <= 1) {
			return fmt.Errorf("%s: gpu_memory_utilization must be a fraction of each GPU's memory in (0, 1], like 0.9, got %v", name, u)
		}
		for i := range p.Catalog.Machines {
			if p.Catalog.Machines[i].GPUMemoryUtilization == 0 {
				p.Catalog.Machines[i].GPUMemoryUtilization = u
			}
		}
	}
	for i := range f.Perf {
		if err := f.Perf[i].Validate(); err != nil {
			return fmt.Errorf("%s: [[perf]] %d: %w", name, i+1, err)
		}
		p.Perf.Add(f.Perf[i])
	}
	return p.checkPerfModels(name)
}

// checkPerfModels rejects a machine type no performance model can ever
// cover: its perf_hardware has no profile and it has no gpu_spec for the
// analytic model (it would fail only once a simulation needs it).
func (p *plan) checkPerfModels(name string) error {
	for _, m := range p.Catalog.Machines {
		if m.GPUSpec != "" || p.Perf.HasHardware(m.PerfHardware) {
			continue
		}
		var hws []string
		seen := map[string]bool{}
		for i := range p.Perf.Pairs {
			h := strings.ToLower(p.Perf.Pairs[i].Hardware)
			if !seen[h] {
				seen[h] = true
				hws = append(hws, h)
			}
		}
		sort.Strings(hws)
		return fmt.Errorf("%s: machine %q: perf_hardware %q has no profile (profiled: %s) and the machine has no gpu_spec for the analytic model: add [[perf]] pairs for it, or set gpu_spec (one of %s)",
			name, m.Name, m.PerfHardware, strings.Join(hws, ", "), strings.Join(hw.Names(), ", "))
	}
	return nil
}
