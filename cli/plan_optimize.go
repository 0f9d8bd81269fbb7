package cli

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/urfave/cli/v2"

	"splitplan/search"
	"splitplan/slo"
)

// optimizeConfig is the configuration of an optimize run (and of the plot
// commands that run a search): built once — defaults, then the flags,
// which the plan's part tables ([optimize], [workload], [slo],
// [simulation]) set where the command line does not give them — and
// validated once when it becomes a search problem (problem).
type optimizeConfig struct {
	// Goal is cost, power, throughput or batch.
	Goal string
	// The workload part: the built-in size distribution or trace file,
	// the rate (RPS: the target rate of the goals at a rate), the length,
	// the seed and the arrivals' shape.
	workloadConfig
	// PowerBudgetKW or CostBudgetUSDPerH bounds the throughput and batch goals.
	PowerBudgetKW     float64
	CostBudgetUSDPerH float64
	// Model is the LLM served.
	Model string
	// Designs are the designs searched (default all).
	Designs []string
	// GPUs generates the design space from GPUs: a baseline per GPU and
	// tensor parallelism, and a Splitwise design per ordered pair.
	GPUs []string
	// Prices sets the price of a GPU-hour per GPU family, e.g. h200 = 3.9.
	Prices map[string]float64
	// MaxMachines bounds each pool.
	MaxMachines int
	// Seeds replicates the workload: every seed's trace must pass.
	Seeds int
	// Precision is the relative precision of capacities.
	Precision float64
	// SLO holds the slowdown factors, absolute limits and the reference.
	sloConfig
	// AbortAfter stops unsustainable simulations: "30s", or "0" for never.
	AbortAfter string
	// Verify is the length of the traffic every optimum is checked over
	// (search.Problem.VerifyS): "1h", or "0" for no check.
	Verify string
	// Compat is "splitwise-sim" to reproduce the reference simulator.
	Compat string

	// given records the flags (by name) given on the command line or by
	// the plan's tables, as opposed to defaults.
	given map[string]bool
}

// sloConfig is the SLO part of a configuration: P50, P90, P99 slowdown
// factors per metric, absolute limits in seconds replacing some, and the
// machine type slowdowns are measured against.
type sloConfig struct {
	// SLOSet names the targets: a set of slo.NamedSet (paper, tokens,
	// goodput) or a list of METRIC_pNN keys (slo.ParseSet); "" is
	// slo.DefaultSet, or no set when Attainment gives a goodput.
	SLOSet      string
	SLOTTFT     []float64
	SLOTBT      []float64
	SLOE2E      []float64
	SLOAbsolute map[string]float64
	// SLOReference is the machine type slowdowns are measured against.
	SLOReference string
	// Attainment, when set, is goodput's fraction of requests that must
	// meet every per-request limit of Limits at once (DistServe).
	Attainment float64
	// Limits are goodput's per-request limits in seconds, by metric name
	// (ttft, tpot, itl, stall, e2e, queue).
	Limits map[string]float64
}

// goodputLimits are goodput's per-request limits, each a flag named after
// the metric it bounds (a key goodput_NAME of a plan's [slo] table) and
// what it bounds: the one list the
// flags, the plan keys and the configuration read.
var goodputLimits = []struct{ Name, Bounds string }{
	{"ttft", "each request's time to first token at most `SECONDS` (2.5 or 2.5s)"},
	{"tpot", "each request's mean time between tokens at most `SECONDS` (0.15 or 150ms)"},
	{"itl", "each of a request's gaps between tokens at most `SECONDS` (the same check as --stall)"},
	{"stall", "each request's longest gap between tokens at most `SECONDS`"},
	{"e2e", "each request's end-to-end latency at most `SECONDS`"},
	{"queue", "each request's scheduling delay at most `SECONDS`"},
}

// goodputFlags are the names of goodputLimits, in order.
var goodputFlags = func() []string {
	names := make([]string, len(goodputLimits))
	for i, l := range goodputLimits {
		names[i] = l.Name
	}
	return names
}()

// defaultOptimizeConfig is the configuration of an optimize run given no
// plan and no flags; the flags show these defaults.
func defaultOptimizeConfig() optimizeConfig {
	return optimizeConfig{
		Model: defaultModel, workloadConfig: defaultWorkloadConfig(), MaxMachines: defaultMaxMachines, Seeds: 1, Precision: search.DefaultPrecision,
		sloConfig:  defaultSLOConfig(),
		AbortAfter: defaultAbortAfter,
		Verify:     defaultVerify,
	}
}

// defaultSLOConfig is the SPEC's nine slowdown SLOs against a DGX-A100.
func defaultSLOConfig() sloConfig {
	f := func(m slo.Metric) []float64 { v := slo.PaperFactors[m]; return v[:] }
	return sloConfig{SLOTTFT: f(slo.TTFT), SLOTBT: f(slo.TBT), SLOE2E: f(slo.E2E), SLOReference: search.DefaultReference}
}

// optimizeConfigFrom builds an optimize configuration: defaults, then the
// flags of c (which a plan's part tables have set where the command line
// does not give them, applyPlanParts). fallback, when the goal is still
// unset, gives a goal and its rate or budget (plot commands run a search
// of their own with a default goal).
func optimizeConfigFrom(c *cli.Context, fallback *optimizeConfig) (*optimizeConfig, error) {
	cfg := defaultOptimizeConfig()
	cfg.given = map[string]bool{}
	if err := cfg.readFlags(c); err != nil {
		return nil, err
	}
	if cfg.Goal == "" && fallback != nil {
		cfg.mergeGoal(fallback)
	}
	return &cfg, nil
}

// mergeGoal takes the goal of t with its rate and budgets (when t names
// a goal); a rate or budget already given stays.
func (cfg *optimizeConfig) mergeGoal(t *optimizeConfig) {
	if t.Goal == "" {
		return
	}
	cfg.Goal, cfg.given["goal"] = t.Goal, true
	if cfg.RPSGiven || cfg.given["power-budget"] || cfg.given["cost-budget"] {
		return
	}
	if t.RPS != 0 {
		cfg.RPS, cfg.RPSGiven = t.RPS, true
	}
	for _, n := range []struct {
		flag string
		dst  *float64
		v    float64
	}{{"power-budget", &cfg.PowerBudgetKW, t.PowerBudgetKW}, {"cost-budget", &cfg.CostBudgetUSDPerH, t.CostBudgetUSDPerH}} {
		if n.v != 0 {
			*n.dst, cfg.given[n.flag] = n.v, true
		}
	}
}

// readFlags overlays the flags given on the command line.
func (cfg *optimizeConfig) readFlags(c *cli.Context) error {
	str := func(flag string, dst *string) {
		if isSet(c, flag) {
			*dst, cfg.given[flag] = c.String(flag), true
		}
	}
	num := func(flag string, dst *float64) {
		if isSet(c, flag) {
			*dst, cfg.given[flag] = c.Float64(flag), true
		}
	}
	integer := func(flag string, dst *int) {
		if isSet(c, flag) {
			*dst, cfg.given[flag] = c.Int(flag), true
		}
	}
	str("goal", &cfg.Goal)
	num("power-budget", &cfg.PowerBudgetKW)
	num("cost-budget", &cfg.CostBudgetUSDPerH)
	cfg.workloadConfig.readFlags(c) // (the rate with the workload part, workload.go)
	str("model", &cfg.Model)
	if err := cfg.readDesignFlags(c); err != nil { // (designs.go)
		return err
	}
	if isSet(c, "price") {
		prices := map[string]float64{}
		for k, v := range cfg.Prices {
			prices[k] = v // the plan's, overridden one by one
		}
		seen := map[string]bool{}
		for _, kv := range c.StringSlice("price") {
			for _, one := range strings.Split(kv, ",") {
				k, v, ok := strings.Cut(strings.TrimSpace(one), "=")
				f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
				if !ok || err != nil || !(f > 0) || math.IsInf(f, 0) {
					return badInputf("--price: %q: expected GPU=DOLLARS_PER_GPU_HOUR like h200=3.9", one)
				}
				k = strings.ToLower(strings.TrimSpace(k))
				if seen[k] {
					return badInputf("--price: %s is priced twice: give each GPU one price", k)
				}
				seen[k] = true
				prices[k] = f
			}
		}
		cfg.Prices, cfg.given["price"] = prices, true
	}
	integer("max-machines", &cfg.MaxMachines)
	integer("seeds", &cfg.Seeds)
	num("precision", &cfg.Precision)
	str("abort-after", &cfg.AbortAfter)
	str("verify", &cfg.Verify)
	str("compat", &cfg.Compat)
	return cfg.sloConfig.readFlags(c, cfg.given)
}

// readFlags overlays the SLO flags given on the command line; given (may
// be nil) records them.
func (s *sloConfig) readFlags(c *cli.Context, given map[string]bool) error {
	if err := s.readFactorFlags(c, given); err != nil {
		return err
	}
	if isSet(c, "slo-set") {
		s.SLOSet = c.String("slo-set")
		if given != nil {
			given["slo-set"] = true
		}
	}
	if err := s.readAbsoluteFlags(c, given); err != nil {
		return err
	}
	cloned := false // (the plan's map is not written)
	for _, name := range goodputFlags {
		if !isSet(c, name) {
			continue
		}
		sec, err := parseSeconds(c.String(name))
		if err != nil {
			return badInputf("--%s %s: expected a per-request limit in seconds (0.25) or as a duration (250ms)", name, c.String(name))
		}
		if !cloned {
			s.Limits, cloned = maps.Clone(s.Limits), true
			if s.Limits == nil {
				s.Limits = map[string]float64{}
			}
		}
		s.Limits[name] = sec
	}
	if isSet(c, "slo-reference") {
		s.SLOReference = c.String("slo-reference")
		if given != nil {
			given["slo-reference"] = true
		}
	}
	return nil
}

// readFactorFlags reads --slo-ttft, --slo-tbt and --slo-e2e: three
// non-decreasing slowdown limits each, for P50, P90 and P99.
func (s *sloConfig) readFactorFlags(c *cli.Context, given map[string]bool) error {
	pct := []string{"P50", "P90", "P99"}
	for _, m := range []struct {
		flag string
		dst  *[]float64
	}{{"slo-ttft", &s.SLOTTFT}, {"slo-tbt", &s.SLOTBT}, {"slo-e2e", &s.SLOE2E}} {
		if !isSet(c, m.flag) {
			continue
		}
		parts := strings.Split(c.String(m.flag), ",")
		if len(parts) != len(pct) {
			return badInputf("--%s: expected three slowdown limits for P50,P90,P99 like 2,3,6, got %q", m.flag, c.String(m.flag))
		}
		v := make([]float64, len(parts))
		for i, p := range parts {
			f, err := strconv.ParseFloat(strings.TrimSpace(p), 64)
			if err != nil || !(f > 0) || math.IsInf(f, 0) {
				return badInputf("--%s: %q is not a positive slowdown factor", m.flag, p)
			}
			v[i] = f
		}
		if err := nonDecreasingFactors(v); err != nil {
			return badInputf("--%s %s: %v", m.flag, c.String(m.flag), err)
		}
		*m.dst = v
		if given != nil {
			given[m.flag] = true
		}
	}
	return nil
}

// readAbsoluteFlags reads --slo-abs (limits in seconds) and --attainment.
func (s *sloConfig) readAbsoluteFlags(c *cli.Context, given map[string]bool) error {
	if isSet(c, "slo-abs") && c.String("slo-abs") != "" {
		abs := map[string]float64{}
		for _, kv := range strings.Split(c.String("slo-abs"), ",") {
			k, v, ok := strings.Cut(strings.TrimSpace(kv), "=")
			sec, err := parseSeconds(v)
			if !ok || err != nil {
				return badInputf("--slo-abs: %q: expected METRIC_pNN=SECONDS like tbt_p99=0.2 or tbt_p99=200ms", kv)
			}
			k = strings.ToLower(strings.TrimSpace(k))
			if _, dup := abs[k]; dup {
				return badInputf("--slo-abs: %s is given twice: give each limit once", k)
			}
			abs[k] = sec
		}
		s.SLOAbsolute = abs
		if given != nil {
			given["slo-abs"] = true
		}
	}
	if isSet(c, "attainment") {
		a, err := strconv.ParseFloat(strings.TrimSpace(c.String("attainment")), 64)
		if err != nil || !(a > 0 && a <= 1) {
			return badInputf("--attainment %s: expected the fraction of requests that must meet every limit, in (0, 1], e.g. 0.9", c.String("attainment"))
		}
		s.Attainment = a
		if given != nil {
			given["attainment"] = true
		}
	}
	return nil
}

// nonDecreasingFactors checks that the slowdown limits of P50, P90 and
// P99 do not decrease: a higher percentile of the same slowdowns is never
// lower, so a P99 limit under the P50's would make the P50's meaningless.
func nonDecreasingFactors(v []float64) error {
	pct := []string{"P50", "P90", "P99"}
	for i := 1; i < len(v) && i < len(pct); i++ {
		if v[i] < v[i-1] {
			return fmt.Errorf("the %s limit %g is below the %s limit %g: expected limits that do not decrease from P50 to P99 (a higher percentile is never lower), e.g. 2,3,6",
				pct[i], v[i], pct[i-1], v[i-1])
		}
	}
	return nil
}

// spec turns the SLO configuration into targets, validated: the set's
// targets at their default factors, the factor flags on the set's TTFT,
// TBT and E2E targets, and each absolute limit on its target (a key the
// set lacks adds a target bounded in seconds).
func (s sloConfig) spec() (slo.Spec, error) {
	set := s.SLOSet
	if set == "" {
		set = slo.DefaultSet
	}
	if s.Attainment == 0 && len(s.Limits) > 0 {
		return slo.Spec{}, badInputf("--%s needs --attainment: the fraction of requests that must meet the per-request limits, e.g. --attainment 0.9", firstLimit(s.Limits))
	}
	if s.Attainment != 0 && s.SLOSet == "" {
		// Goodput alone, unless a set is named too.
		return s.goodputSpec(slo.Spec{DrainRiseS: slo.Default().DrainRiseS})
	}
	spec, err := slo.ParseSet(set)
	if err != nil {
		return spec, badInputf("--slo-set %s: %v", set, strings.TrimPrefix(err.Error(), "slo: "))
	}
	for _, m := range []struct {
		name string
		v    []float64
	}{{"ttft", s.SLOTTFT}, {"tbt", s.SLOTBT}, {"e2e", s.SLOE2E}} {
		for i, pct := range []string{"p50", "p90", "p99"} {
			if i >= len(m.v) {
				break
			}
			for j := range spec.Targets {
				if spec.Targets[j].Key() == m.name+"_"+pct {
					spec.Targets[j].Factor = m.v[i]
				}
			}
		}
	}
	keys := make([]string, 0, len(s.SLOAbsolute))
	for k := range s.SLOAbsolute {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		metric, p, err := slo.ParseKey(k)
		if err != nil {
			return spec, badInputf("--slo-abs: %v", strings.TrimPrefix(err.Error(), "slo: "))
		}
		if spec.SetAbsolute(k, s.SLOAbsolute[k]) != nil {
			// Not in the set: one more target, in seconds.
			spec.Targets = append(spec.Targets, slo.Target{Metric: metric, Percentile: p, AbsoluteS: s.SLOAbsolute[k]})
		}
	}
	if s.Attainment != 0 {
		return s.goodputSpec(spec)
	}
	if err := spec.Validate(); err != nil {
		if len(s.SLOAbsolute) == 0 {
			return spec, badInputf("--slo-set %s: %v (give the target a slowdown factor with --slo-ttft/--slo-tbt/--slo-e2e, or a limit in seconds with --slo-abs)", set, strings.TrimPrefix(err.Error(), "slo: "))
		}
		return spec, badInputf("--slo-set %s with --slo-abs: %v", set, strings.TrimPrefix(err.Error(), "slo: "))
	}
	return spec, nil
}

// goodputSpec is spec with the goodput of --attainment and the per-request
// limits, validated.
func (s sloConfig) goodputSpec(spec slo.Spec) (slo.Spec, error) {
	g := slo.Goodput{Attainment: s.Attainment}
	for _, name := range goodputFlags {
		v, ok := s.Limits[name]
		if !ok {
			continue
		}
		m, err := slo.ParseMetric(name)
		if err != nil {
			return spec, badInputf("--%s: %v", name, err)
		}
		if !(v > 0) || math.IsInf(v, 0) {
			return spec, badInputf("--%s %v: a per-request limit must be a positive number of seconds", name, v)
		}
		g.Limits = append(g.Limits, slo.Limit{Metric: m, S: v})
	}
	for name := range s.Limits {
		if !slices.Contains(goodputFlags, name) {
			return spec, badInputf("limits: unknown per-request limit %q (want %s)", name, strings.Join(goodputFlags, ", "))
		}
	}
	if len(g.Limits) == 0 {
		return spec, badInputf("--attainment %g needs at least one per-request limit: --%s", s.Attainment, strings.Join(goodputFlags, ", --"))
	}
	if err := spec.SetGoodput(g); err != nil {
		return spec, badInputf("--attainment: %v", strings.TrimPrefix(err.Error(), "slo: "))
	}
	if err := spec.Validate(); err != nil {
		return spec, badInputf("SLOs: %v", strings.TrimPrefix(err.Error(), "slo: "))
	}
	return spec, nil
}

// firstLimit is the first of goodputFlags that limits sets.
func firstLimit(limits map[string]float64) string {
	for _, name := range goodputFlags {
		if _, ok := limits[name]; ok {
			return name
		}
	}
	return "ttft"
}
