package cli

import (
	"fmt"
	"sort"
	"strings"

	"splitplan/costpower"
	"splitplan/evaluator/perf/power"
	"splitplan/resolve"
	"splitplan/search"
)

// applyPrices sets the price of a GPU-hour of each GPU family in prices
// (--price and the plan's [optimize] prices) on the plan's machine types.
func applyPrices(pl *plan, prices map[string]float64) error {
	keys := make([]string, 0, len(prices))
	for k := range prices {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if _, err := pl.Catalog.SetGPUPrice(k, prices[k]); err != nil {
			return badInputf("--price %s: %v", k, err)
		}
	}
	return nil
}

// gpuDesigns adds to the plan's catalog the designs --gpus generates for
// the problem's model and returns their names; a GPU none of whose tensor
// parallelisms fits the model is left out with a note.
func gpuDesigns(pl *plan, cfg *optimizeConfig, p *search.Problem, caps []float64) ([]string, error) {
	model, err := pl.Catalog.Model(p.Model)
	if err != nil {
		return nil, badInputf("--model: %v", err)
	}
	gen, skipped, err := pl.Catalog.AddCappedGPUDesigns(cfg.GPUs, caps, model, costpower.MinKVTokens)
	if err != nil {
		return nil, badInputf("--gpus: %v", err)
	}
	for _, s := range skipped {
		p.Notes = append(p.Notes, "left out "+s)
	}
	if len(gen) == 0 {
		return nil, badInputf("--gpus %s: no tensor parallelism of any of these GPUs holds %s (%s)",
			strings.Join(cfg.GPUs, ","), model.Name, strings.Join(skipped, "; "))
	}
	names := make([]string, len(gen))
	for i, d := range gen {
		names[i] = d.Name
	}
	p.Notes = append(p.Notes, fmt.Sprintf("--gpus %s: %d designs (%d baselines, %d prompt/token pairs) over tensor parallelisms whose weights and %d tokens of KV-cache fit",
		strings.Join(cfg.GPUs, ","), len(gen), countBaselines(gen), len(gen)-countBaselines(gen), costpower.MinKVTokens))
	return names, nil
}

func countBaselines(gen []costpower.GPUDesign) int {
	n := 0
	for _, d := range gen {
		if d.Prompt.Name == d.Token.Name && strings.HasPrefix(d.Name, "Baseline") {
			n++
		}
	}
	return n
}

// parsePowerCaps reads --power-caps: a range lo:hi:step or a list of
// fractions of board power, each one the cap curve can slow a GPU to.
func parsePowerCaps(s string) ([]float64, error) {
	caps, err := costpower.ParseCaps(s)
	if err != nil {
		return nil, badInputf("--power-caps: %v", err)
	}
	for _, c := range caps {
		if _, err := power.BuiltinCap.ClockFraction(c); err != nil {
			return nil, badInputf("--power-caps: cap %v: %v", c, err)
		}
	}
	return caps, nil
}

// cappedDesignNames adds to the plan's catalog the capped variants of the
// named designs (a name may carry a batching policy, which its variants
// keep) and returns their names.
func cappedDesignNames(pl *plan, names []string, caps []float64) ([]string, error) {
	var out []string
	for _, n := range names {
		design, _, named, err := resolve.SplitDesignPolicy(n)
		if err != nil {
			return nil, badInputf("--designs: %v", err)
		}
		suffix := ""
		if named {
			suffix = n[strings.LastIndex(n, "+"):]
		}
		vs, err := pl.Catalog.AddCappedDesigns([]string{design}, caps)
		if err != nil {
			return nil, badInputf("--power-caps: %s: %v", n, err)
		}
		for _, v := range vs {
			out = append(out, v+suffix)
		}
	}
	return out, nil
}
