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
func applyTables[T any](md toml.MetaData, kind string, tables []toml.Primitive, list *[]T,
	name func(T) string, defaults func(*T)) error {
	for i, p := range tables {
		var n named
		if err := md.PrimitiveDecode(p, &n); err != nil {
			return fmt.Errorf("%s %d: %w", kind, i+1, err)
		}
		if n.Name == "" {
			return fmt.Errorf("%s %d: name is missing", kind, i+1)
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
