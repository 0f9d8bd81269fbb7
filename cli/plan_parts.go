package cli

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/BurntSushi/toml"
	"github.com/urfave/cli/v2"

	"splitplan/traces"
)

// A plan sets the configuration parts every command shares in tables of
// their own, one a part: [workload], [slo], [simulation] and [cluster];
// the searching commands (those with --goal) also read [optimize], the
// search's own part (goal, rate or budget, designs, GPUs, bounds).
// Each key of a part table stands for one flag: a command reads the keys
// whose flags it has, and the plan's value becomes the flag's value unless
// the command line gives the flag. The flag stays the one place of the
// default (shown by --help) and the one reader that validates the value,
// whether it came from the command line or the plan; an error about a flag
// the plan set names the plan's file, line and key.

// The defaults of the configuration parts that are not another package's
// (search.DefaultPrecision, search.DefaultReference, slo.PaperFactors): the
// flags of every command show them in --help and the optimize
// configuration starts from them (defaultOptimizeConfig).
const (
	// defaultModel is the model served (simulation part): BLOOM-176B, the
	// Splitwise paper's.
	defaultModel = "bloom-176b"
	// defaultWorkload is the built-in size distribution (workload part).
	defaultWorkload = "coding"
	// defaultDuration is the length of a synthesized workload, as the
	// duration flags take it (workload part).
	defaultDuration = "120s"
	// defaultAbortAfter stops a simulation whose request waited this long
	// to start a phase: unsustainable (simulation part).
	defaultAbortAfter = "30s"
	// defaultVerify is the traffic every optimum is checked over: a
	// quarter hour of the rate (search.Problem.VerifyS; docs/model.md
	// "Minutes are not an hour").
	defaultVerify = "15m"
	// defaultMaxMachines bounds each pool of a search (search part).
	defaultMaxMachines = 160
)

// planPart is one part table of a plan.
type planPart struct {
	// Table is the table's name.
	Table string
	// Keys are its keys, in the order the help lists them.
	Keys []partKey
	// Requires, when set, is the flag a command must have to read the
	// table ([optimize]: the commands that search, with --goal).
	Requires string
}

// partKey is one key of a part table and the flag it sets.
type partKey struct {
	Key, Flag string
	// Path marks a file name: relative to the plan's directory.
	Path bool
	// Unless are flags whose presence on the command line leaves the key
	// out, beside Flag itself: a command line that states its own goal
	// takes none of the plan's goal, rate and budgets.
	Unless []string
}

// sloPartKeys are the [slo] table's keys: the SLO set and its limits, the
// reference, and goodput (its attainment, a goodput_NAME key for each of
// goodputLimits, and the SLO scale).
func sloPartKeys() []partKey {
	keys := []partKey{{Key: "set", Flag: "slo-set"}, {Key: "ttft", Flag: "slo-ttft"}, {Key: "tbt", Flag: "slo-tbt"}, {Key: "e2e", Flag: "slo-e2e"},
		{Key: "abs", Flag: "slo-abs"}, {Key: "reference", Flag: "slo-reference"}, {Key: "attainment", Flag: "attainment"}}
	for _, l := range goodputLimits {
		keys = append(keys, partKey{Key: "goodput_" + l.Name, Flag: l.Name})
	}
	return append(keys, partKey{Key: "scale", Flag: "slo-scale"})
}

// planParts are the part tables a plan may have.
var planParts = []planPart{
	{"workload", []partKey{{Key: "workload", Flag: "workload"}, {Key: "trace", Flag: "trace", Path: true},
		{Key: "rps", Flag: "rps"}, {Key: "duration", Flag: "duration"}, {Key: "seed", Flag: "seed"},
		{Key: "rate_profile", Flag: "rate-profile", Path: true}, {Key: "rate_interpolation", Flag: "rate-interpolation"}, {Key: "burstiness", Flag: "burstiness"}}, ""},
	{"slo", sloPartKeys(), ""},
	{"simulation", []partKey{{Key: "model", Flag: "model"}, {Key: "model_config", Flag: "model-config", Path: true},
		{Key: "compat", Flag: "compat"}, {Key: "transfer", Flag: "transfer"}, {Key: "abort_after", Flag: "abort-after"},
		{Key: "policy", Flag: "policy"}, {Key: "token_budget", Flag: "token-budget"}, {Key: "tbt_slo", Flag: "tbt-slo"},
		{Key: "verify", Flag: "verify"}}, ""},
	{"cluster", []partKey{{Key: "design", Flag: "design"}, {Key: "prompt", Flag: "prompt"}, {Key: "token", Flag: "token"},
		{Key: "machines", Flag: "machines"}, {Key: "clusters", Flag: "cluster"}}, ""},
	{"optimize", optimizePartKeys(), "goal"},
}

// optimizePartKeys are the [optimize] table's keys: the search's goal with
// its rate or budget (left out when the command line gives a goal of its
// own; the rate and budgets also when it gives one of them), the designs
// or GPUs searched, GPU prices and the search's bounds and precision.
func optimizePartKeys() []partKey {
	goal := []string{"goal"}
	target := []string{"goal", "rps", "power-budget", "cost-budget"}
	return []partKey{{Key: "goal", Flag: "goal", Unless: goal}, {Key: "rps", Flag: "rps", Unless: target},
		{Key: "power_budget_kw", Flag: "power-budget", Unless: target}, {Key: "cost_budget_usd_per_h", Flag: "cost-budget", Unless: target},
		{Key: "designs", Flag: "designs"}, {Key: "gpus", Flag: "gpus"}, {Key: "prices", Flag: "price"},
		{Key: "max_machines", Flag: "max-machines"}, {Key: "seeds", Flag: "seeds"}, {Key: "precision", Flag: "precision"},
		{Key: "verify", Flag: "verify"}}
}

// movedOptimizeKeys are keys the [optimize] table once had that belong to
// another part now (every command reads them there): an old plan that
// still gives one is told where it goes.
var movedOptimizeKeys = map[string]string{
	"workload": "[workload] workload", "trace": "[workload] trace", "duration": "[workload] duration", "seed": "[workload] seed",
	"model": "[simulation] model", "abort_after": "[simulation] abort_after", "compat": "[simulation] compat",
	"slo_set": "[slo] set", "slo_ttft": "[slo] ttft", "slo_tbt": "[slo] tbt", "slo_e2e": "[slo] e2e", "slo_abs": "[slo] abs",
	"slo_reference": "[slo] reference", "attainment": "[slo] attainment", "limits": "[slo] goodput_ttft, goodput_tpot, … (one key a limit)",
}

// exclusiveFlags are flags that replace one another: a command line that
// gives one of a group leaves out the plan's keys of all of it.
var exclusiveFlags = [][]string{{"workload", "trace"}}

// partsFile is the part of a plan file the part tables are read from;
// everything else is the catalog's (plan.go).
type partsFile struct {
	Workload   map[string]any `toml:"workload"`
	SLO        map[string]any `toml:"slo"`
	Simulation map[string]any `toml:"simulation"`
	Cluster    map[string]any `toml:"cluster"`
	Optimize   map[string]any `toml:"optimize"`
}

// tables returns the part tables of f by name.
func (f *partsFile) tables() map[string]map[string]any {
	return map[string]map[string]any{"workload": f.Workload, "slo": f.SLO, "simulation": f.Simulation, "cluster": f.Cluster, "optimize": f.Optimize}
}

// leftOut reports whether the command line's own flags (given, read
// before the plan sets any) leave out the key k of a plan: it gives k's
// flag, a flag that replaces it, or one of k's Unless.
func leftOut(given func(string) bool, k partKey) bool {
	if given(k.Flag) || slices.ContainsFunc(k.Unless, given) {
		return true
	}
	for _, group := range exclusiveFlags {
		if slices.Contains(group, k.Flag) && slices.ContainsFunc(group, given) {
			return true
		}
	}
	return false
}

// planSetting is one flag a plan set: where, for error messages.
type planSetting struct {
	Flag, Where string
}

// withPlanParts wraps the actions of every command with a --plan flag (and
// of their subcommands) so that the plan's part tables set their flags
// before the action reads them, and documents the keys each reads in its
// --plan help.
func withPlanParts(cmds []*cli.Command) {
	for _, cmd := range cmds {
		withPlanParts(cmd.Subcommands)
		if cmd.Action == nil {
			continue
		}
		has := map[string]cli.Flag{}
		plan := -1
		for i, f := range cmd.Flags {
			has[f.Names()[0]] = f
			if f.Names()[0] == "plan" {
				plan = i
			}
		}
		if plan < 0 {
			continue
		}
		if doc := partsHelp(has); doc != "" {
			if sf, ok := cmd.Flags[plan].(*cli.StringFlag); ok {
				cp := *sf
				cp.Usage += "; " + doc
				cmd.Flags[plan] = &cp
			}
		}
		action := cmd.Action
		cmd.Action = func(c *cli.Context) error {
			set, err := applyPlanParts(c, has)
			if err != nil {
				return err
			}
			return explainPlanSettings(action(c), set)
		}
	}
}

// partsHelp lists the part tables' keys a command with the flags has reads.
func partsHelp(has map[string]cli.Flag) string {
	var tables []string
	for _, p := range planParts {
		if p.Requires != "" && has[p.Requires] == nil {
			continue
		}
		var keys []string
		for _, k := range p.Keys {
			if has[k.Flag] != nil {
				keys = append(keys, k.Key)
			}
		}
		if len(keys) > 0 {
			tables = append(tables, fmt.Sprintf("[%s] %s", p.Table, strings.Join(keys, ", ")))
		}
	}
	if len(tables) == 0 {
		return ""
	}
	return "a flag the command line does not give takes the value of its key in the plan's tables " + strings.Join(tables, "; ")
}

// applyPlanParts sets, from the part tables of --plan, every flag the
// command has and the command line does not give. A plan that cannot be
// read or parsed is left to planFrom, which reports it; the settings made
// are returned for explainPlanSettings.
func applyPlanParts(c *cli.Context, has map[string]cli.Flag) ([]planSetting, error) {
	path := c.String("plan")
	if path == "" {
		return nil, nil
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, nil // planFrom reports it
	}
	var f partsFile
	if _, err := toml.NewDecoder(bytes.NewReader(data)).Decode(&f); err != nil {
		return nil, nil // planFrom reports it
	}
	tables := f.tables()
	if err := checkPartKeys(path, data, tables); err != nil {
		return nil, err
	}
	onCommandLine := map[string]bool{}
	for name := range has {
		onCommandLine[name] = isSet(c, name)
	}
	given := func(flag string) bool { return onCommandLine[flag] }
	var set []planSetting
	for _, p := range planParts {
		if p.Requires != "" && has[p.Requires] == nil {
			continue
		}
		t := tables[p.Table]
		for _, k := range p.Keys {
			v, ok := t[k.Key]
			if !ok || has[k.Flag] == nil || leftOut(given, k) {
				continue
			}
			where := fmt.Sprintf("%s:%d: [%s] %s", path, tomlKeyLine(data, p.Table, k.Key), p.Table, k.Key)
			vals, err := flagValues(v)
			if err != nil {
				return nil, badInputf("%s: %v", where, err)
			}
			if _, repeatable := has[k.Flag].(*cli.StringSliceFlag); !repeatable && len(vals) > 1 {
				vals = []string{strings.Join(vals, ",")}
			}
			for _, s := range vals {
				if k.Path && s != "" && !filepath.IsAbs(s) && !traces.IsProfileSpec(s) {
					s = filepath.Join(filepath.Dir(path), s)
				}
				if err := setFlag(c, k.Flag, s); err != nil {
					return nil, badInputf("%s = %s: %v (it sets --%s)", where, s, err, k.Flag)
				}
			}
			set = append(set, planSetting{Flag: k.Flag, Where: where})
		}
	}
	return set, nil
}

// checkPartKeys rejects an unknown key in a part table (naming where a
// key the [optimize] table once had goes now), and a setting given by two
// tables, or by two tables' keys that replace one another: a plan says
// each thing once.
func checkPartKeys(path string, data []byte, tables map[string]map[string]any) error {
	setBy := map[string]string{} // flag → "[table] key" that sets it
	for _, p := range planParts {
		t := tables[p.Table]
		known := map[string]partKey{}
		var names []string
		for _, k := range p.Keys {
			known[k.Key] = k
			names = append(names, k.Key)
		}
		keys := make([]string, 0, len(t))
		for k := range t {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			line := tomlKeyLine(data, p.Table, k)
			pk, ok := known[k]
			if !ok && p.Table == "optimize" && movedOptimizeKeys[k] != "" {
				return badInputf("%s:%d: [optimize] %s is read from %s now (every command reads it there): move it", path, line, k, movedOptimizeKeys[k])
			}
			if !ok {
				return badInputf("%s:%d: unknown key %s in [%s] (known: %s)", path, line, k, p.Table, strings.Join(names, ", "))
			}
			flags := []string{pk.Flag}
			for _, group := range exclusiveFlags {
				if slices.Contains(group, pk.Flag) {
					flags = group
				}
			}
			here := fmt.Sprintf("[%s] %s", p.Table, k)
			for _, fl := range flags {
				if other, dup := setBy[fl]; dup && !strings.HasPrefix(other, "["+p.Table+"]") {
					return badInputf("%s:%d: %s and %s both set --%s: give it in one table", path, line, here, other, fl)
				}
			}
			for _, fl := range flags {
				setBy[fl] = here
			}
		}
	}
	return nil
}

// flagValues turns a TOML value into the strings a flag is set with: a
// string, number or boolean is one; an array is one an element (a
// repeatable flag is set once per element, any other with their comma
// list); a table of numbers (slo abs) is KEY=VALUE pairs in key order.
func flagValues(v any) ([]string, error) {
	switch x := v.(type) {
	case string:
		return []string{x}, nil
	case int64:
		return []string{strconv.FormatInt(x, 10)}, nil
	case float64:
		return []string{strconv.FormatFloat(x, 'g', -1, 64)}, nil
	case bool:
		return []string{strconv.FormatBool(x)}, nil
	case []any:
		var parts []string
		for _, e := range x {
			s, err := flagValues(e)
			if _, nested := e.([]any); err != nil || nested || len(s) != 1 {
				return nil, errors.New("expected an array of numbers or of strings")
			}
			parts = append(parts, s[0])
		}
		if len(parts) == 0 {
			return nil, errors.New("empty array")
		}
		return parts, nil
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		var parts []string
		for _, k := range keys {
			s, err := flagValues(x[k])
			switch x[k].(type) {
			case []any, map[string]any:
				err = errors.New("not a scalar")
			}
			if err != nil || len(s) != 1 {
				return nil, fmt.Errorf("%s: expected a number", k)
			}
			parts = append(parts, k+"="+s[0])
		}
		return []string{strings.Join(parts, ",")}, nil
	}
	return nil, fmt.Errorf("unsupported value %v", v)
}

// explainPlanSettings adds to a bad-input error that names a flag the plan
// set where the plan set it.
func explainPlanSettings(err error, set []planSetting) error {
	var ue usageError
	if err == nil || len(set) == 0 || !errors.As(err, &ue) {
		return err
	}
	msg := err.Error()
	for _, s := range set {
		name := "--" + s.Flag
		for i := strings.Index(msg, name); i >= 0; {
			end := i + len(name)
			if end == len(msg) || !isFlagNameByte(msg[end]) {
				return usageError{fmt.Errorf("%w (set by %s)", err, s.Where)}
			}
			j := strings.Index(msg[end:], name)
			if j < 0 {
				break
			}
			i = end + j
		}
	}
	return err
}

// isFlagNameByte reports whether b may continue a flag's name.
func isFlagNameByte(b byte) bool {
	return b == '-' || b == '_' || b >= 'a' && b <= 'z' || b >= '0' && b <= '9'
}

// tomlKeyLine is the line of key in [table] of a TOML document (0 when
// not found): its own table's section, the key at the start of a line.
func tomlKeyLine(data []byte, table, key string) int {
	current := ""
	for i, line := range strings.Split(string(data), "\n") {
		l := strings.TrimSpace(line)
		if strings.HasPrefix(l, "[") {
			current = strings.Trim(strings.TrimSpace(strings.SplitN(l, "#", 2)[0]), "[] ")
			continue
		}
		if current != table {
			continue
		}
		k, _, ok := strings.Cut(l, "=")
		if ok && strings.Trim(strings.TrimSpace(k), `"'`) == key {
			return i + 1
		}
	}
	return 0
}
