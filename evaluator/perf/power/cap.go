package power

import (
	"fmt"
	"math"

	"splitplan/evaluator/perf"
	"splitplan/evaluator/perf/analytic"
)

// CapCurve is how far a power cap lowers a GPU's compute clock. A busy
// GPU's draw at clock fraction f is taken as StaticFraction + (1 −
// StaticFraction) × f^Exponent of its board power (the static part does
// not scale with the clock, the dynamic part goes as frequency × voltage²),
// so under a cap c it runs at
//
//	f(c) = ((c − StaticFraction) / (1 − StaticFraction))^(1/Exponent)
//
// f(1) = 1 exactly, and f rises with c.
type CapCurve struct {
	// StaticFraction is the draw that does not scale with the clock, a
	// fraction of board power in [0, 1): the idle draw of Coefficients.
	StaticFraction float64 `toml:"static_fraction"`
	// Exponent is the power law of the dynamic draw in the clock, > 0
	// (calibrated on the capped profile).
	Exponent float64 `toml:"exponent"`
}

// Validate checks the curve's parameters.
func (c CapCurve) Validate() error {
	if !(c.StaticFraction >= 0 && c.StaticFraction < 1) {
		return fmt.Errorf("power: cap curve static_fraction = %v: expected a fraction in [0, 1)", c.StaticFraction)
	}
	if !(c.Exponent > 0 && c.Exponent <= 100) {
		return fmt.Errorf("power: cap curve exponent = %v: expected a positive number up to 100", c.Exponent)
	}
	return nil
}

// ClockFraction returns the compute clock, a fraction of the full clock in
// (0, 1], under a cap of capFraction of board power: 1 for a cap of 1 or
// more, f(c) of CapCurve otherwise; an error when the cap is not above
// StaticFraction (the GPU cannot run at all).
func (c CapCurve) ClockFraction(capFraction float64) (float64, error) {
	if capFraction >= 1 {
		return 1, nil
	}
	if err := checkCap(capFraction, c.StaticFraction); err != nil {
		return 0, err
	}
	return math.Pow((capFraction-c.StaticFraction)/(1-c.StaticFraction), 1/c.Exponent), nil
}

// LatencyMultiplier returns how many times longer b's iteration takes on
// an under a cap of toCap than under fromCap (each a fraction of board
// power; 1 is uncapped): an.BatchTimeAtClock at the two clocks, compute
// terms stretched by the clock and memory, link and host terms not. It is
// exactly 1 when the caps are equal or b is empty, at least 1 when toCap ≤
// fromCap, and non-increasing in toCap.
func (c CapCurve) LatencyMultiplier(an *analytic.Model, b analytic.Batch, fromCap, toCap float64) (float64, error) {
	if fromCap == toCap {
		return 1, nil
	}
	f0, err := c.ClockFraction(fromCap)
	if err != nil {
		return 0, err
	}
	f1, err := c.ClockFraction(toCap)
	if err != nil {
		return 0, err
	}
	t0 := an.BatchTimeAtClock(b, f0)
	if t0 <= 0 {
		return 1, nil
	}
	return an.BatchTimeAtClock(b, f1) / t0, nil
}

// Capped is an iteration model under a power cap: every answer of the
// model it wraps times the CapCurve's LatencyMultiplier of the same
// iteration from the cap the wrapped model was profiled at to the new one.
type Capped struct {
	// Model is the wrapped model, profiled or fitted at FromCap.
	Model perf.IterationModel
	// Analytic is the analytic model of the same model and GPU, whose
	// compute and memory terms set the multiplier.
	Analytic *analytic.Model
	// Curve is the clock's response to the cap.
	Curve CapCurve
	// FromCap is the cap Model's times hold for (1: uncapped) and ToCap
	// the cap to answer for, fractions of board power.
	FromCap, ToCap float64
}

// NewCapped returns m under a cap of toCap when its times hold at fromCap:
// m itself when the caps are equal (so a cap of 1 on an uncapped model
// changes nothing, bit for bit), else a Capped. The caps must lie in
// (curve.StaticFraction, 1].
func NewCapped(m perf.IterationModel, an *analytic.Model, curve CapCurve, fromCap, toCap float64) (perf.IterationModel, error) {
	if m == nil || an == nil {
		return nil, fmt.Errorf("power: capped: no iteration or analytic model")
	}
	if err := curve.Validate(); err != nil {
		return nil, err
	}
	for _, c := range []float64{fromCap, toCap} {
		if err := checkCap(c, curve.StaticFraction); err != nil {
			return nil, err
		}
	}
	if fromCap == toCap {
		return m, nil
	}
	return Capped{Model: m, Analytic: an, Curve: curve, FromCap: fromCap, ToCap: toCap}, nil
}

// scale multiplies seconds by the multiplier of batch b (caps validated by
// NewCapped; an invalid cap leaves the time unscaled).
func (c Capped) scale(seconds float64, b analytic.Batch) float64 {
	k, err := c.Curve.LatencyMultiplier(c.Analytic, b, c.FromCap, c.ToCap)
	if err != nil {
		return seconds
	}
	return seconds * k
}

// PromptTime implements perf.IterationModel.
func (c Capped) PromptTime(tokens int) (float64, bool) {
	s, ext := c.Model.PromptTime(tokens)
	return c.scale(s, batchOf(tokens, 0, 0)), ext
}

// DecodeTime implements perf.IterationModel.
func (c Capped) DecodeTime(batch int, contextTokens int64) (float64, bool) {
	s, ext := c.Model.DecodeTime(batch, contextTokens)
	return c.scale(s, batchOf(0, batch, contextTokens)), ext
}

// MixedTime implements perf.IterationModel.
func (c Capped) MixedTime(promptTokens, decodes int, contextTokens int64) (float64, bool) {
	s, ext := c.Model.MixedTime(promptTokens, decodes, contextTokens)
	return c.scale(s, batchOf(promptTokens, decodes, contextTokens)), ext
}

var _ perf.IterationModel = Capped{}

// NodeGPUShare is the share of a machine's provisioned power its GPUs' cap
// scales, from the paper's DGX-H100cap (SPEC §2: GPUs capped at 50%, the
// machine provisioned at 1.23/1.75 = 70.3% of a DGX-H100): 1 − 0.5 × share
// = 1.23/1.75 gives share = 2(1 − 1.23/1.75) ≈ 0.594. The rest (CPUs,
// NICs, fans, conversion losses) keeps its provision under any cap.
const NodeGPUShare = 2 * (1 - 1.23/1.75)

// ProvisionedKW is the provisioned power in kilowatts of a machine type
// provisioned at powerKW with its GPUs capped at ownCap (0 read as 1), when
// its GPUs are capped at capFraction of board power instead: powerKW
// rescaled by 1 − NodeGPUShare × (1 − cap), so the paper's DGX-H100 at a
// cap of 0.5 gives its DGX-H100cap's 1.23 × 6.5 kW. A cap of the
// machine's own gives powerKW exactly; both caps must lie in (0, 1].
func ProvisionedKW(powerKW, ownCap, capFraction float64) (float64, error) {
	if !(capFraction > 0 && capFraction <= 1) {
		return 0, fmt.Errorf("power: power cap %v: expected a fraction of board power in (0, 1]", capFraction)
	}
	own := ownCap
	if own == 0 {
		own = 1
	}
	if !(own > 0 && own <= 1) {
		return 0, fmt.Errorf("power: gpu_power_cap %v: expected a fraction in (0, 1]", own)
	}
	if capFraction == own {
		return powerKW, nil
	}
	scale := func(c float64) float64 { return 1 - NodeGPUShare*(1-c) }
	return powerKW / scale(own) * scale(capFraction), nil
}
