package costpower

import (
	"fmt"
	"strings"

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
// and its gpu_power_cap to 1 (uncapped). The result is validated; errors
// name the table ("machine 2") and the key.
func (c *Catalog) Apply(md toml.MetaData, s Section) error {
	for i, p := range s.Machines {
		var n named
		if err := md.PrimitiveDecode(p, &n); err != nil {
			return fmt.Errorf("machine %d: %w", i+1, err)
		}
		if n.Name == "" {
			return fmt.Errorf("machine %d: name is missing", i+1)
		}
		idx := -1
		for j := range c.Machines {
			if strings.EqualFold(c.Machines[j].Name, n.Name) {
				idx = j
			}
		}
		var m Machine
		if idx >= 0 {
			m = c.Machines[idx]
		}
		if err := md.PrimitiveDecode(p, &m); err != nil {
			return fmt.Errorf("machine %d (%q): %w", i+1, n.Name, err)
		}
		if m.TensorParallel == 0 {
			m.TensorParallel = m.GPUs
		}
		if m.GPUPowerCap == 0 {
			m.GPUPowerCap = 1
		}
		if idx >= 0 {
			c.Machines[idx] = m
		} else {
			c.Machines = append(c.Machines, m)
		}
	}
	for i, p := range s.Models {
		var n named
		if err := md.PrimitiveDecode(p, &n); err != nil {
			return fmt.Errorf("model %d: %w", i+1, err)
		}
		if n.Name == "" {
			return fmt.Errorf("model %d: name is missing", i+1)
		}
		idx := -1
		for j := range c.Models {
			if strings.EqualFold(c.Models[j].Name, n.Name) {
				idx = j
			}
		}
		var m Model
		if idx >= 0 {
			m = c.Models[idx]
		}
		if err := md.PrimitiveDecode(p, &m); err != nil {
			return fmt.Errorf("model %d (%q): %w", i+1, n.Name, err)
		}
		if m.KVHeads == 0 {
			m.KVHeads = m.Heads
		}
		if idx >= 0 {
			c.Models[idx] = m
		} else {
			c.Models = append(c.Models, m)
		}
	}
	for i, p := range s.Designs {
		var n named
		if err := md.PrimitiveDecode(p, &n); err != nil {
			return fmt.Errorf("design %d: %w", i+1, err)
		}
		if n.Name == "" {
			return fmt.Errorf("design %d: name is missing", i+1)
		}
		idx := -1
		for j := range c.Designs {
			if strings.EqualFold(c.Designs[j].Name, n.Name) {
				idx = j
			}
		}
		var d Design
		if idx >= 0 {
			d = c.Designs[idx]
			d.Aliases = append([]string(nil), d.Aliases...)
		}
		if err := md.PrimitiveDecode(p, &d); err != nil {
			return fmt.Errorf("design %d (%q): %w", i+1, n.Name, err)
		}
		if idx >= 0 {
			c.Designs[idx] = d
		} else {
			c.Designs = append(c.Designs, d)
		}
	}
	return c.Validate()
}
