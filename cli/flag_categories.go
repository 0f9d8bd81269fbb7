package cli

import (
	"reflect"
	"runtime/debug"

	"github.com/urfave/cli/v2"
)

// Flag categories of the commands with many flags (optimize, simulate,
// sweep, evaluate); urfave/cli lists them in alphabetical order.
const (
	catWorkload = "workload"
	catCluster  = "cluster"
	catSLO      = "latency SLOs"
	catSearch   = "search"
	catOutput   = "output"
)

// flagCategory is the category of each flag name.
var flagCategory = withGoodputLimits(map[string]string{
	"workload": catWorkload, "trace": catWorkload, "rps": catWorkload, "duration": catWorkload,
	"rate-profile": catWorkload, "rate-interpolation": catWorkload, "burstiness": catWorkload,
	"schedule": catSearch, "scale-delay": catSearch, "autoscale": catSearch, "autoscale-target": catSearch,
	"autoscale-period": catSearch, "autoscale-cooldown": catSearch, "schedule-out": catSearch,
	"seed": catWorkload, "seeds": catWorkload,

	"design": catCluster, "designs": catCluster, "gpus": catCluster, "price": catCluster, "prompt": catCluster, "token": catCluster,
	"machines": catCluster, "cluster": catCluster, "from": catCluster, "model": catCluster,
	"model-config": catCluster, "compat": catCluster, "transfer": catCluster, "plan": catCluster, "gpu-memory-utilization": catCluster, "kernels-fit": catCluster,
	"policy": catCluster, "token-budget": catCluster, "tbt-slo": catCluster, "max-machines": catCluster,

	"slo-ttft": catSLO, "slo-tbt": catSLO, "slo-e2e": catSLO, "slo-abs": catSLO, "slo-set": catSLO, "attainment": catSLO, "slo-scale": catSLO,
	"slo-reference": catSLO, "abort-after": catSLO,

	"goal": catSearch, "power-budget": catSearch, "cost-budget": catSearch, "precision": catSearch,
	"exhaustive": catSearch, "j": catSearch, "amortize-years": catSearch, "pue": catSearch,
	"electricity-price": catSearch, "opex-per-gpu-h": catSearch, "power-caps": catCluster, "power-budget-kind": catSearch,
	"confidence": catSearch, "scenarios": catSearch, "sensitivity": catSearch, "verify": catSearch,

	"out": catOutput, "points": catOutput, "pairs": catOutput, "plot": catOutput, "format": catOutput,
	"machines-out": catOutput, "sensitivity-out": catOutput, "title": catOutput, "report": catOutput,
})

// categorized returns copies of flags with their help category set (the
// flags themselves, some shared between commands, are left as they are),
// and --help.
func categorized(flags []cli.Flag) []cli.Flag {
	out := make([]cli.Flag, len(flags))
	for i, f := range flags {
		out[i] = withCategory(f, flagCategory[f.Names()[0]])
	}
	// urfave/cli adds --help after it has grouped the flags (and so leaves
	// it out of the help): list it here, uncategorized, first.
	return append(out, cli.HelpFlag)
}

// withCategory is a copy of flag f in help category cat (flagCopy).
func withCategory(f cli.Flag, cat string) cli.Flag { return flagCopy(f, &cat) }

// flagCopy is a copy of flag f, in help category *cat when cat is not
// nil. A urfave/cli flag is a pointer to a struct with a Category field,
// or here (unsetFloat64, unsetInt) a struct embedding one; any other flag
// is returned as it is.
func flagCopy(f cli.Flag, cat *string) cli.Flag {
	v := reflect.ValueOf(f)
	if v.Kind() == reflect.Struct && v.NumField() == 1 { // the embedded flag
		out := reflect.New(v.Type()).Elem()
		out.Field(0).Set(copyWithCategory(v.Field(0), cat))
		return out.Interface().(cli.Flag)
	}
	return copyWithCategory(v, cat).Interface().(cli.Flag)
}

// copyWithCategory is a copy of p, a pointer to a flag struct, with its
// Category set to *cat when cat is not nil; p itself when it is not one.
func copyWithCategory(p reflect.Value, cat *string) reflect.Value {
	if p.Kind() != reflect.Pointer || p.IsNil() || p.Elem().Kind() != reflect.Struct {
		return p
	}
	field := p.Elem().FieldByName("Category")
	if field.Kind() != reflect.String {
		return p
	}
	c := reflect.New(p.Elem().Type())
	c.Elem().Set(p.Elem())
	if cat != nil {
		c.Elem().FieldByName("Category").SetString(*cat)
	}
	return c
}

// ownFlags gives every command of cmds (and their subcommands) its own
// copy of each of its flags. urfave/cli writes into a flag as it parses
// it (Apply records the default), and many commands share package-level
// flags (planFlag, ...): without copies two applications running at once
// in one process (the tests do) write into the same flag while another
// copies it, a data race. cli.HelpFlag stays as it is: urfave/cli finds
// it in a command's flags by identity (or appends it again).
func ownFlags(cmds []*cli.Command) {
	for _, c := range cmds {
		flags := make([]cli.Flag, len(c.Flags))
		for i, f := range c.Flags {
			flags[i] = f
			if f != cli.HelpFlag {
				flags[i] = flagCopy(f, nil)
			}
		}
		c.Flags = flags
		ownFlags(c.Subcommands)
	}
}

// version is splitplan's version from the build information: the module
// version ("(devel)" for a build from a checkout) and the VCS commit
// ("unknown" when the build did not record it), with "+dirty" for a
// modified tree.
func version() string {
	v, commit, dirty := "(devel)", "unknown", false
	if bi, ok := debug.ReadBuildInfo(); ok {
		if bi.Main.Version != "" {
			v = bi.Main.Version
		}
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				commit = s.Value
			case "vcs.modified":
				dirty = s.Value == "true"
			}
		}
	}
	if dirty {
		commit += "+dirty"
	}
	return v + " (commit " + commit + ")"
}

// withGoodputLimits is categories with goodput's per-request limit flags
// (goodputLimits) among the SLOs.
func withGoodputLimits(categories map[string]string) map[string]string {
	for _, l := range goodputLimits {
		categories[l.Name] = catSLO
	}
	return categories
}
