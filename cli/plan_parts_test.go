package cli

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// writePlan writes a plan into a fresh directory and returns its path.
func writePlan(t *testing.T, text string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "plan.toml")
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestPlanPartsSetFlags: a part table's key gives its flag's value; the
// same run with the flags on the command line prints the same bytes, and
// a flag on the command line wins over the plan.
func TestPlanPartsSetFlags(t *testing.T) {
	plan := writePlan(t, "[workload]\nworkload = \"conversation\"\nrps = 20\nduration = \"10s\"\nseed = 2\n"+
		"[simulation]\nmodel = \"llama2-70b\"\n[cluster]\ndesign = \"HH\"\nprompt = 10\ntoken = 4\n")
	code, fromPlan, errs := runCLI(t, "simulate", "--plan", plan)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	code, fromFlags, errs := runCLI(t, "simulate", "--workload", "conversation", "--rps", "20", "--duration", "10s", "--seed", "2",
		"--model", "llama2-70b", "--design", "HH", "--prompt", "10", "--token", "4")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	if maskGolden(fromPlan) != maskGolden(fromFlags) {
		t.Errorf("plan and flags differ:\n%s\n%s", fromPlan, fromFlags)
	}
	code, out, errs := runCLI(t, "simulate", "--plan", plan, "--rps", "10")
	if code != 0 || !strings.Contains(out, "at 10 req/s") {
		t.Errorf("--rps 10 did not win over the plan's rps = 20: exit %d\n%s%s", code, out, errs)
	}
}

// TestPlanPartsErrors: unknown keys, a setting given by two tables, a
// value of the wrong shape and a value the flag refuses exit 2 naming the
// plan's file, line and key.
func TestPlanPartsErrors(t *testing.T) {
	cluster := "[cluster]\ndesign = \"HH\"\nprompt = 10\ntoken = 4\n"
	for _, tt := range []struct {
		name, plan string
		args       []string
		want       []string
	}{
		{"unknown key", cluster + "[simulation]\n\nmodels = \"x\"\n", []string{"simulate"}, []string{"plan.toml:7:", "unknown key models in [simulation]", "known: model,"}},
		{"twice", "[optimize]\nrps = 70.0\n[workload]\nrps = 60.0\n", []string{"optimize", "--goal", "cost"},
			[]string{"plan.toml:2:", "[optimize] rps and [workload] rps both set --rps"}},
		{"moved from [optimize]", "[optimize]\ntrace = \"t.csv\"\n[workload]\nworkload = \"coding\"\n", []string{"sweep", "--design", "HH", "--prompt", "1", "--token", "1"},
			[]string{"plan.toml:2:", "[optimize] trace is read from [workload] trace now"}},
		{"nested array", cluster + "[slo]\nttft = [[1, 2]]\n", []string{"sweep"}, []string{"plan.toml:6: [slo] ttft", "expected an array"}},
		{"refused by the flag", cluster + "[workload]\nseed = -1\n", []string{"simulate"}, []string{"plan.toml:6: [workload] seed = -1", "--seed"}},
		{"checked by the command", cluster + "[workload]\nduration = \"soon\"\n", []string{"simulate"}, []string{"--duration", "(set by ", "plan.toml:6: [workload] duration)"}},
		{"verify twice", "[simulation]\nverify = \"0\"\n[optimize]\nverify = \"1h\"\n", []string{"optimize", "--goal", "cost", "--rps", "10"},
			[]string{"plan.toml:4:", "[optimize] verify and [simulation] verify both set --verify"}},
		{"verify refused", cluster + "[simulation]\nverify = \"soon\"\n", []string{"sweep", "--rps", "5"}, []string{"--verify", "plan.toml:6: [simulation] verify"}},
		{"verify too short", cluster + "[simulation]\nverify = \"1m\"\n", []string{"evaluate", "--rps", "5"}, []string{"--verify 1m is no longer than the 2m", "plan.toml:6: [simulation] verify"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			plan := writePlan(t, tt.plan)
			code, out, errs := runCLI(t, append(tt.args, "--plan", plan)...)
			wantBadInput(t, code, out, errs, tt.want...)
		})
	}
}

// TestPlanPartsPaths: a file a part table names is relative to the
// plan's directory.
func TestPlanPartsPaths(t *testing.T) {
	trace, err := filepath.Abs("testdata/cli/inputs/small-trace.csv")
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(trace)
	if err != nil {
		t.Fatal(err)
	}
	plan := writePlan(t, "[workload]\ntrace = \"t.csv\"\n[cluster]\ndesign = \"Baseline-A100\"\nmachines = 4\n")
	if err := os.WriteFile(filepath.Join(filepath.Dir(plan), "t.csv"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errs := runCLI(t, "simulate", "--plan", plan)
	if code != 0 || !strings.Contains(out, filepath.Join(filepath.Dir(plan), "t.csv")) {
		t.Errorf("exit %d: the trace beside the plan was not read:\n%s%s", code, out, errs)
	}
}

// TestPlanPartsHelp: every part key names a flag some command has, and
// a command's --plan help lists exactly the keys whose flags it has, of
// the tables it reads ([optimize] only where it has --goal).
func TestPlanPartsHelp(t *testing.T) {
	app := newApp(&strings.Builder{}, &strings.Builder{})
	flagsOf := map[string]map[string]bool{}
	all := map[string]bool{}
	for _, c := range app.Commands {
		flagsOf[c.Name] = map[string]bool{}
		for _, f := range c.Flags {
			flagsOf[c.Name][f.Names()[0]] = true
			all[f.Names()[0]] = true
		}
	}
	for _, p := range planParts {
		for _, k := range p.Keys {
			if !all[k.Flag] {
				t.Errorf("[%s] %s sets --%s, which no command has", p.Table, k.Key, k.Flag)
			}
		}
	}
	for _, name := range []string{"simulate", "sweep", "evaluate", "optimize"} {
		_, out, _ := runCLI(t, name, "--help")
		for _, p := range planParts {
			reads := p.Requires == "" || flagsOf[name][p.Requires]
			for _, k := range p.Keys {
				listed := strings.Contains(out, "["+p.Table+"]") && strings.Contains(out, k.Key)
				if reads && flagsOf[name][k.Flag] && !listed {
					t.Errorf("%s --help does not list [%s] %s", name, p.Table, k.Key)
				}
			}
			if !reads && strings.Contains(out, "["+p.Table+"]") {
				t.Errorf("%s --help lists [%s], which it does not read (no --%s)", name, p.Table, p.Requires)
			}
		}
	}
}

func TestFlagValues(t *testing.T) {
	for _, tt := range []struct {
		v    any
		want []string
	}{
		{"x", []string{"x"}}, {int64(7), []string{"7"}}, {0.25, []string{"0.25"}}, {true, []string{"true"}},
		{[]any{int64(2), 3.5, int64(6)}, []string{"2", "3.5", "6"}},
		{[]any{"HH:35:5", "H100:40"}, []string{"HH:35:5", "H100:40"}},
		{map[string]any{"tbt_p99": 0.2, "e2e_p50": int64(3)}, []string{"e2e_p50=3,tbt_p99=0.2"}},
	} {
		got, err := flagValues(tt.v)
		if err != nil || !slices.Equal(got, tt.want) {
			t.Errorf("flagValues(%v) = %q, %v; want %q", tt.v, got, err, tt.want)
		}
	}
	for _, bad := range []any{[]any{}, []any{[]any{int64(1)}}, map[string]any{"a": []any{int64(1)}}} {
		if _, err := flagValues(bad); err == nil {
			t.Errorf("flagValues(%v): no error", bad)
		}
	}
}

func TestTOMLKeyLine(t *testing.T) {
	doc := "rps = 1\n[optimize]\nrps = 2\n[workload] # the workload\n  \"rps\" = 3\nseed=4\n[[perf]]\nrps = 5\n"
	for _, tt := range []struct {
		table, key string
		want       int
	}{{"optimize", "rps", 3}, {"workload", "rps", 5}, {"workload", "seed", 6}, {"perf", "rps", 8}, {"workload", "trace", 0}} {
		if got := tomlKeyLine([]byte(doc), tt.table, tt.key); got != tt.want {
			t.Errorf("[%s] %s: line %d, want %d", tt.table, tt.key, got, tt.want)
		}
	}
}

// TestExplainPlanSettings: only an error naming a flag the plan set,
// as a whole flag name, says where the plan set it.
func TestExplainPlanSettings(t *testing.T) {
	set := []planSetting{{Flag: "rps", Where: "p.toml:3: [workload] rps"}}
	for _, tt := range []struct {
		err  error
		want string
	}{
		{badInputf("--rps must be positive"), "--rps must be positive (set by p.toml:3: [workload] rps)"},
		{badInputf("--rps-max and --rps"), "--rps-max and --rps (set by p.toml:3: [workload] rps)"},
		{badInputf("--rps-max is wrong"), "--rps-max is wrong"},
		{errors.New("--rps failed to write"), "--rps failed to write"}, // not bad input
	} {
		if got := explainPlanSettings(tt.err, set).Error(); got != tt.want {
			t.Errorf("got %q, want %q", got, tt.want)
		}
	}
	if explainPlanSettings(nil, set) != nil {
		t.Error("nil error explained")
	}
}

// TestPlanVerifyKey: [simulation] verify sets sweep's and evaluate's
// --verify as optimize's: "0" checks no row.
func TestPlanVerifyKey(t *testing.T) {
	args := []string{"sweep", "--cluster", "HH:23:8", "--rps", "40", "--duration", "30s"}
	code, out, errs := runCLI(t, args...)
	if code != 0 || !strings.Contains(out, "verify    every row") {
		t.Fatalf("without a plan: exit %d, %s\n%s", code, errs, out)
	}
	plan := writePlan(t, "[simulation]\nverify = \"0\"\n")
	code, out, errs = runCLI(t, append(args, "--plan", plan)...)
	if code != 0 || strings.Contains(out, "verify ") {
		t.Errorf("[simulation] verify = \"0\": exit %d, %s\n%s", code, errs, out)
	}
}
