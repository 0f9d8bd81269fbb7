package perf

import (
	"fmt"
	"math"
	"sort"
	"strings"
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
	// iteration time against the batch's total prompt tokens.
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
	// the request's mean context, which corrects the decode curve for
	// contexts other than the base one.
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

// Model returns p's iteration model: the default fit, or with compat the
// SplitwiseSim fit. The result holds copies of p's knots, so it is
// immutable and safe for concurrent use. p should be valid (Validate).
func (p *Pair) Model(compat bool) IterationModel {
	if compat {
		return &compatModel{
			prompt:  p.CompatPromptCurve().clone(),
			token:   p.CompatTokenCurve().clone(),
			penalty: p.MixedPenalty,
		}
	}
	m := &defaultModel{
		prompt:  p.PromptCurve().clone(),
		decode:  p.DecodeCurve().clone(),
		context: p.ContextCurve().clone(),
		penalty: p.MixedPenalty,
	}
	m.baseContextTime, _ = m.context.At(p.BaseContextTokens)
	return m
}

// defaultModel is the default fit.
//
// PromptTime(t) = prompt(t).
//
// DecodeTime(b, ctxSum) = decode(b) + b × (ctx1(ctxSum/b) − ctx1(base)):
// the decode curve was profiled with every request at the base context;
// each request whose context differs costs what that difference costs a
// batch-1 decode (ctx1 is the batch-1 context curve, base the base
// context), i.e. the attention cost grows with each request's context
// while the weight-reading cost is shared by the batch. The corrected time
// is floored at half of decode(b), so a context shorter than the base one
// (where ctx1 extrapolates below its first knot) cannot make the iteration
// implausibly cheap, and at MinSeconds. ctxSum ≤ 0 means the context is
// unknown and no correction is applied.
//
// MixedTime(p, d, _) = penalty × prompt(p + d): a decode counts as one
// prompt token in a mixed iteration.
type defaultModel struct {
	prompt, decode, context Curve
	baseContextTime         float64
	penalty                 float64
}

func (m *defaultModel) PromptTime(tokens int) (float64, bool) {
	if tokens <= 0 {
		return 0, false
	}
	y, ex := m.prompt.At(float64(tokens))
	return max(y, MinSeconds), ex
}

func (m *defaultModel) DecodeTime(batch int, contextTokens int64) (float64, bool) {
	if batch <= 0 {
		return 0, false
	}
	b := float64(batch)
	y, ex := m.decode.At(b)
	if contextTokens > 0 {
		c, cex := m.context.At(float64(contextTokens) / b)
		ex = ex || cex
		y = max(y+b*(c-m.baseContextTime), 0.5*y)
	}
	return max(y, MinSeconds), ex
}

func (m *defaultModel) MixedTime(promptTokens, decodes int, _ int64) (float64, bool) {
	n := promptTokens + decodes
	if n <= 0 {
		return 0, false
	}
	y, ex := m.prompt.At(float64(n))
	return max(m.penalty*y, MinSeconds), ex
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

func (m *compatModel) PromptTime(tokens int) (float64, bool) {
	if tokens <= 0 {
		return 0, false
	}
	y, ex := m.prompt.At(float64(tokens))
	return max(y, MinSeconds), ex
}

func (m *compatModel) DecodeTime(batch int, _ int64) (float64, bool) {
	if batch <= 0 {
		return 0, false
	}
	y, ex := m.token.At(float64(batch))
	return max(y, MinSeconds), ex
}

func (m *compatModel) MixedTime(promptTokens, decodes int, _ int64) (float64, bool) {
	n := promptTokens + decodes
	if n <= 0 {
		return 0, false
	}
	y, ex := m.prompt.At(float64(n))
	return max(m.penalty*y, MinSeconds), ex
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

// Merge adds every pair of other to t (see Add): other's pairs win.
func (t *Table) Merge(other *Table) {
	for i := range other.Pairs {
		t.Add(other.Pairs[i])
	}
}

// Clone returns a deep copy of t.
func (t *Table) Clone() *Table {
	c := &Table{Pairs: make([]Pair, len(t.Pairs))}
	for i := range t.Pairs {
		c.Pairs[i] = t.Pairs[i].clone()
	}
	return c
}
