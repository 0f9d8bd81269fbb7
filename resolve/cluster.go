package resolve

import (
	"fmt"
	"strings"

	"splitplan/costpower"
	"splitplan/evaluator"
	"splitplan/evaluator/perf"
	"splitplan/evaluator/perf/power"
)

// Cluster is a design with machine counts resolved for simulation: its
// machine types from the catalog, the model every machine serves, and the
// machine types' performance and power models. What the commands, the
// searches and the reports hold; Sim is what the simulator takes.
type Cluster struct {
	costpower.Cluster
	// Model is the LLM served by every machine.
	Model costpower.Model
	// PromptPerf is the performance model of the prompt machine type (for
	// a baseline, of every machine).
	PromptPerf perf.IterationModel
	// TokenPerf is the performance model of the token machine type (for a
	// baseline, the same as PromptPerf).
	TokenPerf perf.IterationModel
	// PromptProvenance and TokenProvenance say where PromptPerf's and
	// TokenPerf's numbers come from.
	PromptProvenance, TokenProvenance perf.Provenance
	// PromptPower and TokenPower are the power models of one model
	// replica of each machine type (power.ForReplica: a replica draws for
	// its own TensorParallel GPUs; a machine serving k replicas draws k
	// times as much), for the energy figures (nil: the result has no
	// energy, PowerNote says why).
	PromptPower, TokenPower *power.Model
	PowerNote               string
	// Policy is the batching policy of the cluster's baseline and
	// mixed-pool machines (the zero value: mixed batching).
	Policy evaluator.Policy
	// PolicyInName reports that the design was named with its policy
	// (e.g. "Baseline-H100+sarathi"), so the cluster's name shows it.
	PolicyInName bool
	// Compat reports that the performance models are the reference
	// simulator's fit (Source.Compat): Sim then sizes the KV-cache as the
	// reference does, and the simulation's evaluator.Options.Compat must
	// be set.
	Compat bool
}

// NewCluster resolves design d with machine counts (its machine types from
// the catalog), the model by name, and the machine types' performance
// models from src (the reference simulator's fit when src.Compat is set),
// both pools from one provenance (Source.ForSpace). d is the design as the
// catalog resolved it once (costpower.Catalog.Design, ResolveDesign): it is
// not looked up again by name.
func NewCluster(cat *costpower.Catalog, src Source, d costpower.Design, prompt, token int, model string) (Cluster, error) {
	if prompt > costpower.MaxPoolMachines || token > costpower.MaxPoolMachines {
		return Cluster{}, fmt.Errorf("%s: at most %d machines a pool, got %d and %d", d.Name, costpower.MaxPoolMachines, prompt, token)
	}
	cl, err := cat.ClusterOf(d, prompt, token)
	if err != nil {
		return Cluster{}, err
	}
	m, err := cat.Model(model)
	if err != nil {
		return Cluster{}, err
	}
	return withModels(cl, m, src)
}

// ServingCluster is NewCluster for a cluster that is to serve its model:
// it also refuses one whose machines cannot hold a replica (Unfit), as
// every command that simulates does before its first simulation.
func ServingCluster(cat *costpower.Catalog, src Source, d costpower.Design, prompt, token int, model string) (Cluster, error) {
	cl, err := NewCluster(cat, src, d, prompt, token, model)
	if err != nil {
		return Cluster{}, err
	}
	if err := cl.Unfit(); err != nil {
		return Cluster{}, err
	}
	return cl, nil
}

// WithSource is the cluster with its performance and power models
// resolved again from src (e.g. the analytic model, so that a comparison
// has one provenance): the same machines, model and batching policy.
func (c Cluster) WithSource(src Source) (Cluster, error) {
	out, err := withModels(c.Cluster, c.Model, src)
	if err != nil {
		return Cluster{}, err
	}
	out.Policy, out.PolicyInName = c.Policy, c.PolicyInName
	return out, nil
}

// withModels is cluster cl serving model m with its machine types'
// performance and power models from src, both pools from one provenance
// (Source.ForSpace).
func withModels(cl costpower.Cluster, m costpower.Model, src Source) (Cluster, error) {
	var err error
	out := Cluster{Cluster: cl, Model: m, Compat: src.Compat}
	src = src.ForSpace(m, []costpower.Machine{cl.PromptType, cl.TokenType})
	if out.PromptPerf, out.PromptProvenance, err = src.Resolve(m, cl.PromptType); err != nil {
		return Cluster{}, err
	}
	if out.TokenPerf, out.TokenProvenance, err = src.Resolve(m, cl.TokenType); err != nil {
		return Cluster{}, err
	}
	setPowers(&out, src) // power.go
	return out, nil
}

// NamedCluster is NewCluster for a design named by a user (an example, a
// test, a tool): it resolves the name once (costpower.Catalog.Design),
// then the design's value.
func NamedCluster(cat *costpower.Catalog, src Source, design string, prompt, token int, model string) (Cluster, error) {
	d, err := cat.Design(design)
	if err != nil {
		return Cluster{}, err
	}
	return NewCluster(cat, src, d, prompt, token, model)
}

// Design resolves a design a user names, with an optional batching-policy
// suffix ("Baseline-H100+sarathi", "hh"), against the catalog: the design
// (costpower.Catalog.ResolveDesign: a catalog name or alias, or a name the
// tool generates, which joins cat) and the policy; named reports whether
// the name had a suffix. It is where a design's name becomes its value, at
// the command line's edge: from here on the value travels, and nothing
// looks the name up again.
func Design(cat *costpower.Catalog, name string) (d costpower.Design, policy evaluator.Policy, named bool, err error) {
	design, policy, named, err := SplitDesignPolicy(name)
	if err != nil {
		return costpower.Design{}, evaluator.Policy{}, false, err
	}
	if d, err = cat.ResolveDesign(design); err != nil {
		return costpower.Design{}, evaluator.Policy{}, false, err
	}
	return d, policy, named, nil
}

// SplitDesignPolicy splits a design name with an optional batching-policy
// suffix, such as "Baseline-H100+sarathi", into the design and the policy;
// named reports whether there was a suffix. The policy is validated; the
// design is returned as written (trimmed), for the catalog to resolve.
func SplitDesignPolicy(name string) (design string, policy evaluator.Policy, named bool, err error) {
	i := strings.LastIndex(name, "+")
	if i < 0 {
		return strings.TrimSpace(name), evaluator.Policy{}, false, nil
	}
	design, suffix := strings.TrimSpace(name[:i]), strings.TrimSpace(name[i+1:])
	if design == "" {
		return "", evaluator.Policy{}, false, fmt.Errorf("design %q: expected a design name before the %q policy suffix", name, "+")
	}
	if suffix == "" {
		return "", evaluator.Policy{}, false, fmt.Errorf("design %q: expected a batching policy after %q (valid: %s)", name, "+", strings.Join(evaluator.Policies(), ", "))
	}
	policy, err = evaluator.ParsePolicy(suffix)
	if err != nil {
		return "", evaluator.Policy{}, false, fmt.Errorf("design %q: %w", name, err)
	}
	return design, policy, true, nil
}

// String names the cluster, with its policy when the design was named
// with it, e.g. "Baseline-H100+sarathi ×40".
func (c Cluster) String() string {
	s := c.Cluster.String()
	if !c.PolicyInName || c.Policy.IsDefault() {
		return s
	}
	return strings.Replace(s, c.Design.Name, c.Design.Name+"+"+c.Policy.String(), 1)
}

// Simulated is the cluster as the simulator runs it: every model replica
// of a machine that serves several (tensor parallelism below its GPUs) as
// a machine of its own (costpower.Machine.Instance), so Prompt and Token
// count replicas; the same cluster when every machine serves one.
func (c Cluster) Simulated() Cluster {
	kp, kt := c.PromptType.InstancesPerMachine(), c.TokenType.InstancesPerMachine()
	if kp == 1 && kt == 1 {
		return c
	}
	out := c
	out.PromptType, out.TokenType = c.PromptType.Instance(), c.TokenType.Instance()
	out.Prompt, out.Token = c.Prompt*kp, c.Token*kt
	return out
}

// Provenance describes where the cluster's performance models come from:
// one provenance when both machine types share it, else "prompt …; token …".
func (c Cluster) Provenance() string {
	if c.PromptProvenance == c.TokenProvenance {
		return c.PromptProvenance.String()
	}
	return "prompt " + c.PromptProvenance.String() + "; token " + c.TokenProvenance.String()
}

// Sim is the cluster as evaluator.Evaluate takes it: Simulated's machines
// (a machine serving several model replicas runs them as machines, so the
// result's machines are replicas), each type's KV-cache capacity from the
// memory model (with Compat, the reference's rule), the links between the
// types (costpower.LinkBetween), and the performance and power models.
func (c Cluster) Sim() evaluator.Cluster {
	s := c.Simulated()
	types := [2]costpower.Machine{s.PromptType, s.TokenType}
	out := evaluator.Cluster{
		Name: c.Design.Name, Baseline: c.Design.IsBaseline(),
		Prompt: s.Prompt, Token: s.Token,
		KVBytesPerToken: c.KVBytesPerToken(), Compat: c.Compat, Policy: c.Policy,
		PromptType: s.machineType(s.PromptType, s.PromptPerf, s.PromptProvenance, s.PromptPower),
		TokenType:  s.machineType(s.TokenType, s.TokenPerf, s.TokenProvenance, s.TokenPower),
	}
	for a := range types {
		for b := range types {
			l := &out.Links[a][b]
			l.BytesPerS, l.LayerwiseS = costpower.LinkBetween(types[a], types[b])
		}
	}
	return out
}

// KVBytesPerToken is the KV-cache size of one token of the cluster's
// model as the simulator counts it: the memory model's, or with Compat
// the reference simulator's (costpower.Model.ReferenceKVBytesPerToken).
// The one place the cluster's compat mode picks the KV rule.
func (c Cluster) KVBytesPerToken() int64 {
	if c.Compat {
		return c.Model.ReferenceKVBytesPerToken()
	}
	return c.Model.KVBytesPerToken()
}

// KVCapacityBytes is the KV cache one model replica holds on machine
// type mc, in bytes of KVBytesPerToken: the memory model's, or with
// Compat the reference simulator's rule.
func (c Cluster) KVCapacityBytes(mc costpower.Machine) int64 {
	if c.Compat {
		return c.Model.ReferenceKVCapacityBytes(mc)
	}
	return c.Model.KVCapacityBytes(mc)
}

// machineType is machine type mc of the cluster as the simulator sees it,
// with why one machine cannot hold the model (unfit) when it cannot.
func (c Cluster) machineType(mc costpower.Machine, pm perf.IterationModel, pv perf.Provenance, pw *power.Model) evaluator.MachineType {
	t := evaluator.MachineType{Name: mc.Name, Perf: pm, Provenance: pv, Power: pw,
		KVCapacityBytes: c.KVCapacityBytes(mc)}
	if t.KVCapacityBytes <= 0 {
		t.Unfit = c.unfit(mc)
	}
	return t
}

// Unfit says why one machine of the cluster's prompt or token type
// cannot hold a replica of its model with room for a token of KV cache
// (the memory model's sizes, or the reference simulator's rule with
// Compat); nil when both can. A search leaves such a design out before
// it simulates any of its points, as it does a design no performance
// model covers.
func (c Cluster) Unfit() error {
	for _, mc := range []costpower.Machine{c.PromptType, c.TokenType} {
		if c.KVCapacityBytes(mc) <= 0 {
			return c.unfit(mc)
		}
	}
	return nil
}

// unfit is why machine type mc, whose KV cache for the cluster's model
// holds nothing, cannot serve it: the memory model's sizes (its weights,
// or a cache too small for one token), else the reference's rule.
func (c Cluster) unfit(mc costpower.Machine) error {
	if !c.Compat {
		b, err := c.Model.Memory(mc)
		if err != nil {
			return fmt.Errorf("machine type %s: %w", mc.Name, err)
		}
		return fmt.Errorf("machine type %s: %s holds no token of KV cache on %s·tp%d: one token takes %s per GPU, and %s per GPU is left after its weights (%s) and the activation, CUDA-graph and communication reserve",
			mc.Name, c.Model.Name, mc.GPULabel(), max(mc.TensorParallel, 1), gib(b.KVBytesPerToken), gib(b.KV), gib(b.Weights))
	}
	return fmt.Errorf("%s (%d bytes of weights) does not fit in a %s (%d bytes of GPU memory)",
		c.Model.Name, c.Model.ReferenceWeightBytes(), mc.Name, mc.MemoryBytes())
}

// gib writes bytes in GiB, or in bytes below a tenth of one.
func gib(b float64) string {
	if b < 0.1*costpower.GiB {
		return fmt.Sprintf("%.4g bytes", b)
	}
	return fmt.Sprintf("%.1f GiB", b/costpower.GiB)
}
