package costpower

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
)

// NodeGPUShare is the share of a machine's provisioned power its GPUs' cap
// scales, from the paper's DGX-H100cap (SPEC §2: GPUs capped at 50%, the
// machine provisioned at 1.23/1.75 = 70.3% of a DGX-H100): 1 − 0.5 × share
// = 1.23/1.75 gives share ≈ 0.594. The rest (CPUs, NICs, fans, conversion
// losses) keeps its provision under any cap. It is the same constant as
// power.NodeGPUShare (package power imports this one).
const NodeGPUShare = 2 * (1 - 1.23/1.75)

// CapSuffix is the ASCII suffix of a capped variant's name and design
// alias for cap fraction c: "@70" for 0.7 (percent of board power, to
// one decimal when needed: "@72.5").
func CapSuffix(c float64) string {
	return "@" + strconv.FormatFloat(math.Round(c*1000)/10, 'f', -1, 64)
}

// WithCap is machine type m with its GPUs capped at fraction c of board
// power: named m.Name plus CapSuffix(c) (the base name without an
// earlier suffix), its provisioned power rescaled from m's own cap by
// 1 − NodeGPUShare × (1 − cap) (so DGX-H100 at 0.5 gives DGX-H100cap's
// provision), GPUPowerCap c, and PerfPowerCap the cap m's profile holds
// at (the evaluator slows its iteration times by the cap curve). A cap
// equal to m's own returns m unchanged. Its rental price is m's (a cap
// does not lower a rent); cost goals see it through its power only.
func (m Machine) WithCap(c float64) (Machine, error) {
	if !(c > 0 && c <= 1) {
		return Machine{}, fmt.Errorf("machine %q: power cap %v: expected a fraction of board power in (0, 1]", m.Name, c)
	}
	own := m.GPUPowerCap
	if own == 0 {
		own = 1
	}
	if c == own {
		return m, nil
	}
	out := m
	base := m.Name
	if i := strings.Index(base, "@"); i > 0 {
		base = base[:i]
	}
	out.Name = base + CapSuffix(c)
	scale := func(f float64) float64 { return 1 - NodeGPUShare*(1-f) }
	out.PowerKW = m.PowerKW * scale(c) / scale(own)
	if out.PerfPowerCap == 0 {
		out.PerfPowerCap = own
	}
	out.GPUPowerCap = c
	return out, nil
}

// ParseCaps reads a list of power caps: a range lo:hi:step (both ends
// included, to a millionth) or a comma-separated list, each a fraction of
// board power in (0, 1]. The caps come back ascending, without duplicates.
func ParseCaps(s string) ([]float64, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return nil, fmt.Errorf("no power caps: expected lo:hi:step (e.g. 0.5:1.0:0.1) or a comma list (e.g. 0.6,0.8,1)")
	}
	var caps []float64
	if strings.Contains(s, ":") {
		parts := strings.Split(s, ":")
		if len(parts) != 3 {
			return nil, fmt.Errorf("power caps %q: expected lo:hi:step, e.g. 0.5:1.0:0.1", s)
		}
		var v [3]float64
		for i, p := range parts {
			f, err := strconv.ParseFloat(strings.TrimSpace(p), 64)
			if err != nil {
				return nil, fmt.Errorf("power caps %q: %q is not a number", s, p)
			}
			v[i] = f
		}
		lo, hi, step := v[0], v[1], v[2]
		if !(step > 0) || !(hi >= lo) {
			return nil, fmt.Errorf("power caps %q: expected lo ≤ hi and a positive step", s)
		}
		// (Counted as a float: a count beyond an int's range, or infinite,
		// would convert to a negative int and give no caps.)
		nf := math.Floor((hi-lo)/step + 1e-6)
		if !(nf <= 1000) {
			return nil, fmt.Errorf("power caps %q: %g caps, expected at most 1000", s, nf+1)
		}
		n := int(nf)
		for i := 0; i <= n; i++ {
			caps = append(caps, math.Round((lo+float64(i)*step)*1e6)/1e6)
		}
	} else {
		for _, p := range strings.Split(s, ",") {
			f, err := strconv.ParseFloat(strings.TrimSpace(p), 64)
			if err != nil {
				return nil, fmt.Errorf("power caps %q: %q is not a number", s, p)
			}
			caps = append(caps, f)
		}
	}
	out := caps[:0]
	for _, c := range caps {
		if !(c > 0 && c <= 1) {
			return nil, fmt.Errorf("power caps %q: %v is not a fraction of board power in (0, 1]", s, c)
		}
		out = append(out, c)
	}
	slices.Sort(out)
	return slices.Compact(out), nil
}

// CappedDesignName names design d with its prompt pool capped at pc and
// its token pool at tc (a baseline: its machines at pc), in ASCII:
// "Splitwise-HH@100-70", "Baseline-H100@70".
func CappedDesignName(d Design, pc, tc float64) string {
	if d.IsBaseline() {
		return d.Name + CapSuffix(pc)
	}
	return d.Name + CapSuffix(pc) + "-" + strings.TrimPrefix(CapSuffix(tc), "@")
}

// AddCappedDesigns adds to c, for each design named, a variant per power
// cap of caps of its machines: a baseline's machines at each cap, a
// Splitwise design's pools at each (prompt cap, token cap) pair. The
// variant with both pools at their machine types' own caps is the design
// itself, under its own name; the others are named by CappedDesignName
// (capped machine types by WithCap) and searched only when named. It
// returns the designs' names, each design's variants together, highest
// caps first.
func (c *Catalog) AddCappedDesigns(designs []string, caps []float64) ([]string, error) {
	var out []string
	for _, name := range designs {
		d, err := c.ResolveDesign(name)
		if err != nil {
			return nil, err
		}
		pn, tn := d.Prompt, d.Token
		if d.IsBaseline() {
			pn, tn = d.Machine, d.Machine
		}
		pm, err := c.Machine(pn)
		if err != nil {
			return nil, err
		}
		tm, err := c.Machine(tn)
		if err != nil {
			return nil, err
		}
		tcaps := caps
		if d.IsBaseline() {
			tcaps = []float64{0}
		}
		// The highest caps first: the design itself wins ties.
		desc := slices.Clone(caps)
		slices.Reverse(desc)
		if !d.IsBaseline() {
			tcaps = desc
		}
		for _, pc := range desc {
			for _, tc := range tcaps {
				n, err := c.addCappedVariant(d, pm, tm, pc, tc)
				if err != nil {
					return nil, err
				}
				out = append(out, n)
			}
		}
	}
	return out, c.Validate()
}

// addCappedVariant adds to c the variant of design d (its prompt and token
// machine types pm and tm; a baseline's both its machine type) with its
// prompt pool capped at pc and its token pool at tc (a baseline: its
// machines at pc, tc ignored), and the capped machine types it needs, and
// returns its name: d's own name when both caps are the machine types'
// own, else CappedDesignName.
func (c *Catalog) addCappedVariant(d Design, pm, tm Machine, pc, tc float64) (string, error) {
	pv, err := pm.WithCap(pc)
	if err != nil {
		return "", err
	}
	tv := pv
	if !d.IsBaseline() {
		if tv, err = tm.WithCap(tc); err != nil {
			return "", err
		}
	}
	if pv.Name == pm.Name && tv.Name == tm.Name {
		return d.Name, nil
	}
	for _, m := range []Machine{pv, tv} {
		if _, err := c.Machine(m.Name); err != nil {
			c.Machines = append(c.Machines, m)
		}
	}
	v := Design{Name: CappedDesignName(d, pc, tc), Kind: d.Kind, Extra: true}
	if a := DesignAlias(v.Name); a != v.Name {
		v.Aliases = []string{a}
	}
	if d.IsBaseline() {
		v.Machine = pv.Name
	} else {
		v.Prompt, v.Token = pv.Name, tv.Name
	}
	if _, err := c.Design(v.Name); err != nil {
		c.Designs = append(c.Designs, v)
	}
	return v.Name, nil
}
