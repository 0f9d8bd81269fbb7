package costpower

import (
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
)

// Design names the tool generates, and which ResolveDesign reads back:
//
//   - a catalog design or one of its aliases: "Splitwise-HH", "HH";
//   - a design over a GPU at a tensor parallelism (optimize --gpus), by its
//     display name or its ASCII alias: "Baseline H100·tp2",
//     "Baseline-H100-tp2", "Splitwise H200·tp1 / H100·tp2",
//     "Splitwise-H200-tp1-H100-tp2"; a GPU may carry a power cap in percent
//     of board power ("H100@70·tp2", "H100@70-tp2") or be the catalog's
//     capped type ("H100cap·tp8");
//   - a design with its pools capped (optimize --power-caps): a catalog or
//     generated design, "@" and its cap in percent, and for a Splitwise
//     design "-" and its token pool's cap: "Baseline-H100@70",
//     "Splitwise-HH@100-70", "Splitwise-HH@72.5-50".

// labelPattern is one instance type of a generated name: its GPU label (a
// family, optionally "cap" or "@" and a cap in percent) and "·tp" or "-tp"
// and its tensor parallelism.
const labelPattern = `([A-Za-z0-9]+?)((?:cap)?(?:@[0-9]+(?:\.[0-9]+)?)?)(?:·|-)tp([0-9]+)`

var (
	baselineName  = regexp.MustCompile(`^(?i)baseline[ -]` + labelPattern + `$`)
	splitwiseName = regexp.MustCompile(`^(?i)splitwise[ -]` + labelPattern + `(?: / |-)` + labelPattern + `$`)
	cappedName    = regexp.MustCompile(`^(.+?)@([0-9]+(?:\.[0-9]+)?)(?:-([0-9]+(?:\.[0-9]+)?))?$`)
)

// DesignAlias is a design's name as a command line or a file name types
// it, in ASCII: "Splitwise H200·tp1 / H100·tp2" → "Splitwise-H200-tp1-H100-tp2",
// "Baseline H100·tp2" → "Baseline-H100-tp2". An ASCII name is unchanged.
func DesignAlias(name string) string {
	return strings.NewReplacer(" / ", "-", "·", "-", " ", "-").Replace(name)
}

// ResolveDesign returns the design called name: a catalog design or alias
// (Design), else a name the tool generates for a GPU pair (optimize
// --gpus, with or without power caps) or a capped design (optimize
// --power-caps), display name or ASCII alias, in any case. A generated
// design and the machine types it needs are added to c (as optimize adds
// them), so that c.Design finds it afterwards under its display name and
// its alias. It is not safe for concurrent use with other methods of c.
func (c *Catalog) ResolveDesign(name string) (Design, error) {
	name = strings.TrimSpace(name)
	if d, err := c.Design(name); err == nil {
		return d, nil
	}
	d, ok, err := c.resolveGenerated(name)
	if !ok {
		d, ok, err = c.resolveCapped(name)
	}
	if !ok {
		_, err = c.Design(name)
		return Design{}, fmt.Errorf("%w; or a generated name such as \"Baseline-H100-tp2\", \"Splitwise-H200-tp1-H100-tp2\" (optimize --gpus) or \"Splitwise-HH@100-70\" (--power-caps)", err)
	}
	if err != nil {
		return Design{}, fmt.Errorf("design %q: %w", name, err)
	}
	if err := c.Validate(); err != nil {
		return Design{}, fmt.Errorf("design %q: %w", name, err)
	}
	return d, nil
}

// instanceName is a machine type at a tensor parallelism: a catalog
// machine's name and "·tp" or "-tp" and the TP, e.g. "DGX-A100-tp1".
var instanceName = regexp.MustCompile(`^(.+?)(?:·|-)tp([0-9]+)$`)

// instanceLabel is a GPU label at a tensor parallelism, e.g. "A100·tp1".
var instanceLabel = regexp.MustCompile(`^` + labelPattern + `$`)

// ResolveMachine returns the machine type called name: a catalog machine
// type, else one at a tensor parallelism below its GPUs by the name the
// tool gives it ("DGX-A100·tp1", "DGX-A100-tp1") or by its GPU label
// ("A100·tp1", "A100-tp1", "H100@70-tp2"), which is added to c (as a
// generated design's types are). It is not safe for concurrent use with
// other methods of c.
func (c *Catalog) ResolveMachine(name string) (Machine, error) {
	name = strings.TrimSpace(name)
	m, err := c.Machine(name)
	if err == nil {
		return m, nil
	}
	var inst Machine
	var ierr error
	if g := instanceName.FindStringSubmatch(name); g != nil {
		if base, berr := c.Machine(g[1]); berr == nil {
			n, _ := strconv.Atoi(g[2])
			inst, ierr = base.WithTP(n)
		} else if l := instanceLabel.FindStringSubmatch(name); l != nil {
			inst, ierr = c.instanceType(l[1], l[2], l[3])
		} else {
			ierr = err
		}
		if ierr == nil {
			c.addGenerated(Design{}, inst)
			return c.Machine(inst.Name)
		}
		if ierr != err {
			return Machine{}, fmt.Errorf("machine type %q: %w", name, ierr)
		}
	}
	return Machine{}, fmt.Errorf("%w; or one at a tensor parallelism, e.g. \"DGX-A100-tp1\" or \"A100·tp1\"", err)
}

// resolveGenerated reads a GPU-pair name; ok reports whether name has
// that shape.
func (c *Catalog) resolveGenerated(name string) (d Design, ok bool, err error) {
	if m := baselineName.FindStringSubmatch(name); m != nil {
		inst, err := c.instanceType(m[1], m[2], m[3])
		if err != nil {
			return Design{}, true, err
		}
		n := BaselineName(inst)
		return c.addGenerated(Design{Name: n, Aliases: []string{DesignAlias(n)}, Kind: KindBaseline, Machine: inst.Name, Extra: true}, inst), true, nil
	}
	if m := splitwiseName.FindStringSubmatch(name); m != nil {
		p, err := c.instanceType(m[1], m[2], m[3])
		if err != nil {
			return Design{}, true, fmt.Errorf("prompt pool: %w", err)
		}
		t, err := c.instanceType(m[4], m[5], m[6])
		if err != nil {
			return Design{}, true, fmt.Errorf("token pool: %w", err)
		}
		n := SplitwiseName(p, t)
		return c.addGenerated(Design{Name: n, Aliases: []string{DesignAlias(n)}, Kind: KindSplitwise, Prompt: p.Name, Token: t.Name, Extra: true}, p, t), true, nil
	}
	return Design{}, false, nil
}

// addGenerated adds design d and its machine types to c unless present,
// and returns the catalog's design (the machine types alone for a design
// without a name).
func (c *Catalog) addGenerated(d Design, ms ...Machine) Design {
	for _, m := range ms {
		if _, err := c.Machine(m.Name); err != nil {
			c.Machines = append(c.Machines, m)
		}
	}
	if d.Name == "" {
		return d
	}
	if have, err := c.Design(d.Name); err == nil {
		return have
	}
	c.Designs = append(c.Designs, d)
	return d
}

// instanceType builds the instance type of a generated name's label: GPU
// gpu (a --gpus name), capSuffix "", "cap" (the catalog's capped type of
// that GPU), "@P" (capped at P percent) or "cap@P" (the capped type capped
// anew), tensor parallelism tp, as AddCappedGPUDesigns builds it.
func (c *Catalog) instanceType(gpu, capSuffix, tp string) (Machine, error) {
	n, err := strconv.Atoi(tp)
	if err != nil {
		return Machine{}, fmt.Errorf("tensor parallelism %q is not a number", tp)
	}
	// The type before its cap: the GPU's uncapped type, or its capped
	// catalog type ("cap").
	at := strings.Index(capSuffix, "@")
	label, pct := gpu+capSuffix, ""
	if at >= 0 {
		label, pct = gpu+capSuffix[:at], capSuffix[at+1:]
	}
	var base Machine
	found := false
	if m, err := c.GPUMachine(label); err == nil && strings.EqualFold(m.GPULabel(), label) {
		base, found = m, true
	}
	for _, m := range c.Machines {
		if found {
			break
		}
		if m.NodeGPUs == 0 && !strings.Contains(m.Name, "·tp") && m.PerfPowerCap == 0 && strings.EqualFold(m.GPULabel(), label) {
			base, found = m, true
		}
	}
	if !found {
		return Machine{}, fmt.Errorf("unknown GPU %q (known: %s)", label, strings.Join(c.GPUFamilies(), ", "))
	}
	inst, err := base.WithTP(n)
	if err != nil {
		return Machine{}, err
	}
	if pct != "" {
		f, err := parseCapPercent(pct)
		if err != nil {
			return Machine{}, err
		}
		if inst, err = inst.WithCap(f); err != nil {
			return Machine{}, err
		}
	}
	return inst, nil
}

// parseCapPercent reads a cap in percent of board power ("70", "72.5")
// as a fraction, rounded as ParseCaps rounds.
func parseCapPercent(s string) (float64, error) {
	p, err := strconv.ParseFloat(s, 64)
	if err != nil || !(p > 0 && p <= 100) {
		return 0, fmt.Errorf("power cap %q: expected a percent of board power in (0, 100]", s)
	}
	return math.Round(p*1e4) / 1e6, nil
}

// resolveCapped reads a capped design's name (CappedDesignName); ok
// reports whether name has that shape and names a design before its caps.
func (c *Catalog) resolveCapped(name string) (d Design, ok bool, err error) {
	m := cappedName.FindStringSubmatch(name)
	if m == nil {
		return Design{}, false, nil
	}
	base, err := c.Design(m[1])
	if err != nil {
		var gok bool
		if base, gok, err = c.resolveGenerated(m[1]); !gok {
			return Design{}, false, nil
		}
		if err != nil {
			return Design{}, true, err
		}
	}
	pn, tn := base.Prompt, base.Token
	if base.IsBaseline() {
		pn, tn = base.Machine, base.Machine
		if m[3] != "" {
			return Design{}, true, fmt.Errorf("%s is a baseline: it takes one cap, e.g. %s@70", base.Name, DesignAlias(base.Name))
		}
	} else if m[3] == "" {
		return Design{}, true, fmt.Errorf("%s is a Splitwise design: it takes a prompt cap and a token cap, e.g. %s@100-70", base.Name, DesignAlias(base.Name))
	}
	pm, err := c.Machine(pn)
	if err != nil {
		return Design{}, true, err
	}
	tm, err := c.Machine(tn)
	if err != nil {
		return Design{}, true, err
	}
	pc, err := parseCapPercent(m[2])
	if err != nil {
		return Design{}, true, err
	}
	tc := 0.0
	if !base.IsBaseline() {
		if tc, err = parseCapPercent(m[3]); err != nil {
			return Design{}, true, err
		}
	}
	n, err := c.addCappedVariant(base, pm, tm, pc, tc)
	if err != nil {
		return Design{}, true, err
	}
	d, err = c.Design(n)
	return d, true, err
}
