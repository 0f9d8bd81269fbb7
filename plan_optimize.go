package main

import (
	"bytes"
	"fmt"
	"math"
	"os"
	"sort"
	"strconv"
	"strings"

	"github.com/BurntSushi/toml"
	"github.com/urfave/cli/v2"
)

// optimizeSection is the [optimize] table of a plan file: an experiment
// that `splitplan optimize --plan FILE` runs with no other flags. Every key
// is optional; a flag given on the command line wins over its key.
type optimizeSection struct {
	// Goal is cost, power, throughput or batch.
	Goal string `toml:"goal"`
	// RPS is the target rate of the cost and power goals.
	RPS float64 `toml:"rps"`
	// PowerBudgetKW or CostBudgetUSDPerH bounds the throughput and batch goals.
	PowerBudgetKW     float64 `toml:"power_budget_kw"`
	CostBudgetUSDPerH float64 `toml:"cost_budget_usd_per_h"`
	// Workload is a built-in size distribution; Trace a trace file
	// (relative to the plan file's directory when not absolute).
	Workload string `toml:"workload"`
	Trace    string `toml:"trace"`
	// Model is the LLM served.
	Model string `toml:"model"`
	// Designs are the designs searched (default all).
	Designs []string `toml:"designs"`
	// Duration is the length of each simulated workload: "120s", "2m".
	Duration string `toml:"duration"`
	// Seed seeds the workload (signed, so a negative number is caught).
	Seed *int64 `toml:"seed"`
	// MaxMachines bounds each pool.
	MaxMachines int `toml:"max_machines"`
	// Seeds replicates the workload: every seed's trace must pass.
	Seeds int `toml:"seeds"`
	// Precision is the relative precision of capacities.
	Precision float64 `toml:"precision"`
	// SLOTTFT, SLOTBT and SLOE2E are P50, P90, P99 slowdown factors.
	SLOTTFT []float64 `toml:"slo_ttft"`
	SLOTBT  []float64 `toml:"slo_tbt"`
	SLOE2E  []float64 `toml:"slo_e2e"`
	// SLOAbsolute maps SLOs to absolute limits in seconds, e.g.
	// { tbt_p99 = 0.2, ttft_p90 = 2.0 }.
	SLOAbsolute map[string]float64 `toml:"slo_abs"`
	// SLOReference is the machine type slowdowns are measured against.
	SLOReference string `toml:"slo_reference"`
	// AbortAfter stops unsustainable simulations: "30s", or "0" for never.
	AbortAfter string `toml:"abort_after"`
	// Compat is "splitwise-sim" to reproduce the reference simulator.
	Compat string `toml:"compat"`
}

// readOptimizeSection reads the [optimize] table of the plan file at path
// (nil when it has none), rejecting unknown keys in it.
func readOptimizeSection(path string) (*optimizeSection, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, badInputf("--plan: %v", err)
	}
	var f struct {
		Optimize *optimizeSection `toml:"optimize"`
	}
	md, err := toml.NewDecoder(bytes.NewReader(data)).Decode(&f)
	if err != nil {
		return nil, badInputf("%s: %v", path, err)
	}
	for _, k := range md.Undecoded() {
		if len(k) > 0 && k[0] == "optimize" {
			return nil, badInputf("%s: unknown key %s in [optimize] (known: goal, rps, power_budget_kw, cost_budget_usd_per_h, workload, trace, model, designs, duration, seed, max_machines, precision, slo_ttft, slo_tbt, slo_e2e, slo_abs, slo_reference, abort_after, compat)", path, k.String())
		}
	}
	return f.Optimize, nil
}

// applyOptimizeSection fills the optimize flags the user did not set from
// the [optimize] table of the --plan file, if any. Explicit flags win; when
// --goal is given on the command line, the table's goal, rate and budgets
// are all left out (they describe its own goal). Call it first thing in
// problemFromFlags.
func applyOptimizeSection(c *cli.Context) error {
	path := c.String("plan")
	if path == "" {
		return nil
	}
	s, err := readOptimizeSection(path)
	if err != nil || s == nil {
		return err
	}
	return s.apply(c, path)
}

// apply sets the flags from s; path names the plan in messages.
func (s *optimizeSection) apply(c *cli.Context, path string) error {
	set := func(flag, value string) error {
		if c.IsSet(flag) || value == "" {
			return nil
		}
		if err := c.Set(flag, value); err != nil {
			return badInputf("%s: [optimize] %s: %v", path, strings.ReplaceAll(flag, "-", "_"), err)
		}
		return nil
	}
	num := func(v float64) string {
		if v == 0 {
			return ""
		}
		return strconv.FormatFloat(v, 'g', -1, 64)
	}
	for _, kv := range []struct {
		key string
		v   float64
	}{{"rps", s.RPS}, {"power_budget_kw", s.PowerBudgetKW}, {"cost_budget_usd_per_h", s.CostBudgetUSDPerH}, {"precision", s.Precision}} {
		if kv.v < 0 || math.IsNaN(kv.v) || math.IsInf(kv.v, 0) {
			return badInputf("%s: [optimize] %s must be positive, got %v", path, kv.key, kv.v)
		}
	}
	if s.MaxMachines < 0 {
		return badInputf("%s: [optimize] max_machines must be positive, got %d", path, s.MaxMachines)
	}
	if s.Workload != "" && s.Trace != "" {
		return badInputf("%s: [optimize] workload and trace are exclusive: give one of them", path)
	}
	if !c.IsSet("goal") {
		// The table's goal comes with its own rate or budget.
		if err := set("goal", s.Goal); err != nil {
			return err
		}
		if !c.IsSet("rps") && !c.IsSet("power-budget") && !c.IsSet("cost-budget") {
			for _, kv := range [][2]string{{"rps", num(s.RPS)}, {"power-budget", num(s.PowerBudgetKW)}, {"cost-budget", num(s.CostBudgetUSDPerH)}} {
				if err := set(kv[0], kv[1]); err != nil {
					return err
				}
			}
		}
	}
	if !c.IsSet("workload") && !c.IsSet("trace") {
		trace := s.Trace
		if trace != "" && !strings.HasPrefix(trace, "/") {
			if dir := dirOf(path); dir != "" {
				trace = dir + "/" + trace
			}
		}
		if err := set("workload", s.Workload); err != nil {
			return err
		}
		if err := set("trace", trace); err != nil {
			return err
		}
	}
	for _, kv := range [][2]string{{"model", s.Model}, {"designs", strings.Join(s.Designs, ",")}, {"duration", s.Duration},
		{"slo-reference", s.SLOReference}, {"abort-after", s.AbortAfter}, {"compat", s.Compat}, {"precision", num(s.Precision)}} {
		if err := set(kv[0], kv[1]); err != nil {
			return err
		}
	}
	if s.MaxMachines > 0 {
		if err := set("max-machines", strconv.Itoa(s.MaxMachines)); err != nil {
			return err
		}
	}
	if s.Seeds != 0 {
		if err := set("seeds", strconv.Itoa(s.Seeds)); err != nil {
			return err
		}
	}
	if s.Seed != nil {
		if *s.Seed < 0 {
			return badInputf("%s: [optimize] seed must be zero or positive, got %d", path, *s.Seed)
		}
		if err := set("seed", strconv.FormatInt(*s.Seed, 10)); err != nil {
			return err
		}
	}
	for _, kv := range []struct {
		flag string
		v    []float64
	}{{"slo-ttft", s.SLOTTFT}, {"slo-tbt", s.SLOTBT}, {"slo-e2e", s.SLOE2E}} {
		if kv.v == nil {
			continue
		}
		if len(kv.v) != 3 {
			return badInputf("%s: [optimize] %s: expected three factors [P50, P90, P99], got %d", path, strings.ReplaceAll(kv.flag, "-", "_"), len(kv.v))
		}
		parts := make([]string, 3)
		for i, v := range kv.v {
			parts[i] = strconv.FormatFloat(v, 'g', -1, 64)
		}
		if err := set(kv.flag, strings.Join(parts, ",")); err != nil {
			return err
		}
	}
	if len(s.SLOAbsolute) > 0 {
		keys := make([]string, 0, len(s.SLOAbsolute))
		for k := range s.SLOAbsolute {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		parts := make([]string, len(keys))
		for i, k := range keys {
			parts[i] = fmt.Sprintf("%s=%s", k, strconv.FormatFloat(s.SLOAbsolute[k], 'g', -1, 64))
		}
		if err := set("slo-abs", strings.Join(parts, ",")); err != nil {
			return err
		}
	}
	return nil
}

func dirOf(path string) string {
	if i := strings.LastIndex(path, "/"); i >= 0 {
		return path[:i]
	}
	return ""
}
