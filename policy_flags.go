package main

import (
	"strings"

	"github.com/urfave/cli/v2"

	"splitplan/evaluator"
)

// policyFlags choose the batching policy of baseline and mixed-pool
// machines, and the sarathi policy's token budget.
func policyFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "policy", Value: evaluator.PolicyMixed,
			Usage: "batching policy of baseline and mixed-pool machines: " + strings.Join(evaluator.Policies(), ", ") +
				" (Orca mixed batching; FasterTransformer; vLLM prefill-first; Sarathi-Serve chunked prefills)"},
		&cli.IntFlag{Name: "token-budget", Usage: "sarathi: tokens per iteration, a decode counting 1 and a prompt chunk its tokens (default 512)"},
		&cli.StringFlag{Name: "tbt-slo", Usage: "sarathi: derive each machine type's token budget from this time between tokens, in seconds (0.1) or as a duration (100ms)"},
	}
}

// policyFromFlags sets opt's batching policy from the policy flags.
// --token-budget and --tbt-slo apply only to --policy sarathi, and not
// together.
func policyFromFlags(c *cli.Context, opt *evaluator.Options) error {
	p, err := evaluator.ParsePolicy(c.String("policy"))
	if err != nil {
		return badInputf("--policy: %v", err)
	}
	budget, slo := c.IsSet("token-budget"), c.IsSet("tbt-slo")
	if (budget || slo) && p != evaluator.PolicySarathi {
		f := "--token-budget"
		if !budget {
			f = "--tbt-slo"
		}
		return badInputf("%s applies only to --policy %s (the policy is %s)", f, evaluator.PolicySarathi, p)
	}
	if budget && slo {
		return badInputf("--token-budget and --tbt-slo: give one (the budget, or the TBT SLO to derive it from)")
	}
	opt.Policy = p
	if budget {
		n := c.Int("token-budget")
		if n < 1 {
			return badInputf("--token-budget %d: expected a positive number of tokens per iteration", n)
		}
		opt.TokenBudget = n
	}
	if slo {
		s := c.String("tbt-slo")
		sec, err := parseSeconds(s)
		if err != nil {
			return badInputf("--tbt-slo %q: expected a positive time between tokens in seconds (0.1) or a duration (100ms)", s)
		}
		opt.TBTSLOS = sec
	}
	return nil
}

// policyFitsCluster checks opt's policy settings against cl's machine
// types: a --tbt-slo shorter than one iteration of a machine type is bad
// input (exit 2), naming the flag.
func policyFitsCluster(cl evaluator.Cluster, opt evaluator.Options) error {
	if opt.TBTSLOS <= 0 {
		return nil
	}
	if _, _, err := evaluator.SarathiBudgets(cl, opt); err != nil {
		return badInputf("--tbt-slo: %v", err)
	}
	return nil
}
