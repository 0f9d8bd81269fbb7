package slo

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// TokenFactors are the default slowdown limits at P50, P90 and P99
// (DefaultPercentiles) of the metrics the paper has no limit for, each
// against the request's reference TBT (one decode iteration alone on the
// reference machine): every gap (ITL) as the paper's TBT, 1.25×/1.5×/5×;
// a request's longest gap (Stall) as the paper's TTFT, 2×/3×/6× — a stall
// is a wait for other requests' prompts, the wait the paper tolerates
// before the first token. The Queue has none: it has no reference.
var TokenFactors = map[Metric][3]float64{ITL: {1.25, 1.5, 5}, Stall: {2, 3, 6}}

// DefaultFactor is the default slowdown limit of the metric at the
// percentile: PaperFactors or TokenFactors at P50, P90 or P99, and no
// default (false) at other percentiles or for the Queue.
func DefaultFactor(m Metric, percentile float64) (float64, bool) {
	f, ok := PaperFactors[m]
	if !ok {
		f, ok = TokenFactors[m]
	}
	if !ok {
		return 0, false
	}
	for i, p := range DefaultPercentiles {
		if p == percentile {
			return f[i], true
		}
	}
	return 0, false
}

// DefaultSet is the name of the default SLO set, the paper's nine.
const DefaultSet = "paper"

// setNames are the named SLO sets, in the order SetNames lists them.
var setNames = []string{"paper", "tokens", "goodput"}

// SetNames lists the named SLO sets: "paper" (the default), "tokens" and
// "goodput" (see NamedSet).
func SetNames() []string { return append([]string(nil), setNames...) }

// NamedSet returns a named set of SLOs, each target at its DefaultFactor,
// with the default drain rise (2 s):
//
//   - "paper": the Splitwise paper's nine, Default(): TTFT, TBT and E2E at
//     P50, P90 and P99.
//   - "tokens": latency as a user reading the stream feels it: TTFT, ITL
//     (every gap) and Stall (each request's longest gap) at P50, P90 and
//     P99 — nine targets.
//   - "goodput": DistServe's pair, TTFT and TPOT (the TBT) at P90, each
//     over its own distribution (Attainment judges the joint one).
//
// The name is read in any case; an unknown one is an error listing them.
func NamedSet(name string) (Spec, error) {
	var metrics []Metric
	percentiles := DefaultPercentiles[:]
	switch strings.ToLower(strings.TrimSpace(name)) {
	case "paper":
		return Default(), nil
	case "tokens":
		metrics = []Metric{TTFT, ITL, Stall}
	case "goodput":
		metrics, percentiles = []Metric{TTFT, TBT}, []float64{90}
	default:
		return Spec{}, fmt.Errorf("slo: unknown SLO set %q (want %s)", name, setList())
	}
	var t []Target
	for _, m := range metrics {
		for _, p := range percentiles {
			f, _ := DefaultFactor(m, p)
			t = append(t, Target{Metric: m, Percentile: p, Factor: f})
		}
	}
	return Spec{Targets: t, DrainRiseS: 2}, nil
}

// setList is "paper, tokens or goodput".
func setList() string {
	return strings.Join(setNames[:len(setNames)-1], ", ") + " or " + setNames[len(setNames)-1]
}

// ParseKey reads a target's key, METRIC_pNN as Target.Key writes it
// ("itl_p99", "ttft_p99.9"; "tpot_p90" is tbt_p90), in any case: the
// metric and the percentile, in (0, 100].
func ParseKey(key string) (Metric, float64, error) {
	k := strings.ToLower(strings.TrimSpace(key))
	i := strings.LastIndex(k, "_p")
	if i < 0 {
		return 0, 0, fmt.Errorf("slo: %q is not an SLO key: want METRIC_pNN such as itl_p99, METRIC %s", key, metricList())
	}
	m, err := ParseMetric(k[:i])
	if err != nil {
		return 0, 0, fmt.Errorf("slo: %q: unknown metric %q (want %s)", key, k[:i], metricList())
	}
	p, err := strconv.ParseFloat(k[i+2:], 64)
	if err != nil || !(p > 0 && p <= 100) {
		return 0, 0, fmt.Errorf("slo: %q: the percentile must be a number in (0, 100], got %q", key, k[i+2:])
	}
	return m, p, nil
}

// ParseSet reads an SLO set: a name of NamedSet, or a comma-separated
// list of keys (ParseKey: "ttft_p99,itl_p99,stall_p90"), each target at
// its DefaultFactor. A key with no default factor (another percentile, or
// any Queue key) is left with neither limit, for SetAbsolute to give it
// one: Validate rejects it otherwise. A key given twice, an unknown name
// or key, or an empty list is an error naming what is wrong and what is
// valid. The spec has the default drain rise (2 s).
func ParseSet(s string) (Spec, error) {
	if !strings.Contains(s, ",") && !strings.Contains(s, "_p") {
		spec, err := NamedSet(s)
		if err != nil {
			return Spec{}, fmt.Errorf("slo: unknown SLO set %q: want a set (%s) or a list of METRIC_pNN keys such as ttft_p99,itl_p99 (METRIC %s)", s, setList(), metricList())
		}
		return spec, nil
	}
	spec := Spec{DrainRiseS: 2}
	seen := map[string]bool{}
	for _, key := range strings.Split(s, ",") {
		if strings.TrimSpace(key) == "" {
			return Spec{}, fmt.Errorf("slo: empty key in the SLO list %q", s)
		}
		m, p, err := ParseKey(key)
		if err != nil {
			return Spec{}, fmt.Errorf("%w (or a set: %s)", err, setList())
		}
		t := Target{Metric: m, Percentile: p}
		if seen[t.Key()] {
			return Spec{}, fmt.Errorf("slo: %s is given twice in %q", t.Name(), s)
		}
		seen[t.Key()] = true
		t.Factor, _ = DefaultFactor(m, p)
		spec.Targets = append(spec.Targets, t)
	}
	return spec, nil
}

// SetAbsolute bounds the spec's target of the key (ParseKey's form) by an
// absolute latency in seconds, in place of its slowdown factor. A key the
// spec has no target for is an error listing the spec's keys; a limit that
// is not a positive number of seconds is an error.
func (s *Spec) SetAbsolute(key string, seconds float64) error {
	m, p, err := ParseKey(key)
	if err != nil {
		return err
	}
	if !(seconds > 0) || math.IsInf(seconds, 0) {
		return fmt.Errorf("slo: %s: an absolute limit must be a positive number of seconds, got %v", key, seconds)
	}
	for i := range s.Targets {
		if s.Targets[i].Metric == m && s.Targets[i].Percentile == p {
			s.Targets[i].AbsoluteS = seconds
			return nil
		}
	}
	keys := make([]string, len(s.Targets))
	for i, t := range s.Targets {
		keys[i] = t.Key()
	}
	return fmt.Errorf("slo: no target %s among the SLOs (%s)", Target{Metric: m, Percentile: p}.Key(), strings.Join(keys, ", "))
}
