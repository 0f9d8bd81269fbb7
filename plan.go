package main

import (
	"bytes"
	"fmt"
	"os"
	"strings"

	"github.com/BurntSushi/toml"

	"splitplan/costpower"
	"splitplan/evaluator"
	"splitplan/evaluator/perf"
)

// planFile is the layout of a --plan TOML file: each package's section.
type planFile struct {
	Machines []toml.Primitive `toml:"machine"`
	Models   []toml.Primitive `toml:"model"`
	Designs  []toml.Primitive `toml:"design"`
	Perf     []perf.Pair      `toml:"perf"`
	// Optimize is the experiment an optimize run performs (plan_optimize.go).
	Optimize *optimizeConfig `toml:"optimize"`
}

// plan is what a plan file (or the built-in defaults) gives the commands.
type plan struct {
	Catalog *costpower.Catalog
	Perf    *perf.Table
	// Optimize is the plan's [optimize] table (nil when it has none).
	Optimize *optimizeConfig
}

// perfSource is where the plan's performance models come from: its
// profiled pairs, then the analytic model with the built-in calibration.
func (p *plan) perfSource() evaluator.PerfSource {
	src := evaluator.DefaultPerfSource()
	src.Table = p.Perf
	return src
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
	if und := md.Undecoded(); len(und) > 0 {
		keys := make([]string, len(und))
		for i, k := range und {
			keys[i] = k.String()
			if len(k) > 0 && k[0] == "optimize" {
				return fmt.Errorf("%s: unknown key %s in [optimize] (known: %s)", name, k.String(), strings.Join(optimizeKeys(), ", "))
			}
		}
		return fmt.Errorf("%s: unknown key %s (a plan has [[machine]], [[model]], [[design]] and [[perf]] tables and an [optimize] table; see examples/)",
			name, strings.Join(keys, ", "))
	}
	if f.Optimize != nil {
		if err := f.Optimize.checkTable(name); err != nil {
			return err
		}
		p.Optimize = f.Optimize
	}
	for i := range f.Perf {
		if err := f.Perf[i].Validate(); err != nil {
			return fmt.Errorf("%s: [[perf]] %d: %w", name, i+1, err)
		}
		p.Perf.Add(f.Perf[i])
	}
	return nil
}
