package slo

import (
	"fmt"
	"math"
	"slices"
	"splitplan/internal/enum"
	"strings"
	"sync"

	"splitplan/evaluator"
	"splitplan/evaluator/perf"
	"splitplan/traces"
)

// Metric is a latency an SLO can bound. The zero value is no metric
// (Validate rejects it).
type Metric int

// Metrics an SLO can bound.
const (
	// TTFT is the time to first token.
	TTFT Metric = iota + 1
	// TBT is the mean time between tokens of a request, (E2E − TTFT) /
	// (output − 1): the paper's TBT, also called TPOT ("tpot" parses as
	// TBT).
	TBT
	// E2E is the end-to-end latency.
	E2E
	// ITL is the inter-token latency: every gap between two consecutive
	// output tokens of every request (the first gap, after the first
	// token, included), token-weighted — a request of n output tokens
	// gives n − 1 values. Its percentiles come from a streamed sketch
	// (Measurements.SetSketch), within quantile.RelativeError.
	ITL
	// Stall is a request's longest gap between two consecutive output
	// tokens (one value a request of at least two output tokens).
	Stall
	// Queue is a request's scheduling delay: arrival to the start of its
	// first prompt iteration, plus, in a Splitwise design, the wait from
	// the prompt's end (or its KV-cache transfer's) to its first decode
	// iteration. It has no reference latency: only absolute targets.
	Queue
	// GoodputMiss is not a latency but the target of a Spec's Goodput:
	// the fraction of requests that miss some per-request limit, bounded
	// by 1 − the attainment (named "goodput"). Spec.SetGoodput adds its
	// target; it is never parsed from a key.
	GoodputMiss
)

// numMetrics is the number of latency metrics (TTFT … Queue).
const numMetrics = int(Queue)

// metricNames are the metrics' names, indexed by Metric.
var metricNames = [...]string{TTFT: "ttft", TBT: "tbt", E2E: "e2e", ITL: "itl", Stall: "stall", Queue: "queue", GoodputMiss: "goodput"}

// metricAliases are other names of metrics: "tpot" is the TBT.
var metricAliases = map[string]Metric{"tpot": TBT}

// Metrics lists every metric: the paper's three (PaperMetrics), then ITL,
// Stall and Queue.
func Metrics() []Metric { return []Metric{TTFT, TBT, E2E, ITL, Stall, Queue} }

// PaperMetrics lists the Splitwise paper's metrics, those of Default:
// TTFT, TBT and E2E.
func PaperMetrics() []Metric { return []Metric{TTFT, TBT, E2E} }

// valid reports whether m is one of Metrics().
func (m Metric) valid() bool { return m >= TTFT && m <= Queue }

// index is m's position in Metrics() (m must be valid).
func (m Metric) index() int { return int(m - TTFT) }

// String is the metric's name as SLO keys and flags spell it: "ttft",
// "tbt", "e2e", "itl", "stall" or "queue" ("Metric(N)" for an invalid
// value).
func (m Metric) String() string { return enum.Name(metricNames[:], m, "Metric") }

// metricList is the metrics' names for error messages: "ttft, tbt (or
// tpot), e2e, itl, stall or queue".
func metricList() string {
	var names []string
	for _, m := range Metrics() {
		n := m.String()
		if m == TBT {
			n += " (or tpot)"
		}
		names = append(names, n)
	}
	return strings.Join(names[:len(names)-1], ", ") + " or " + names[len(names)-1]
}

// ParseMetric reads a metric's name (any case); "tpot" is TBT.
func ParseMetric(s string) (Metric, error) {
	if i, ok := enum.Index(metricNames[:], s); ok && Metric(i).valid() {
		return Metric(i), nil
	}
	if m, ok := metricAliases[strings.ToLower(strings.TrimSpace(s))]; ok {
		return m, nil
	}
	return 0, fmt.Errorf("slo: unknown metric %q (want %s)", s, metricList())
}

// MarshalText writes the metric's name; an invalid metric is an error.
func (m Metric) MarshalText() ([]byte, error) {
	if !m.valid() {
		return nil, fmt.Errorf("slo: cannot marshal invalid metric %d", int(m))
	}
	return []byte(m.String()), nil
}

// UnmarshalText reads a metric's name (as ParseMetric).
func (m *Metric) UnmarshalText(text []byte) error {
	if strings.EqualFold(strings.TrimSpace(string(text)), metricNames[GoodputMiss]) {
		*m = GoodputMiss // (a goodput target, as a spec writes it)
		return nil
	}
	v, err := ParseMetric(string(text))
	if err != nil {
		return err
	}
	*m = v
	return nil
}

// Target bounds one percentile of one metric, either as a slowdown against
// the reference (Factor) or as an absolute latency in seconds (AbsoluteS).
type Target struct {
	// Metric is one of Metrics().
	Metric Metric `toml:"metric"`
	// Percentile is the percentile over requests, e.g. 99.
	Percentile float64 `toml:"percentile"`
	// Factor is the largest allowed slowdown (measured / reference).
	Factor float64 `toml:"factor"`
	// AbsoluteS, when positive, is the largest allowed latency in seconds
	// and replaces Factor.
	AbsoluteS float64 `toml:"absolute_s"`
}

// Name is the target's short name, e.g. "P99 TBT" ("GOODPUT" for a
// goodput target).
func (t Target) Name() string {
	if t.Metric == GoodputMiss {
		return "GOODPUT"
	}
	return fmt.Sprintf("P%g %s", t.Percentile, strings.ToUpper(t.Metric.String()))
}

// Key is the target's column-name form, e.g. "tbt_p99".
func (t Target) Key() string {
	return fmt.Sprintf("%s_p%g", t.Metric, t.Percentile)
}

// Spec is a complete set of SLOs: the targets that must all hold, and what
// makes a run sustainable.
type Spec struct {
	// Targets must all hold.
	Targets []Target `toml:"target"`
	// Goodput, when set, bounds every request jointly (DistServe's
	// goodput): the run passes when at least Goodput.Attainment of its
	// requests meets every limit; its target (Metric Goodput) is among
	// Targets. SetGoodput sets both.
	Goodput *Goodput `toml:"goodput"`
	// DrainRiseS is how far the median scheduling delay of the last tenth
	// of the requests (by arrival) may rise above that of the first half
	// before the run counts as not draining (queues growing without
	// bound). Default 2 s.
	DrainRiseS float64 `toml:"drain_rise_s"`
}

// PaperFactors are the Splitwise paper's slowdown limits of each metric at
// P50, P90 and P99 (DefaultPercentiles): TTFT 2×/3×/6×, TBT and E2E
// 1.25×/1.5×/5× the reference. Every default of the SLO factors (flags,
// plans) is read from here.
var PaperFactors = map[Metric][3]float64{TTFT: {2, 3, 6}, TBT: {1.25, 1.5, 5}, E2E: {1.25, 1.5, 5}}

// DefaultPercentiles are the percentiles of the paper's targets.
var DefaultPercentiles = [3]float64{50, 90, 99}

// Default returns the nine SLOs of the Splitwise paper (PaperFactors).
func Default() Spec {
	var t []Target
	for _, m := range PaperMetrics() {
		for i, p := range DefaultPercentiles {
			t = append(t, Target{Metric: m, Percentile: p, Factor: PaperFactors[m][i]})
		}
	}
	return Spec{Targets: t, DrainRiseS: 2}
}

// Validate checks every target, and the goodput limits when the spec has
// them (a Goodput target goes with a Goodput, as SetGoodput adds them).
func (s Spec) Validate() error {
	if len(s.Targets) == 0 {
		return fmt.Errorf("slo: no targets")
	}
	seen := map[string]bool{}
	goodput := 0
	for i, t := range s.Targets {
		if t.Metric == GoodputMiss {
			if s.Goodput == nil || t.Percentile != 100*s.Goodput.Attainment || t.Factor != missAllowed(s.Goodput.Attainment) {
				return fmt.Errorf("slo: target %d: a goodput target goes with the spec's goodput limits (Spec.SetGoodput)", i+1)
			}
			goodput++
			continue
		}
		if !t.Metric.valid() {
			return fmt.Errorf("slo: target %d: metric must be %s, got %v", i+1, metricList(), t.Metric)
		}
		if !(t.Percentile > 0 && t.Percentile <= 100) {
			return fmt.Errorf("slo: target %d (%s): percentile must be in (0, 100], got %v", i+1, t.Metric, t.Percentile)
		}
		if seen[t.Key()] {
			return fmt.Errorf("slo: %s is given twice", t.Name())
		}
		seen[t.Key()] = true
		if t.AbsoluteS < 0 || math.IsNaN(t.AbsoluteS) || math.IsInf(t.AbsoluteS, 0) {
			return fmt.Errorf("slo: %s: absolute limit must be a positive number of seconds, got %v", t.Name(), t.AbsoluteS)
		}
		if t.AbsoluteS == 0 && t.Metric == Queue {
			return fmt.Errorf("slo: %s: the scheduling delay has no reference latency to be a slowdown of: give an absolute limit in seconds (e.g. %s=2)", t.Name(), t.Key())
		}
		if t.AbsoluteS == 0 && (!(t.Factor > 0) || math.IsInf(t.Factor, 0)) {
			return fmt.Errorf("slo: %s: slowdown factor must be a positive number, got %v", t.Name(), t.Factor)
		}
	}
	if s.DrainRiseS < 0 || math.IsNaN(s.DrainRiseS) {
		return fmt.Errorf("slo: drain rise must be zero or positive seconds, got %v", s.DrainRiseS)
	}
	if s.Goodput != nil {
		if goodput != 1 {
			return fmt.Errorf("slo: goodput limits without their target (Spec.SetGoodput)")
		}
		return s.Goodput.Validate()
	}
	return nil
}

// missAllowed is the fraction of requests a goodput of attainment a may
// miss, 1 − a, computed in percent so that a round attainment gives a
// round fraction (0.9 → 0.1, not 0.09999999999999998).
func missAllowed(a float64) float64 { return (100 - 100*a) / 100 }

// SetGoodput makes g part of the spec: its limits, and a target that the
// fraction of requests missing one of them stays within 1 − g.Attainment
// (key goodput_pNN, NN the attainment in percent), after the latency
// targets. g must be valid (Goodput.Validate).
func (s *Spec) SetGoodput(g Goodput) error {
	if err := g.Validate(); err != nil {
		return err
	}
	out := s.Targets[:0:0]
	for _, t := range s.Targets {
		if t.Metric != GoodputMiss {
			out = append(out, t)
		}
	}
	s.Targets = append(out, Target{Metric: GoodputMiss, Percentile: 100 * g.Attainment, Factor: missAllowed(g.Attainment)})
	s.Goodput = &g
	return nil
}

// Reference computes the latencies of a request alone on an uncontended
// reference machine (by default a DGX-A100) from its performance model.
type Reference struct {
	// Perf is the reference machine type's performance model.
	Perf perf.IterationModel
	// Compat reproduces the reference simulator's SLO check: its TBT
	// figure, (E2E − TTFT) / output, is compared against the token curve
	// evaluated at x = the prompt size.
	Compat bool

	// table[p] holds the TTFT and TBT of a prompt of p tokens (see
	// Tabulated).
	table []refLatency
}

// refLatency is a prompt's reference TTFT and TBT in seconds.
type refLatency struct{ ttftS, tbtS float64 }

// Tabulated returns r with the reference TTFT and TBT of every prompt of
// 1 to maxPrompt tokens computed once, for the many simulations a search
// checks: Latencies then looks them up (the same values) and computes
// longer prompts' as before.
func (r Reference) Tabulated(maxPrompt int) Reference {
	r.table = nil
	if maxPrompt < 1 || r.Perf == nil {
		return r
	}
	t := make([]refLatency, maxPrompt+1)
	for p := 1; p <= maxPrompt; p++ {
		t[p].ttftS, t[p].tbtS = r.perPrompt(p)
	}
	r.table = t
	return r
}

// Latencies returns the reference TTFT (the prompt iteration), TBT (one
// decode iteration at batch 1) and E2E (TTFT + (output − 1) × TBT) of a
// request, in seconds.
func (r Reference) Latencies(prompt, output int) (ttft, tbt, e2e float64) {
	if prompt >= 1 && prompt < len(r.table) {
		ttft, tbt = r.table[prompt].ttftS, r.table[prompt].tbtS
	} else {
		ttft, tbt = r.perPrompt(prompt)
	}
	return ttft, tbt, ttft + float64(output-1)*tbt
}

// perPrompt is the reference TTFT and TBT of a prompt of prompt tokens.
func (r Reference) perPrompt(prompt int) (ttft, tbt float64) {
	ttft, _ = r.Perf.PromptTime(prompt)
	if r.Compat {
		tbt, _ = r.Perf.DecodeTime(prompt, 0)
	} else {
		tbt, _ = r.Perf.DecodeTime(1, int64(prompt)+1)
	}
	return ttft, tbt
}

// Figure is one target's outcome.
type Figure struct {
	Target
	// Measured is the percentile of the slowdowns (or of the latencies in
	// seconds, for an absolute target).
	Measured float64
	// Limit is the target's factor or absolute limit.
	Limit float64
	// Slack is (Limit − Measured) / Limit: negative when violated.
	Slack float64
}

// OK reports whether the figure meets its limit.
func (f Figure) OK() bool { return f.Measured <= f.Limit }

// Verdict is the outcome of checking a simulation against a Spec.
type Verdict struct {
	// Figures holds one entry per target, in the Spec's order.
	Figures []Figure
	// Drained reports whether the run was sustainable; DrainNote says why not.
	Drained   bool
	DrainNote string
	// Pass reports whether the run drained and every figure met its limit.
	Pass bool
	// Binding is the index in Figures of the least slack: the SLO that
	// binds (or fails worst).
	Binding int
}

// BindingFigure is the figure with the least slack.
func (v Verdict) BindingFigure() Figure { return v.Figures[v.Binding] }

// Check evaluates the simulation res against the SLOs, each request
// compared with itself alone on the reference machine: it is
// s.Judge(s.Measure(res, ref)).
func (s Spec) Check(res *evaluator.Result, ref Reference) Verdict {
	return s.Judge(s.Measure(res, ref))
}

// Measure is what Judge reads of res: the series the targets read
// (Measure(res, ref, s.Series()...)), plus extra series, and with a
// Goodput the fraction of requests that miss one of its limits.
func (s Spec) Measure(res *evaluator.Result, ref Reference, extra ...Series) Measurements {
	m := Measure(res, ref, append(s.Series(), extra...)...)
	if s.Goodput != nil {
		if gv, err := s.Goodput.JudgeResult(res); err == nil && gv.Requests > 0 {
			m.miss = 1 - gv.Attained
		} else {
			m.miss = math.NaN() // (no requests, or no gap known: fails)
		}
	}
	return m
}

// Series lists the series the targets read, each once, in the targets'
// order.
func (s Spec) Series() []Series {
	var out []Series
	seen := map[Series]bool{}
	for _, t := range s.Targets {
		if t.Metric == GoodputMiss {
			continue // (Spec.Measure reads the requests)
		}
		sr := t.Series()
		if !seen[sr] {
			seen[sr] = true
			out = append(out, sr)
		}
	}
	return out
}

// Series is the series a target reads: its metric, in seconds for an
// absolute target, else as slowdowns.
func (t Target) Series() Series {
	if t.AbsoluteS > 0 {
		return Series{t.Metric, Seconds}
	}
	return Series{t.Metric, Slowdown}
}

// Judge checks the measurements m against the SLOs. m must hold the
// series the targets read (see Series); a figure whose series m lacks is
// NaN and fails.
func (s Spec) Judge(m Measurements) Verdict {
	v := Verdict{Figures: make([]Figure, len(s.Targets)), Drained: true}
	v.Pass = true
	for i, t := range s.Targets {
		f := Figure{Target: t, Limit: t.Factor}
		if t.AbsoluteS > 0 {
			f.Limit = t.AbsoluteS
		}
		if t.Metric == GoodputMiss {
			f.Measured = m.miss
		} else {
			sr := t.Series()
			f.Measured = m.Percentile(sr.Metric, sr.Scale, t.Percentile)
		}
		f.Slack = (f.Limit - f.Measured) / f.Limit
		if !f.OK() {
			v.Pass = false
		}
		if f.Slack < v.Figures[v.Binding].Slack || i == 0 {
			v.Binding = i
		}
		v.Figures[i] = f
	}
	v.Drained, v.DrainNote = m.drain.judge(s.DrainRiseS)
	if !v.Drained {
		v.Pass = false
	}
	return v
}

// Stop returns the limits of the targets that a simulation of reqs can
// fail for certain before it ends (evaluator.Stop): those on the TTFT, the
// E2E and the TBT (Stopper), a relative target's limit its factor over
// each request's latency alone on the reference machine (the slowdown
// Check computes, the same division), an absolute one's its seconds. It
// returns nil when no target is on those metrics. (A Stopper keeps the
// requests' reference latencies for the next workload.)
func (s Spec) Stop(ref Reference, reqs []traces.Request) *evaluator.Stop {
	return s.Stopper(ref).Stop(reqs)
}

// Stopper gives Spec.Stop for workload after workload, keeping each
// request's reference latencies: a search simulates the same requests
// again and again (at every rate, a prefix of one sequence), so each
// request's are computed once. It is safe for concurrent use.
type Stopper struct {
	limits []evaluator.StopLimit // Count left to each Stop
	pct    []float64             // limits' percentiles, in order
	ref    Reference
	mu     sync.Mutex
	// sizes are the (prompt, output) sizes of the requests whose
	// reference latencies latency holds, evaluator.StopMetrics a request.
	sizes   [][2]int
	latency []float64
}

// Stopper returns a Stopper of the spec's targets on the TTFT, the E2E
// and (but in the compat mode, whose TBT the reference simulator divides
// by every output token) the TBT.
func (s Spec) Stopper(ref Reference) *Stopper {
	p := &Stopper{ref: ref}
	for _, t := range s.Targets {
		var m evaluator.StopMetric
		switch {
		case t.Metric == TTFT:
			m = evaluator.StopTTFT
		case t.Metric == E2E:
			m = evaluator.StopE2E
		case t.Metric == TBT && !ref.Compat:
			m = evaluator.StopTBT
		default:
			continue
		}
		p.limits = append(p.limits, evaluator.StopLimit{Name: t.Name(), Metric: m, Factor: t.Factor, AbsoluteS: t.AbsoluteS})
		p.pct = append(p.pct, t.Percentile)
	}
	return p
}

// Stop is Spec.Stop for reqs.
func (p *Stopper) Stop(reqs []traces.Request) *evaluator.Stop {
	if len(p.limits) == 0 {
		return nil
	}
	const k = evaluator.StopMetrics
	p.mu.Lock()
	defer p.mu.Unlock()
	same := 0
	for same < min(len(reqs), len(p.sizes)) && p.sizes[same] == [2]int{reqs[same].PromptTokens, reqs[same].OutputTokens} {
		same++
	}
	if same < min(len(reqs), len(p.sizes)) {
		// Other requests: new arrays, as earlier Stops still read these.
		p.sizes = append([][2]int(nil), p.sizes[:same]...)
		p.latency = append([]float64(nil), p.latency[:same*k]...)
	}
	for _, q := range reqs[min(len(p.sizes), len(reqs)):] {
		p.sizes = append(p.sizes, [2]int{q.PromptTokens, q.OutputTokens})
		rt, rb, re := p.ref.Latencies(q.PromptTokens, q.OutputTokens)
		p.latency = append(p.latency, rt, re, rb) // StopTTFT, StopE2E, StopTBT
	}
	st := &evaluator.Stop{Limits: slices.Clone(p.limits), Reference: p.latency[: len(reqs)*k : len(reqs)*k]}
	multi := 0 // the requests with a TBT (Measure's TBT series)
	for _, q := range reqs {
		if q.OutputTokens > 1 {
			multi++
		}
	}
	for i := range st.Limits {
		l := &st.Limits[i]
		n := len(reqs)
		if l.Metric == evaluator.StopTBT {
			n = multi
		}
		l.Count = CertainlyOver(n, p.pct[i])
	}
	return st
}
