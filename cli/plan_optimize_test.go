package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"splitplan/search"
	"splitplan/slo"

	"github.com/urfave/cli/v2"
)

// withOptimizeFlags runs fn on a context holding the optimize command's
// flags parsed from args.
func withOptimizeFlags(t *testing.T, args []string, fn func(c *cli.Context) error) error {
	t.Helper()
	app := newApp(os.Stdout, os.Stderr)
	app.Commands = []*cli.Command{{Name: "x", Flags: optimizeCommand().Flags, Action: fn}}
	return app.Run(append([]string{"splitplan", "x"}, args...))
}

func TestExamplesOptimizeSection(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join("examples", "*.toml"))
	n := 0
	for _, f := range files {
		pl, err := loadPlan(f)
		if err != nil {
			t.Errorf("%s: %v", f, err)
			continue
		}
		s := pl.Optimize
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
		if !strings.Contains(out, `"goal": "`+s.Goal+`"`) {
			t.Errorf("%s: the run's goal is not the plan's %q:\n%s", f, s.Goal, out)
		}
		err = withOptimizeFlags(t, []string{"--plan", f}, func(c *cli.Context) error {
			p, err := searchFrom(c, nil, nil)
			if err != nil {
				return err
			}
			if fmt.Sprint(p.Goal) != s.Goal || p.RateRPS != s.RPS || p.PowerBudgetKW != s.PowerBudgetKW || p.CostBudgetUSDPerH != s.CostBudgetUSDPerH {
				t.Errorf("%s: problem %+v does not match the section %+v", f, p, s)
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

func TestOptimizeSectionFlagsWin(t *testing.T) {
	dir := t.TempDir()
	plan := filepath.Join(dir, "p.toml")
	os.WriteFile(plan, []byte("[optimize]\ngoal = \"throughput\"\npower_budget_kw = 455.0\nworkload = \"conversation\"\nduration = \"30s\"\nseed = 7\nslo_tbt = [1.5, 2, 6]\nslo_abs = { tbt_p99 = 0.2 }\n"), 0o644)
	err := withOptimizeFlags(t, []string{"--plan", plan, "--goal", "cost", "--rps", "70", "--duration", "10s"}, func(c *cli.Context) error {
		pl, err := loadPlan(plan)
		if err != nil {
			return err
		}
		cfg, err := optimizeConfigFrom(c, pl, nil)
		if err != nil {
			return err
		}
		got := fmt.Sprintf("%s %v %s %s %v %v", cfg.Goal, cfg.RPS, cfg.Duration, cfg.Workload, cfg.SLOTBT, cfg.SLOAbsolute)
		if want := "cost 70 10s conversation [1.5 2 6] map[tbt_p99:0.2]"; got != want {
			t.Errorf("configuration %q, want %q", got, want)
		}
		if cfg.given["power-budget"] || cfg.PowerBudgetKW != 0 || cfg.Seed == nil || *cfg.Seed != 7 {
			t.Errorf("power budget given %v (%v), seed %v", cfg.given["power-budget"], cfg.PowerBudgetKW, cfg.Seed)
		}
		// The flags never change: the configuration is built beside them.
		if c.IsSet("workload") || c.String("workload") != "coding" {
			t.Errorf("--workload was written to: %q", c.String("workload"))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for body, want := range map[string]string{
		"[optimize]\ngoal = \"cost\"\nrsp = 70\n":                "unknown key optimize.rsp",
		"[optimize]\nseed = -1\n":                                "seed must be zero or positive",
		"[optimize]\nslo_ttft = [2, 3]\n":                        "three factors",
		"[optimize]\nworkload = \"coding\"\ntrace = \"t.csv\"\n": "exclusive",
	} {
		os.WriteFile(plan, []byte(body), 0o644)
		_, err := loadPlan(plan)
		if err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), plan) {
			t.Errorf("%q: %v, want an error naming %s and %q", body, err, plan, want)
		}
	}
}

// TestOptimizeKeysFromStruct: the known keys of [optimize] come from the
// configuration struct, so a field added there is a key at once.
func TestOptimizeKeysFromStruct(t *testing.T) {
	got := strings.Join(optimizeKeys(), ",")
	want := "goal,rps,power_budget_kw,cost_budget_usd_per_h,workload,trace,model,designs,gpus,prices,duration,seed,max_machines,seeds,precision,slo_set,slo_ttft,slo_tbt,slo_e2e,slo_abs,slo_reference,attainment,limits,abort_after,compat"
	if got != want {
		t.Errorf("optimizeKeys() = %s\nwant %s", got, want)
	}
}

// TestSLOFactorsMustNotDecrease: P50, P90, P99 slowdown limits that
// decrease are refused, from the flags and from a plan's [optimize] table,
// naming the percentiles; equal limits are accepted.
func TestSLOFactorsMustNotDecrease(t *testing.T) {
	code, out, errs := runCLI(t, "optimize", "--goal", "cost", "--rps", "1", "--slo-tbt", "1.25,1.5,1.4")
	wantBadInput(t, code, out, errs, "--slo-tbt 1.25,1.5,1.4", "the P99 limit 1.4 is below the P90 limit 1.5")
	plan := filepath.Join(t.TempDir(), "plan.toml")
	if err := os.WriteFile(plan, []byte("[optimize]\nslo_e2e = [3, 2, 6]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errs = runCLI(t, "optimize", "--plan", plan, "--goal", "cost", "--rps", "1")
	wantBadInput(t, code, out, errs, "slo_e2e", "the P90 limit 2 is below the P50 limit 3")
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
