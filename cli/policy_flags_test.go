package cli

import (
	"strings"
	"testing"
)

func TestSimulatePolicy(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--design", "Baseline-H100", "--machines", "40", "--policy", "sarathi", "--token-budget", "512",
			"--workload", "conversation", "--rps", "70", "--duration", "30s"},
			"Baseline-H100 ×40, bloom-176b, 1520.0 $/h, 455.0 kW (splitplan model), sarathi batching (512-token budget)\n"},
		{[]string{"--design", "Baseline-H100", "--machines", "4", "--policy", "sarathi", "--tbt-slo", "100ms",
			"--workload", "conversation", "--rps", "5", "--duration", "10s"},
			"sarathi batching (648-token budget from a 0.1 s TBT SLO)\n"},
		{[]string{"--design", "HA", "--prompt", "2", "--token", "1", "--policy", "sarathi", "--tbt-slo", "0.15",
			"--workload", "conversation", "--rps", "5", "--duration", "10s"},
			"sarathi batching (1063/381-token budget from a 0.15 s TBT SLO)\n"},
		{[]string{"--design", "A100", "--machines", "3", "--policy", "vLLM", "--rps", "3", "--duration", "10s"},
			"(splitplan model), prefill-first batching\n"},
		{[]string{"--design", "A100", "--machines", "3", "--policy", "request-level", "--rps", "3", "--duration", "10s"},
			"(splitplan model), request-level batching\n"},
		{[]string{"--design", "A100", "--machines", "3", "--policy", "mixed", "--rps", "3", "--duration", "10s"},
			"(splitplan model)\n"},
	} {
		code, out, errs := runCLI(t, append([]string{"simulate"}, tc.args...)...)
		if code != 0 {
			t.Errorf("%v: exit %d: %s", tc.args, code, errs)
			continue
		}
		if !strings.Contains(out, tc.want) || !strings.Contains(out, "completed") {
			t.Errorf("%v: output lacks %q:\n%s", tc.args, tc.want, out)
		}
	}
}

func TestSimulatePolicyBadFlags(t *testing.T) {
	base := []string{"simulate", "--design", "Baseline-H100", "--machines", "2", "--rps", "2", "--duration", "5s"}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--policy", "fifo"}, `--policy: unknown batching policy "fifo" (valid: mixed, request-level, prefill-first, sarathi)`},
		{[]string{"--token-budget", "256"}, "--token-budget applies only to --policy sarathi (the policy is mixed)"},
		{[]string{"--policy", "prefill-first", "--tbt-slo", "0.1"}, "--tbt-slo applies only to --policy sarathi (the policy is prefill-first)"},
		{[]string{"--policy", "sarathi", "--token-budget", "0"}, "--token-budget 0: expected a positive number"},
		{[]string{"--policy", "sarathi", "--token-budget", "-4"}, "--token-budget -4"},
		{[]string{"--policy", "sarathi", "--token-budget", "many"}, "token-budget"},
		{[]string{"--policy", "sarathi", "--tbt-slo", "fast"}, `--tbt-slo "fast": expected a positive time`},
		{[]string{"--policy", "sarathi", "--tbt-slo", "-1"}, `--tbt-slo "-1"`},
		{[]string{"--policy", "sarathi", "--tbt-slo", "0.1", "--token-budget", "512"}, "--token-budget and --tbt-slo: give one"},
		{[]string{"--policy", "sarathi", "--tbt-slo", "1ms"}, "--tbt-slo: sarathi: a TBT SLO of 0.001 s is shorter than one decode iteration on DGX-H100"},
	} {
		code, _, errs := runCLI(t, append(base, tc.args...)...)
		if code != 2 || !strings.Contains(errs, tc.want) {
			t.Errorf("%v: exit %d, stderr %q; want exit 2 saying %q", tc.args, code, errs, tc.want)
		}
	}
}
