package perf

import (
	"fmt"
	"math"
	"sort"
	"strings"

	"gonum.org/v1/gonum/stat"
)

// Pair is the fitted performance model of one model on one hardware at one
// tensor parallelism: the knots of the default curves and of the
// compatibility (SplitwiseSim) curves. Token counts are knot positions,
// times are in seconds. Its TOML form is one [[perf]] table.
type Pair struct {
	// ModelName is the LLM, e.g. "bloom-176b" (the field cannot be called
	// Model: that is the method returning the IterationModel).
	ModelName string `toml:"model"`
	// Hardware is the GPU type as profiled, e.g. "h100-80gb".
	Hardware string `toml:"hardware"`
	// TP is the tensor parallelism.
	TP int `toml:"tp"`
	// MixedPenalty multiplies the prompt time of a mixed iteration.
	MixedPenalty float64 `toml:"mixed_penalty"`

	// PromptTokens and PromptTimeS are the default prompt curve: the
	// iteration time against the batch's total prompt tokens (the model
	// uses their isotonic fit).
	PromptTokens []float64 `toml:"prompt_tokens"`
	PromptTimeS  []float64 `toml:"prompt_time_s"`
	// DecodeBatch and DecodeTimeS are the default decode curve at the
	// base context: the iteration time against the decoding requests.
	DecodeBatch []float64 `toml:"decode_batch"`
	DecodeTimeS []float64 `toml:"decode_time_s"`
	// BaseContextTokens is the mean context per request at which the
	// decode curve was profiled.
	BaseContextTokens float64 `toml:"base_context_tokens"`
	// ContextTokens and ContextTimeS are the batch-1 decode time against
	// the request's mean context. Their least-squares slope is the
	// default model's KV-cache cost per context token (ContextSlope);
	// their range is the profiled context range.
	ContextTokens []float64 `toml:"context_tokens"`
	ContextTimeS  []float64 `toml:"context_time_s"`

	// CompatBatchTokens, CompatPromptTimeS and CompatTokenTimeS are the
	// SplitwiseSim curves, both keyed on prompt_size × batch_size.
	CompatBatchTokens []float64 `toml:"compat_batch_tokens"`
	CompatPromptTimeS []float64 `toml:"compat_prompt_time_s"`
	CompatTokenTimeS  []float64 `toml:"compat_token_time_s"`
}

// Name returns "model/hardware/tpN", the pair's key as errors show it.
func (p *Pair) Name() string {
	return fmt.Sprintf("%s/%s/tp%d", p.ModelName, p.Hardware, p.TP)
}

// PromptCurve returns the default prompt curve (shares p's slices).
func (p *Pair) PromptCurve() Curve { return Curve{p.PromptTokens, p.PromptTimeS} }

// DecodeCurve returns the default decode curve (shares p's slices).
func (p *Pair) DecodeCurve() Curve { return Curve{p.DecodeBatch, p.DecodeTimeS} }

// ContextCurve returns the batch-1 context curve (shares p's slices).
func (p *Pair) ContextCurve() Curve { return Curve{p.ContextTokens, p.ContextTimeS} }

// CompatPromptCurve returns the SplitwiseSim prompt curve (shares p's slices).
func (p *Pair) CompatPromptCurve() Curve { return Curve{p.CompatBatchTokens, p.CompatPromptTimeS} }

// CompatTokenCurve returns the SplitwiseSim token curve (shares p's slices).
func (p *Pair) CompatTokenCurve() Curve { return Curve{p.CompatBatchTokens, p.CompatTokenTimeS} }

// Validate checks p: names present, tp and the penalty positive, every
// curve with at least one knot, knots finite and strictly increasing, as
// many times as knots, times positive and finite. Errors name the pair and
// the field (by its TOML key).
func (p *Pair) Validate() error {
	if strings.TrimSpace(p.ModelName) == "" {
		return fmt.Errorf("perf: pair %s: model: expected a name", p.Name())
	}
	if strings.TrimSpace(p.Hardware) == "" {
		return fmt.Errorf("perf: pair %s: hardware: expected a name", p.Name())
	}
	if p.TP < 1 {
		return fmt.Errorf("perf: pair %s: tp: expected a positive integer, got %d", p.Name(), p.TP)
	}
	if !(p.MixedPenalty > 0) || math.IsInf(p.MixedPenalty, 0) {
		return fmt.Errorf("perf: pair %s: mixed_penalty: expected a positive finite factor, got %v", p.Name(), p.MixedPenalty)
	}
	if !(p.BaseContextTokens > 0) || math.IsInf(p.BaseContextTokens, 0) {
		return fmt.Errorf("perf: pair %s: base_context_tokens: expected a positive finite number, got %v", p.Name(), p.BaseContextTokens)
	}
	for _, c := range []struct {
		xName, yName string
		x, y         []float64
	}{
		{"prompt_tokens", "prompt_time_s", p.PromptTokens, p.PromptTimeS},
		{"decode_batch", "decode_time_s", p.DecodeBatch, p.DecodeTimeS},
		{"context_tokens", "context_time_s", p.ContextTokens, p.ContextTimeS},
		{"compat_batch_tokens", "compat_prompt_time_s", p.CompatBatchTokens, p.CompatPromptTimeS},
		{"compat_batch_tokens", "compat_token_time_s", p.CompatBatchTokens, p.CompatTokenTimeS},
	} {
		if len(c.x) == 0 {
			return fmt.Errorf("perf: pair %s: %s: expected at least one knot", p.Name(), c.xName)
		}
		if len(c.y) != len(c.x) {
			return fmt.Errorf("perf: pair %s: %s has %d values, expected one per %s knot (%d)",
				p.Name(), c.yName, len(c.y), c.xName, len(c.x))
		}
		for i, x := range c.x {
			if math.IsNaN(x) || math.IsInf(x, 0) {
				return fmt.Errorf("perf: pair %s: %s[%d] = %v: expected a finite number", p.Name(), c.xName, i, x)
			}
			if i > 0 && !(x > c.x[i-1]) {
				return fmt.Errorf("perf: pair %s: %s[%d] = %v: expected knots strictly increasing (previous %v)",
					p.Name(), c.xName, i, x, c.x[i-1])
			}
		}
		for i, y := range c.y {
			if !(y > 0) || math.IsInf(y, 0) {
				return fmt.Errorf("perf: pair %s: %s[%d] = %v: expected a positive finite time in seconds",
					p.Name(), c.yName, i, y)
			}
		}
	}
	return nil
}

// clone returns a deep copy of p.
func (p *Pair) clone() Pair {
	q := *p
	cp := func(v []float64) []float64 { return append([]float64(nil), v...) }
	q.PromptTokens, q.PromptTimeS = cp(p.PromptTokens), cp(p.PromptTimeS)
	q.DecodeBatch, q.DecodeTimeS = cp(p.DecodeBatch), cp(p.DecodeTimeS)
	q.ContextTokens, q.ContextTimeS = cp(p.ContextTokens), cp(p.ContextTimeS)
	q.CompatBatchTokens = cp(p.CompatBatchTokens)
	q.CompatPromptTimeS, q.CompatTokenTimeS = cp(p.CompatPromptTimeS), cp(p.CompatTokenTimeS)
	return q
}

// MinSeconds is the floor of every iteration time a model answers with
// work to do, so that linear extrapolation below the first knot can never
// yield a zero or negative duration.
const MinSeconds = 1e-6

// floorMin is max(y, MinSeconds), the same for every y (a NaN stays NaN),
// as a comparison: the builtin max's care for signed zeros costs a dozen
// instructions per iteration timed, and MinSeconds is positive.
func floorMin(y float64) float64 {
	if y < MinSeconds {
		return MinSeconds
	}
	return y
}

// Model returns p's iteration model, the default fit. The result holds
// copies of p's knots, so it is immutable and safe for concurrent use. p
// should be valid (Validate).
func (p *Pair) Model() IterationModel { return p.physicalModel() }

// CompatModel returns the SplitwiseSim fit of p (--compat
// splitwise-sim), immutable like Model's.
func (p *Pair) CompatModel() IterationModel {
	return &compatModel{
		prompt:  p.CompatPromptCurve().clone(),
		token:   p.CompatTokenCurve().clone(),
		penalty: p.MixedPenalty,
	}
}

// ContextSlope returns the default model's cost of one context token in a
// decode iteration, in seconds per token: the least-squares slope of the
// batch-1 context curve (iteration time against the request's context),
// clamped at zero. It is the time to read one token's KV-cache, which
// every decoding request pays for each token of its context.
func (p *Pair) ContextSlope() (secondsPerToken float64) {
	return contextSlope(p.ContextCurve())
}

// contextSlope is the non-negative least-squares slope of c's knots (0
// with fewer than two knots).
func contextSlope(c Curve) float64 {
	if len(c.X) < 2 {
		return 0
	}
	_, beta := stat.LinearRegression(c.X, c.Y, nil, false)
	if !(beta > 0) || math.IsInf(beta, 0) {
		return 0
	}
	return beta
}

// physicalModel builds the default model from p's knots (see defaultModel).
func (p *Pair) physicalModel() *defaultModel {
	s := contextSlope(p.ContextCurve())
	d0 := Curve{X: append([]float64(nil), p.DecodeBatch...), Y: make([]float64, len(p.DecodeTimeS))}
	for i, b := range p.DecodeBatch {
		d0.Y[i] = p.DecodeTimeS[i] - s*b*p.BaseContextTokens
	}
	d0.Y = isotonic(d0.Y)
	ctx := p.ContextCurve()
	m := &defaultModel{
		prompt:  Curve{X: append([]float64(nil), p.PromptTokens...), Y: isotonic(p.PromptTimeS)},
		decode0: d0,
		slope:   s,
		base:    p.BaseContextTokens,
		penalty: p.MixedPenalty,
	}
	if len(ctx.X) > 0 {
		m.ctxLo, m.ctxHi = ctx.X[0], ctx.X[len(ctx.X)-1]
	}
	// Decode batches and prompts are whole numbers, and the simulator
	// times one at every run: the tables answer without the knot search.
	m.d0Tab, m.d0Ex = tabulate(m.decode0.X, maxDecodeTable, func(b int) (float64, bool) {
		return curveAt(m.decode0.X, m.decode0.Y, float64(b))
	})
	m.pTab, m.pEx = tabulate(m.prompt.X, maxPromptTable, m.promptAt)
	return m
}

// maxDecodeTable bounds the batch sizes defaultModel tabulates D0 at,
// maxPromptTable the prompt sizes it tabulates PromptTime at (8,192
// tokens: 72 KB a model).
const (
	maxDecodeTable = 4096
	maxPromptTable = 8192
)

// tabulate returns f(x), and whether it extrapolates, at every whole x
// from 0 up to the last of the knots X (at most limit).
func tabulate(X []float64, limit int, f func(x int) (float64, bool)) ([]float64, []bool) {
	n := 0
	if k := len(X); k > 0 && X[k-1] >= 0 {
		n = int(min(X[k-1], float64(limit))) + 1
	}
	ys, exs := make([]float64, n), make([]bool, n)
	for x := range n {
		ys[x], exs[x] = f(x)
	}
	return ys, exs
}

// d0At is decode0.At(b), from the table for tabulated batch sizes.
func (m *defaultModel) d0At(b int) (float64, bool) {
	if uint(b) < uint(len(m.d0Tab)) {
		return m.d0Tab[b], m.d0Ex[b]
	}
	return curveAt(m.decode0.X, m.decode0.Y, float64(b))
}

// isotonic returns the least-squares non-decreasing fit of y (equal
// weights) by pool-adjacent-violators: runs of values that decrease are
// replaced by their mean. It returns a new slice. (gonum has no isotonic
// regression; PAV is a few lines.) A running maximum would also be
// monotone, but it lets one high outlier lift every later knot; the
// least-squares fit pools it with its neighbours instead.
func isotonic(y []float64) []float64 {
	// Blocks of pooled values: their mean and size, a stack.
	means := make([]float64, 0, len(y))
	sizes := make([]int, 0, len(y))
	for _, v := range y {
		means, sizes = append(means, v), append(sizes, 1)
		for n := len(means); n > 1 && means[n-2] > means[n-1]; n = len(means) {
			w := sizes[n-2] + sizes[n-1]
			means[n-2] = (means[n-2]*float64(sizes[n-2]) + means[n-1]*float64(sizes[n-1])) / float64(w)
			sizes[n-2] = w
			means, sizes = means[:n-1], sizes[:n-1]
		}
	}
	out := make([]float64, 0, len(y))
	for i, m := range means {
		for range sizes[i] {
			out = append(out, m)
		}
	}
	return out
}

// defaultModel is the default fit, physical by construction: every time
// is non-decreasing in every argument, and a batch is never faster than
// any of its members alone. With P the prompt curve, D0 the decode curve
// without its KV-cache reads, s the context slope (ContextSlope) and
// floor(y) = max(y, MinSeconds):
//
// PromptTime(t) = floor(P(t)), P the isotonic (pool-adjacent-violators)
// fit of the prompt knots.
//
// DecodeTime(b, ctxSum) = floor(D0(b) + s × ctxSum): a decode iteration
// reads the weights once for the batch (D0, growing with the batch for the
// per-request compute and activations) and each request's KV-cache,
// s seconds per context token. D0 is the isotonic fit of decode(b) −
// s × b × base, the decode knots (profiled with every request at the base
// context) less the KV reads they included. ctxSum ≤ 0 means the context
// is unknown: every request is taken at the base context (ctxSum = b ×
// base), which reproduces the decode knots.
//
// MixedTime(p, d, ctxSum) = floor(max(penalty × P(p + d), P(p), D0(d)) +
// s × ctxSum): the prompt pass over the p + d tokens (a decode counts as a
// prompt token, penalty for mixing), never below the prompts or the
// decodes alone, plus the decodes' KV reads, which the prompt curve
// (profiled without prior context) does not include.
//
// Extrapolation is reported when a curve is evaluated outside its knots
// or the mean context per request, ctxSum / b, lies outside the profiled
// contexts (the context curve's knots).
type defaultModel struct {
	prompt, decode0 Curve
	slope, base     float64
	ctxLo, ctxHi    float64
	penalty         float64
	// d0Tab[b], d0Ex[b] are decode0.At(b) for whole batch sizes b (see
	// tabulate).
	d0Tab []float64
	d0Ex  []bool
	// pTab[t], pEx[t] are PromptTime(t) for whole prompt sizes t.
	pTab []float64
	pEx  []bool
}

func (m *defaultModel) PromptTime(tokens int) (float64, bool) {
	if uint(tokens) < uint(len(m.pTab)) {
		return m.pTab[tokens], m.pEx[tokens]
	}
	return m.promptAt(tokens)
}

// promptAt is PromptTime without the table.
func (m *defaultModel) promptAt(tokens int) (float64, bool) {
	if tokens <= 0 {
		return 0, false
	}
	y, ex := curveAt(m.prompt.X, m.prompt.Y, float64(tokens))
	return floorMin(y), ex
}

// kv returns the KV-cache read time of decodes requests whose contexts add
// up to contextTokens (the base context each when contextTokens ≤ 0) and
// whether their mean context lies outside the profiled ones.
func (m *defaultModel) kv(decodes int, contextTokens int64) (float64, bool) {
	if contextTokens <= 0 {
		return m.slope * float64(decodes) * m.base, false
	}
	c := float64(contextTokens)
	mean := c / float64(decodes)
	return m.slope * c, mean < m.ctxLo || mean > m.ctxHi
}

func (m *defaultModel) DecodeTime(batch int, contextTokens int64) (float64, bool) {
	if batch <= 0 {
		return 0, false
	}
	y, ex := m.d0At(batch)
	kv, kex := m.kv(batch, contextTokens)
	return floorMin(y + kv), ex || kex
}

func (m *defaultModel) MixedTime(promptTokens, decodes int, contextTokens int64) (float64, bool) {
	promptTokens, decodes = max(promptTokens, 0), max(decodes, 0)
	n := promptTokens + decodes
	if n <= 0 {
		return 0, false
	}
	y, ex := curveAt(m.prompt.X, m.prompt.Y, float64(n))
	y *= m.penalty
	if promptTokens > 0 {
		if alone, aex := curveAt(m.prompt.X, m.prompt.Y, float64(promptTokens)); alone > y {
			y, ex = alone, ex || aex
		}
	}
	if decodes > 0 {
		d, dex := m.d0At(decodes)
		kv, kex := m.kv(decodes, contextTokens)
		y = max(y, d) + kv
		ex = ex || dex || kex
	}
	return floorMin(y), ex
}

// compatModel is SplitwiseSim's fit: PromptTime(t) = prompt(t),
// DecodeTime(b, _) = token(b) (the token curve is keyed on batch tokens
// but evaluated at the number of decoding requests, as the reference does,
// so batches under the first knot extrapolate), MixedTime(p, d, _) =
// penalty × prompt(p + d). Times are floored at MinSeconds.
type compatModel struct {
	prompt, token Curve
	penalty       float64
}

// ReferenceCurves is implemented by the compat (SplitwiseSim) iteration
// model: its prompt and token curves, both keyed on batch tokens, and the
// mixed-iteration penalty, so that a simulator can evaluate them with the
// reference's own arithmetic (the evaluator's compat scheduler does).
type ReferenceCurves interface {
	ReferenceCurves() (prompt, token Curve, mixedPenalty float64)
}

// ReferenceCurves returns m's curves (shared, not copied) and penalty.
func (m *compatModel) ReferenceCurves() (prompt, token Curve, mixedPenalty float64) {
	return m.prompt, m.token, m.penalty
}

func (m *compatModel) PromptTime(tokens int) (float64, bool) {
	if tokens <= 0 {
		return 0, false
	}
	y, ex := curveAt(m.prompt.X, m.prompt.Y, float64(tokens))
	return floorMin(y), ex
}

func (m *compatModel) DecodeTime(batch int, _ int64) (float64, bool) {
	if batch <= 0 {
		return 0, false
	}
	y, ex := curveAt(m.token.X, m.token.Y, float64(batch))
	return floorMin(y), ex
}

func (m *compatModel) MixedTime(promptTokens, decodes int, _ int64) (float64, bool) {
	n := promptTokens + decodes
	if n <= 0 {
		return 0, false
	}
	y, ex := curveAt(m.prompt.X, m.prompt.Y, float64(n))
	return floorMin(m.penalty * y), ex
}

// Table is a set of fitted pairs, at most one per (model, hardware, tp)
// key compared case-insensitively.
type Table struct {
	// Pairs are the fitted pairs.
	Pairs []Pair
}

// sameKey reports whether two pairs have the same key.
func sameKey(p *Pair, model, hardware string, tp int) bool {
	return p.TP == tp && strings.EqualFold(strings.TrimSpace(p.ModelName), strings.TrimSpace(model)) &&
		strings.EqualFold(strings.TrimSpace(p.Hardware), strings.TrimSpace(hardware))
}

// Lookup returns the pair of model, hardware and tp (names compared
// case-insensitively). The error lists the pairs available.
func (t *Table) Lookup(model, hardware string, tp int) (*Pair, error) {
	for i := range t.Pairs {
		if sameKey(&t.Pairs[i], model, hardware, tp) {
			return &t.Pairs[i], nil
		}
	}
	names := make([]string, len(t.Pairs))
	for i := range t.Pairs {
		names[i] = t.Pairs[i].Name()
	}
	sort.Strings(names)
	if len(names) == 0 {
		return nil, fmt.Errorf("perf: no performance model for %s/%s/tp%d: the table is empty", model, hardware, tp)
	}
	return nil, fmt.Errorf("perf: no performance model for %s/%s/tp%d; available: %s",
		model, hardware, tp, strings.Join(names, ", "))
}

// HasHardware reports whether t profiles hardware (compared
// case-insensitively) for any model at any tensor parallelism.
func (t *Table) HasHardware(hardware string) bool {
	for i := range t.Pairs {
		if strings.EqualFold(strings.TrimSpace(t.Pairs[i].Hardware), strings.TrimSpace(hardware)) {
			return true
		}
	}
	return false
}

// Add adds p (a copy of it) to t, replacing the pair with the same key if
// there is one, so a user's fit overrides a built-in one.
func (t *Table) Add(p Pair) {
	q := p.clone()
	for i := range t.Pairs {
		if sameKey(&t.Pairs[i], p.ModelName, p.Hardware, p.TP) {
			t.Pairs[i] = q
			return
		}
	}
	t.Pairs = append(t.Pairs, q)
}

// Clone returns a deep copy of t.
func (t *Table) Clone() *Table {
	c := &Table{Pairs: make([]Pair, len(t.Pairs))}
	for i := range t.Pairs {
		c.Pairs[i] = t.Pairs[i].clone()
	}
	return c
}
