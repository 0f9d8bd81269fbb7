package cli

import (
	"fmt"
	"strings"

	"github.com/urfave/cli/v2"

	"splitplan/evaluator"
	"splitplan/resolve"
	"splitplan/search"
)

// The designs part of a search's configuration: the designs named
// (--designs, a plan's [optimize] designs) or generated (--gpus,
// --power-caps), read here, and resolved here into the problem's designs,
// once: a name becomes its costpower.Design (resolve.Design) and the
// search takes the value; with no design named, the catalog's default
// designs are taken as the values they are.

// readDesignFlags overlays --designs and --gpus, when given.
func (cfg *optimizeConfig) readDesignFlags(c *cli.Context) error {
	if isSet(c, "designs") {
		cfg.Designs, cfg.given["designs"] = nil, true
		if d := strings.TrimSpace(c.String("designs")); !strings.EqualFold(d, "all") {
			names, err := commaList("designs", d, "design", "HH,HA,Baseline-H100")
			if err != nil {
				return err
			}
			cfg.Designs = names
		}
	}
	if isSet(c, "gpus") {
		cfg.GPUs, cfg.given["gpus"] = nil, true
		names, err := commaList("gpus", c.String("gpus"), "GPU", "h100,h200,b200")
		if err != nil {
			return err
		}
		cfg.GPUs = names
	}
	return nil
}

// commaList splits a flag's comma-separated names, each trimmed; an empty
// list or an empty name between commas ("h100,,h200", a trailing comma)
// is refused, naming the item, rather than skipped.
func commaList(flag, s, what, example string) ([]string, error) {
	if strings.TrimSpace(s) == "" {
		return nil, badInputf("--%s: no %s named (give a comma-separated list like %s)", flag, what, example)
	}
	parts := strings.Split(s, ",")
	out := make([]string, 0, len(parts))
	for i, n := range parts {
		if n = strings.TrimSpace(n); n == "" {
			return nil, badInputf("--%s %q: item %d of %d is empty (give a comma-separated list like %s)", flag, s, i+1, len(parts), example)
		}
		out = append(out, n)
	}
	return out, nil
}

// designsFrom sets the designs searched: the prices, the names (--designs,
// the power caps, the designs --gpus generates), each resolved with its
// batching policy, and the checks of the sarathi policy's flags.
func designsFrom(c *cli.Context, pl *plan, cfg *optimizeConfig, p *search.Problem) error {
	if err := applyPrices(pl, cfg.Prices); err != nil {
		return err
	}
	names, generated, err := designNamesFrom(c, pl, cfg, p)
	if err != nil {
		return err
	}
	pc, err := readPolicyFlags(c)
	if err != nil {
		return err
	}
	sarathi, err := addDesigns(pl, cfg, p, names, generated, pc)
	if err != nil {
		return err
	}
	if pc.Sarathi && !sarathi {
		return badInputf("--token-budget and --tbt-slo apply to the sarathi policy: give --policy sarathi or a design like Baseline-H100+sarathi")
	}
	return checkSarathiDesigns(pl, p)
}

// designNamesFrom lists the design names searched, and which of them were
// generated (by --power-caps or --gpus) rather than named; none (nil) are
// the catalog's default designs.
func designNamesFrom(c *cli.Context, pl *plan, cfg *optimizeConfig, p *search.Problem) ([]string, map[string]bool, error) {
	var names []string
	if cfg.Designs != nil {
		names = cfg.Designs
		if len(names) == 0 {
			return nil, nil, badInputf("--designs: no design named")
		}
	}
	generated := map[string]bool{}
	var caps []float64
	if isSet(c, "power-caps") {
		var err error
		if caps, err = parsePowerCaps(c.String("power-caps")); err != nil {
			return nil, nil, err
		}
	}
	if caps != nil && cfg.GPUs == nil {
		if names == nil {
			names = pl.Catalog.DefaultDesignNames() // (each is capped into new designs)
		}
		var err error
		if names, err = cappedDesignNames(pl, names, caps); err != nil {
			return nil, nil, err
		}
		for _, n := range names {
			generated[n] = true
		}
		p.PruneDesigns = true
		p.Notes = append(p.Notes, fmt.Sprintf("--power-caps %s: %d designs (each design's pools capped at every cap, prompt and token apart)", c.String("power-caps"), len(names)))
	}
	if cfg.GPUs != nil {
		gen, err := gpuDesigns(pl, cfg, p, caps)
		if err != nil {
			return nil, nil, err
		}
		if cfg.Designs == nil {
			names = nil
		}
		for _, n := range gen {
			generated[n] = true
		}
		names = append(names, gen...)
		p.PruneDesigns = true
	}
	return names, generated, nil
}

// addDesigns resolves the names into the problem's designs, each with its
// batching policy (its suffix, else --policy); it reports whether any
// design runs the sarathi policy.
func addDesigns(pl *plan, cfg *optimizeConfig, p *search.Problem, names []string, generated map[string]bool, pc policyConfig) (bool, error) {
	seen := map[string]bool{}
	sarathi := pc.Policy.Kind == evaluator.PolicySarathi
	// No names: the catalog's default designs, values already (each with
	// --policy); a name is resolved here, once.
	defaults := pl.Catalog.DefaultDesigns()
	if names != nil {
		defaults = nil
	}
	for i := range max(len(names), len(defaults)) {
		var spec search.DesignSpec
		n := "" // the name as given
		if defaults != nil {
			spec = search.DesignSpec{Design: defaults[i], Policy: pc.forDesign(evaluator.Policy{}, false)}
		} else {
			n = names[i]
			var err error
			if spec, err = designSpec(pl, n, pc); err != nil {
				return false, badInputf("--designs: %v", err)
			}
		}
		if spec.Policy.Kind == evaluator.PolicySarathi {
			sarathi = true
		}
		if seen[strings.ToLower(spec.Label())] {
			if generated[n] {
				continue // named with --designs (or --design) and generated by --gpus too
			}
			return false, badInputf("--designs: %s is named twice", spec.Label())
		}
		seen[strings.ToLower(spec.Label())] = true
		// A design no performance model covers (the model does not fit its
		// GPUs, or nothing profiles or describes them) is an error when
		// named, and left out with a note from the default list.
		d := spec.Design
		mp, mt := d.MinCounts()
		if _, err := resolve.ServingCluster(pl.Catalog, pl.perfSource().WithCompat(p.Options.Compat), d, mp, mt, p.Model); err != nil {
			if cfg.Designs != nil && !generated[d.Name] {
				return false, badInputf("--designs %s: %v", spec.Label(), err)
			}
			p.Notes = append(p.Notes, fmt.Sprintf("%s left out: %v", spec.Label(), err))
			continue
		}
		p.Designs = append(p.Designs, spec)
	}
	if len(p.Designs) == 0 {
		return false, badInputf("--model %s: no design can serve it (%s)", p.Model, strings.Join(p.Notes, "; "))
	}
	return sarathi, nil
}

// checkSarathiDesigns checks that every sarathi design whose token budget
// comes from a TBT SLO can meet it on its machines.
func checkSarathiDesigns(pl *plan, p *search.Problem) error {
	for _, spec := range p.Designs {
		if spec.Policy.Kind != evaluator.PolicySarathi || spec.Policy.TBTSLOS <= 0 {
			continue
		}
		mp, mt := spec.Design.MinCounts()
		cl, err := resolve.NewCluster(pl.Catalog, pl.perfSource().WithCompat(p.Options.Compat), spec.Design, mp, mt, p.Model)
		if err != nil {
			return badInputf("--designs %s: %v", spec.Label(), err)
		}
		cl.Policy = spec.Policy
		if err := policyFitsCluster(cl); err != nil {
			return err
		}
	}
	return nil
}

// designSpec resolves a design name, with an optional batching-policy
// suffix ("Baseline-H100+sarathi"), against the catalog (resolve.Design,
// once: the search takes the value); a name without a suffix gets
// --policy.
func designSpec(pl *plan, name string, pc policyConfig) (search.DesignSpec, error) {
	d, policy, named, err := resolve.Design(pl.Catalog, name)
	if err != nil {
		return search.DesignSpec{}, err
	}
	return search.DesignSpec{Design: d, Policy: pc.forDesign(policy, named)}, nil
}
