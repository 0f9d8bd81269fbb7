package measured

import (
	"fmt"
	"math"

	"splitplan/arch"
	"splitplan/evaluator/perf/analytic"
	"splitplan/hw"
)

// workerShape is one engine instance's layout.
type workerShape struct {
	TP, DP, EP int // attention TP, attention DP, expert parallel degree
}

// GPUs returns the GPUs of one instance: TP × DP.
func (w workerShape) GPUs() int { return w.TP * w.DP }

// iterModel prepares analytic.Model instances for one instance layout: the
// architecture as one attention-DP rank sees it (see dpArch), the GPU, the
// rank's TP and the precisions. The efficiencies vary per fit evaluation,
// so the analytic model is built per call of model.
type iterModel struct {
	a      arch.Arch // the rank's view (dpArch)
	g      hw.GPU
	w      workerShape
	weight arch.Precision
	kv     arch.Precision
}

// dpArch returns the architecture one attention-DP rank of dp ranks
// computes, for package analytic, which has no attention-DP knob: each
// rank runs attention and the dense layers on its own tokens, but its MoE
// layers hold 1/dp of every expert (EP over TP × dp GPUs) and process the
// tokens of all dp ranks. With T tokens per rank, the experts touched are
// E(1 − (1 − k/E)^(dp·T)); a rank's view with k' = E(1 − (1 − k/E)^dp)
// experts per token (rounded, at least k) and experts 1/dp as wide touches
// the same experts from its own T tokens and reads 1/dp of their bytes.
// Shared experts keep their full width (SharedExperts × dp narrow ones).
// The routed-expert FLOPs per token become k'/dp expert-widths instead of
// k (k' ≤ dp·k: up to 10% fewer for DeepSeek at dp 8), an approximation.
func dpArch(a arch.Arch, dp int) (arch.Arch, error) {
	if dp <= 1 || !a.IsMoE() {
		return a, nil
	}
	if a.MoEIntermediate%dp != 0 {
		return arch.Arch{}, fmt.Errorf("attention dp %d does not divide the expert width %d of %s", dp, a.MoEIntermediate, a.Name)
	}
	e, k := float64(a.Experts), float64(a.ExpertsPerToken)
	kp := int(math.Round(e * -math.Expm1(float64(dp)*math.Log1p(-k/e))))
	a.ExpertsPerToken = min(a.Experts, max(a.ExpertsPerToken, kp))
	a.MoEIntermediate /= dp
	a.SharedExperts *= dp
	return a, nil
}

func newIterModel(a arch.Arch, g hw.GPU, w workerShape, weight, kv arch.Precision) (*iterModel, error) {
	if w.TP < 1 || w.DP < 1 || w.EP < 1 {
		return nil, fmt.Errorf("worker layout %+v: expected positive degrees", w)
	}
	ra, err := dpArch(a, w.DP)
	if err != nil {
		return nil, err
	}
	m := &iterModel{a: ra, g: g, w: w, weight: weight, kv: kv}
	// Check once that the layout is valid (weights fit, etc.).
	if _, err := m.model(analytic.DefaultEfficiency); err != nil {
		return nil, err
	}
	return m, nil
}

// model returns the analytic model of one rank with efficiencies eff.
func (m *iterModel) model(eff analytic.Efficiency) (*analytic.Model, error) {
	ep := 1
	if m.w.EP > 1 && m.w.TP%m.w.EP == 0 {
		ep = m.w.EP
	}
	return analytic.New(analytic.Config{Arch: m.a, GPU: m.g, TP: m.w.TP, EP: ep, Weights: m.weight, KV: m.kv, Eff: eff})
}

// batchOf converts a schedule step (prompt length isl) into the analytic
// model's batch.
func batchOf(s *step, isl int) analytic.Batch {
	b := analytic.Batch{PromptTokens: s.PromptTokens(isl), Decodes: s.Decodes, DecodeContextTokens: s.ContextTokens}
	if s.HeadTokens > 0 {
		b.Prompts++
		b.PromptAttnPairs += analytic.AttnPairs(s.HeadTokens, s.HeadPrior)
	}
	if s.Whole > 0 {
		b.Prompts += s.Whole
		b.PromptAttnPairs += float64(s.Whole) * analytic.AttnPairs(isl, 0)
	}
	if s.TailTokens > 0 {
		b.Prompts++
		b.PromptAttnPairs += analytic.AttnPairs(s.TailTokens, 0)
	}
	return b
}
