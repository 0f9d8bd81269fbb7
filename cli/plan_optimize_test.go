package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"splitplan/search"
	"splitplan/slo"

	"github.com/BurntSushi/toml"
	"github.com/urfave/cli/v2"
)

// withOptimizeFlags runs fn on a context holding the optimize command's
// flags parsed from args.
func withOptimizeFlags(t *testing.T, args []string, fn func(c *cli.Context) error) error {
	t.Helper()
	app := newApp(os.Stdout, os.Stderr)
	app.Commands = []*cli.Command{{Name: "x", Flags: optimizeCommand().Flags, Action: fn}}
	withPlanParts(app.Commands)
	return app.Run(append([]string{"splitplan", "x"}, args...))
}

// planTables reads the part tables of a plan file.
func planTables(t *testing.T, path string) map[string]map[string]any {
	t.Helper()
	var f partsFile
	if _, err := toml.DecodeFile(path, &f); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return f.tables()
}

func TestExamplesOptimizeSection(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join("examples", "*.toml"))
	n := 0
	for _, f := range files {
		if _, err := loadPlan(f); err != nil {
			t.Errorf("%s: %v", f, err)
			continue
		}
		s := planTables(t, f)["optimize"]
		if s == nil {
			continue
		}
		n++
		// Every example runs as `splitplan optimize --plan FILE`; short
		// traces and small spaces keep the test fast.
		code, out, errs := runCLI(t, "optimize", "--plan", f, "--duration", "10s", "--max-machines", "6", "--format", "json")
		if code != 0 {
			t.Errorf("%s: exit %d: %s", f, code, errs)
			continue
		}
		if !strings.Contains(out, fmt.Sprintf(`"goal": "%s"`, s["goal"])) {
			t.Errorf("%s: the run's goal is not the plan's %q:\n%s", f, s["goal"], out)
		}
		num := func(k string) float64 { v, _ := s[k].(float64); return v }
		err := withOptimizeFlags(t, []string{"--plan", f}, func(c *cli.Context) error {
			p, err := searchFrom(c, nil, nil)
			if err != nil {
				return err
			}
			if fmt.Sprint(p.Goal) != s["goal"] || p.RateRPS != num("rps") || p.PowerBudgetKW != num("power_budget_kw") || p.CostBudgetUSDPerH != num("cost_budget_usd_per_h") {
				t.Errorf("%s: problem %+v does not match the table %v", f, p, s)
			}
			return nil
		})
		if err != nil {
			t.Errorf("%s: %v", f, err)
		}
	}
	if n < 7 {
		t.Errorf("%d examples have an [optimize] table, want at least 7", n)
	}
}

// TestOptimizeSectionFlagsWin: the command line's goal leaves out the
// plan's goal, rate and budgets; its flags win over the plan's other keys;
// the keys the plan gives and the command line does not are taken.
func TestOptimizeSectionFlagsWin(t *testing.T) {
	dir := t.TempDir()
	plan := filepath.Join(dir, "p.toml")
	os.WriteFile(plan, []byte("[optimize]\ngoal = \"throughput\"\npower_budget_kw = 455.0\n[workload]\nworkload = \"conversation\"\nduration = \"30s\"\nseed = 7\n[slo]\ntbt = [1.5, 2, 6]\nabs = { tbt_p99 = 0.2 }\n"), 0o644)
	err := withOptimizeFlags(t, []string{"--plan", plan, "--goal", "cost", "--rps", "70", "--duration", "10s"}, func(c *cli.Context) error {
		cfg, err := optimizeConfigFrom(c, nil)
		if err != nil {
			return err
		}
		got := fmt.Sprintf("%s %v %s %s %v %v", cfg.Goal, cfg.RPS, cfg.Duration, cfg.Workload, cfg.SLOTBT, cfg.SLOAbsolute)
		if want := "cost 70 10s conversation [1.5 2 6] map[tbt_p99:0.2]"; got != want {
			t.Errorf("configuration %q, want %q", got, want)
		}
		if cfg.given["power-budget"] || cfg.PowerBudgetKW != 0 || cfg.Seed != 7 || !cfg.RPSGiven {
			t.Errorf("power budget given %v (%v), seed %v", cfg.given["power-budget"], cfg.PowerBudgetKW, cfg.Seed)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	// A rate on the command line keeps the plan's goal and leaves out its
	// rate and budgets.
	os.WriteFile(plan, []byte("[optimize]\ngoal = \"power\"\nrps = 20.0\n"), 0o644)
	err = withOptimizeFlags(t, []string{"--plan", plan, "--rps", "35"}, func(c *cli.Context) error {
		cfg, err := optimizeConfigFrom(c, nil)
		if err == nil && (cfg.Goal != "power" || cfg.RPS != 35) {
			t.Errorf("goal %q at %v req/s, want power at 35", cfg.Goal, cfg.RPS)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	for body, want := range map[string]string{
		"[optimize]\ngoal = \"cost\"\nrsp = 70\n":                      "p.toml:3: unknown key rsp in [optimize]",
		"[optimize]\nseed = 1\n":                                       "p.toml:2: [optimize] seed is read from [workload] seed now",
		"[optimize]\nslo_abs = { tbt_p99 = 0.2 }\n":                    "p.toml:2: [optimize] slo_abs is read from [slo] abs now",
		"[workload]\nseed = -1\n":                                      "p.toml:2: [workload] seed",
		"[slo]\nttft = [2, 3]\n":                                       "expected three slowdown limits",
		"[optimize]\nrps = 70.0\n[workload]\nrps = 60.0\n":             "both set --rps",
		"[optimize]\ngoal = \"cost\"\nmax_machines = -2\n[workload]\n": "--max-machines must be from 1 to 10000, got -2 (set by " + plan + ":3: [optimize] max_machines)",
	} {
		os.WriteFile(plan, []byte(body), 0o644)
		code, out, errs := runCLI(t, "optimize", "--plan", plan, "--rps", "1")
		wantBadInput(t, code, out, errs, want)
	}
}

// TestOptimizeMovedKeys: every key the [optimize] table once had is one of
// its keys or is named, with the part table that reads it now, and that
// table has the key.
func TestOptimizeMovedKeys(t *testing.T) {
	old := "goal,rps,power_budget_kw,cost_budget_usd_per_h,workload,trace,model,designs,gpus,prices,duration,seed,max_machines,seeds,precision,slo_set,slo_ttft,slo_tbt,slo_e2e,slo_abs,slo_reference,attainment,limits,abort_after,compat"
	keys := map[string]bool{}
	for _, p := range planParts {
		for _, k := range p.Keys {
			keys["["+p.Table+"] "+k.Key] = true
		}
	}
	for _, k := range strings.Split(old, ",") {
		to, moved := movedOptimizeKeys[k]
		switch {
		case keys["[optimize] "+k] && moved:
			t.Errorf("%s is an [optimize] key and moved to %s", k, to)
		case keys["[optimize] "+k]:
		case !moved:
			t.Errorf("the old [optimize] key %s is neither a key nor moved", k)
		case k != "limits" && !keys[to]:
			t.Errorf("%s moved to %s, which is no key", k, to)
		}
	}
}

// TestSLOFactorsMustNotDecrease: P50, P90, P99 slowdown limits that
// decrease are refused, from the flags and from a plan's [slo] table,
// naming the percentiles; equal limits are accepted.
func TestSLOFactorsMustNotDecrease(t *testing.T) {
	code, out, errs := runCLI(t, "optimize", "--goal", "cost", "--rps", "1", "--slo-tbt", "1.25,1.5,1.4")
	wantBadInput(t, code, out, errs, "--slo-tbt 1.25,1.5,1.4", "the P99 limit 1.4 is below the P90 limit 1.5")
	plan := filepath.Join(t.TempDir(), "plan.toml")
	if err := os.WriteFile(plan, []byte("[slo]\ne2e = [3, 2, 6]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errs = runCLI(t, "optimize", "--plan", plan, "--goal", "cost", "--rps", "1")
	wantBadInput(t, code, out, errs, "[slo] e2e", "the P90 limit 2 is below the P50 limit 3")
	if err := nonDecreasingFactors([]float64{2, 2, 2}); err != nil {
		t.Errorf("equal limits refused: %v", err)
	}
}

// TestSLODefaultsAreSLOs: the command line's default SLOs (flags and plan
// keys) are package slo's paper defaults, target for target, and its
// default reference the search's: defined once, read everywhere.
func TestSLODefaultsAreSLOs(t *testing.T) {
	sc := defaultSLOConfig()
	spec, err := sc.spec()
	if err != nil {
		t.Fatal(err)
	}
	want := slo.Default()
	if len(spec.Targets) != len(want.Targets) {
		t.Fatalf("%d default targets, slo has %d", len(spec.Targets), len(want.Targets))
	}
	for i := range want.Targets {
		if spec.Targets[i] != want.Targets[i] {
			t.Errorf("target %d: the command line's %+v, slo's %+v", i, spec.Targets[i], want.Targets[i])
		}
	}
	if sc.SLOReference != search.DefaultReference {
		t.Errorf("reference %q, search's %q", sc.SLOReference, search.DefaultReference)
	}
	if c := defaultOptimizeConfig(); c.Precision != search.DefaultPrecision || c.Duration != defaultDuration {
		t.Errorf("optimize defaults: precision %v, duration %q; want %v, %q", c.Precision, c.Duration, search.DefaultPrecision, defaultDuration)
	}
}
