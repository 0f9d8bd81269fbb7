package cli

import (
	"strings"

	"github.com/urfave/cli/v2"

	"splitplan/evaluator"
	"splitplan/resolve"
)

// policyFlags choose the batching policy of baseline and mixed-pool
// machines, and the sarathi policy's token budget.
func policyFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "policy", Value: evaluator.PolicyMixed.String(),
			Usage: "batching policy of baseline and mixed-pool machines: " + strings.Join(evaluator.Policies(), ", ") +
				" (Orca mixed batching; FasterTransformer; vLLM prefill-first; Sarathi-Serve chunked prefills)"},
		&cli.IntFlag{Name: "token-budget", DefaultText: "512", Usage: "sarathi: tokens per iteration, a decode counting 1 and a prompt chunk its tokens"},
		&cli.StringFlag{Name: "tbt-slo", Usage: "sarathi: derive each machine type's token budget from this time between tokens, in seconds (0.1) or as a duration (100ms)"},
	}
}

// policyConfig is what the policy flags say, read once.
type policyConfig struct {
	// Policy is --policy with the sarathi parameters.
	Policy evaluator.Policy
	// Named reports that --policy was given.
	Named bool
	// Sarathi reports that --token-budget or --tbt-slo was given.
	Sarathi bool
}

// readPolicyFlags reads --policy, --token-budget and --tbt-slo. The two
// sarathi flags are exclusive; whether they fit the policy is checked by
// the caller, which knows the designs' own policies (forSarathi).
func readPolicyFlags(c *cli.Context) (policyConfig, error) {
	var pc policyConfig
	p, err := evaluator.ParsePolicy(c.String("policy"))
	if err != nil {
		return pc, badInputf("--policy: %v", err)
	}
	pc.Policy, pc.Named = p, isSet(c, "policy")
	budget, slo := isSet(c, "token-budget"), isSet(c, "tbt-slo")
	if budget && slo {
		return pc, badInputf("--token-budget and --tbt-slo: give one (the budget, or the TBT SLO to derive it from)")
	}
	pc.Sarathi = budget || slo
	if budget {
		n := c.Int("token-budget")
		if n < 1 {
			return pc, badInputf("--token-budget %d: expected a positive number of tokens per iteration", n)
		}
		pc.Policy.TokenBudget = n
	}
	if slo {
		s := c.String("tbt-slo")
		sec, err := parseSeconds(s)
		if err != nil {
			return pc, badInputf("--tbt-slo %q: expected a positive time between tokens in seconds (0.1) or a duration (100ms)", s)
		}
		pc.Policy.TBTSLOS = sec
	}
	return pc, nil
}

// requireSarathi rejects --token-budget and --tbt-slo under a policy that
// is not sarathi.
func (pc policyConfig) requireSarathi() error {
	if pc.Sarathi && pc.Policy.Kind != evaluator.PolicySarathi {
		f := "--token-budget"
		if pc.Policy.TBTSLOS > 0 {
			f = "--tbt-slo"
		}
		return badInputf("%s applies only to --policy %s (the policy is %s)", f, evaluator.PolicySarathi, pc.Policy)
	}
	return nil
}

// forDesign is the policy of a design named with suffix policy (named
// true) or without one: the suffix wins, carrying the sarathi flags'
// parameters when it is sarathi.
func (pc policyConfig) forDesign(policy evaluator.Policy, named bool) evaluator.Policy {
	if !named {
		return pc.Policy
	}
	if policy.Kind == evaluator.PolicySarathi {
		policy.TokenBudget, policy.TBTSLOS = pc.Policy.TokenBudget, pc.Policy.TBTSLOS
	}
	return policy
}

// policyFitsCluster checks cl's policy against its machine types: a
// --tbt-slo shorter than one iteration of a machine type is bad input
// (exit 2), naming the flag.
func policyFitsCluster(cl resolve.Cluster) error {
	if cl.Policy.Kind != evaluator.PolicySarathi || cl.Policy.TBTSLOS <= 0 {
		return nil
	}
	if _, _, err := evaluator.SarathiBudgets(cl.Sim()); err != nil {
		return badInputf("--tbt-slo: %v", err)
	}
	return nil
}
