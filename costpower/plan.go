package costpower

import (
	"fmt"
	"strings"

	"splitplan/arch"

	"github.com/BurntSushi/toml"
)

// Section is the part of a plan file that costpower owns: its
// [[machine]], [[model]] and [[design]] tables, kept undecoded until Apply.
type Section struct {
	Machines []toml.Primitive `toml:"machine"`
	Models   []toml.Primitive `toml:"model"`
	Designs  []toml.Primitive `toml:"design"`
}

type named struct {
	Name string `toml:"name"`
}

// Apply decodes the tables of s onto c. A table whose name matches an
// existing entry (in any case) changes only the keys it sets; a new name
// adds an entry. A machine type's tensor_parallel defaults to its gpus
// and its gpu_power_cap to 1 (uncapped); a model's kv_heads to its heads.
// The result is validated; errors name the table ("machine 2") and the key.
func (c *Catalog) Apply(md toml.MetaData, s Section) error {
	err := applyTables(md, "machine", s.Machines, &c.Machines,
		func(m Machine) string { return m.Name },
		func(m *Machine) {
			if m.TensorParallel == 0 {
				m.TensorParallel = m.GPUs
			}
			if m.GPUPowerCap == 0 {
				m.GPUPowerCap = 1
			}
		})
	if err != nil {
		return err
	}
	before := map[string]Model{}
	for _, m := range c.Models {
		before[strings.ToLower(m.Name)] = m
	}
	err = applyTables(md, "model", s.Models, &c.Models,
		func(m Model) string { return m.Name },
		func(m *Model) {
			if m.KVHeads == 0 {
				m.KVHeads = m.Heads
			}
		})
	if err != nil {
		return err
	}
	for i, m := range c.Models {
		c.Models[i] = resized(before[strings.ToLower(m.Name)], m)
	}
	err = applyTables(md, "design", s.Designs, &c.Designs,
		func(d Design) string { return d.Name },
		func(d *Design) {})
	if err != nil {
		return err
	}
	return c.Validate()
}

// applyTables decodes each table onto the entry of list with its name (a
// copy of it), or onto a new entry, then fills defaults.
//
// Two tables of one name are refused (the second would silently win), and
// so is a key whose zero means "the default" written as 0 (zeroDefault):
// leaving it out asks for the default.
func applyTables[T any](md toml.MetaData, kind string, tables []toml.Primitive, list *[]T,
	name func(T) string, defaults func(*T)) error {
	first := map[string]int{}
	for i, p := range tables {
		var n named
		if err := md.PrimitiveDecode(p, &n); err != nil {
			return fmt.Errorf("%s %d: %w", kind, i+1, err)
		}
		if n.Name == "" {
			return fmt.Errorf("%s %d: name is missing", kind, i+1)
		}
		if j, dup := first[strings.ToLower(n.Name)]; dup {
			return fmt.Errorf("%s %d: %q is also %s %d's name: give each %s one table", kind, i+1, n.Name, kind, j, kind)
		}
		first[strings.ToLower(n.Name)] = i + 1
		// (Decoded into pointers, which mark only keys the table's own
		// decoding marks, so unknown keys are still reported.)
		var z zeroKeys
		if err := md.PrimitiveDecode(p, &z); err != nil {
			return fmt.Errorf("%s %d (%q): %w", kind, i+1, n.Name, err)
		}
		if k := z.zero(); k != "" {
			return fmt.Errorf("%s %d (%q): %s = 0: leave the key out for its default", kind, i+1, n.Name, k)
		}
		idx := -1
		for j := range *list {
			if strings.EqualFold(name((*list)[j]), n.Name) {
				idx = j
			}
		}
		var v T
		if idx >= 0 {
			v = (*list)[idx]
		}
		if d, ok := any(&v).(*Design); ok {
			d.Aliases = append([]string(nil), d.Aliases...) // do not share with the original
		}
		if err := md.PrimitiveDecode(p, &v); err != nil {
			return fmt.Errorf("%s %d (%q): %w", kind, i+1, n.Name, err)
		}
		defaults(&v)
		if idx >= 0 {
			(*list)[idx] = v
		} else {
			*list = append(*list, v)
		}
	}
	return nil
}

// zeroKeys are the keys of the plan's tables whose zero value stands for
// a default (Apply's defaults, Machine.GPUMemoryUtilization's 0.9): nil
// when the table leaves them out.
type zeroKeys struct {
	TensorParallel       *float64 `toml:"tensor_parallel"`
	GPUPowerCap          *float64 `toml:"gpu_power_cap"`
	GPUMemoryUtilization *float64 `toml:"gpu_memory_utilization"`
	KVHeads              *float64 `toml:"kv_heads"`
}

// zero names the first key written as 0 ("" when none is).
func (z zeroKeys) zero() string {
	for _, k := range []struct {
		name string
		v    *float64
	}{{"tensor_parallel", z.TensorParallel}, {"gpu_power_cap", z.GPUPowerCap}, {"gpu_memory_utilization", z.GPUMemoryUtilization}, {"kv_heads", z.KVHeads}} {
		if k.v != nil && *k.v == 0 {
			return k.name
		}
	}
	return ""
}

// resized is model m, changed by a plan from old, with its weights and
// per-token KV cache recomputed at its new precision when the plan
// changed the precision of a model with an architecture but not those
// sizes: a plan's precision = "fp8" halves a bf16 model's weights and KV
// cache in the catalog, the GPU/TP choices and the simulator alike.
func resized(old, m Model) Model {
	if strings.EqualFold(old.Precision, m.Precision) || old.Name == "" {
		return m
	}
	a, ok := m.ArchShape()
	if !ok {
		return m
	}
	if _, err := arch.ParsePrecision(m.Precision); err != nil {
		return m // Validate names it
	}
	p := m.ServedPrecision()
	if m.WeightBytes == old.WeightBytes {
		m.WeightBytes = a.WeightBytes(p)
	}
	if m.KVBytes == old.KVBytes {
		m.KVBytes = a.KVBytesPerToken(p.KVCache())
	}
	return m
}
