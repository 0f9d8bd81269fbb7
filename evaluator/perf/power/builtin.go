package power

import (
	"fmt"

	"splitplan/evaluator/perf"
	"splitplan/hw"
)

//go:generate go run ./internal/genpower

// BuiltinHeldOutError is the held-out error of the built-in coefficients'
// fit: Validate's 80:20 split (seed 1) of the A100 runs with consistent
// power figures, as `splitplan perf validate` prints it. A test recomputes
// it.
const BuiltinHeldOutError = "held-out MAPE 4.72% average power, 6.57% peak power"

// BuiltinCapError is the error of the built-in cap curve calibrated on
// Llama2-70B's capped runs when it predicts BLOOM-176B's (ValidateCap), as
// `splitplan perf validate` prints it. A test recomputes it.
const BuiltinCapError = "BLOOM-176B capped times MAPE 2.15% (4.27% prompt, 0.04% decode), curve fitted on Llama2-70B's"

// FitBuiltin fits the built-in coefficients and cap curve on a profile:
// Coefficients on every consistent run of ProfileHardware with power
// figures, then the CapCurve's exponent on every model's capped runs with
// its static fraction at the fitted idle draw. go generate writes the
// result into builtin_gen.go.
func FitBuiltin(rows []perf.ProfileRow) (Coefficients, CapCurve, error) {
	samples, _, err := a100Samples(rows)
	if err != nil {
		return Coefficients{}, CapCurve{}, err
	}
	c, err := Fit(samples)
	if err != nil {
		return Coefficients{}, CapCurve{}, err
	}
	caps, err := h100CapSamples(rows, "")
	if err != nil {
		return Coefficients{}, CapCurve{}, err
	}
	curve, err := FitCap(caps, c.IdleFraction)
	if err != nil {
		return Coefficients{}, CapCurve{}, err
	}
	return c, curve, nil
}

// ValidateBuiltin is Validate (seed 1) on the profile's runs of
// ProfileHardware, with DroppedRows counting the inconsistent ones.
func ValidateBuiltin(rows []perf.ProfileRow) (Validation, error) {
	samples, dropped, err := a100Samples(rows)
	if err != nil {
		return Validation{}, err
	}
	v, err := Validate(samples, 1)
	if err != nil {
		return Validation{}, err
	}
	v.DroppedRows = dropped
	return v, nil
}

// CapValidation is the cap curve calibrated on one model's capped runs and
// judged on another's.
type CapValidation struct {
	// FitModel and TestModel name the two models.
	FitModel, TestModel string
	// Curve is the curve fitted on FitModel's points.
	Curve CapCurve
	// ClockAtCap is the curve's clock fraction at ProfileCap.
	ClockAtCap float64
	// In-sample errors on FitModel's points and held-out errors on
	// TestModel's, in percent: prompt times, decode times and both.
	FitPromptPct, FitTokenPct, FitAllPct    float64
	TestPromptPct, TestTokenPct, TestAllPct float64
	// FitPoints and TestPoints are the profiled points of each.
	FitPoints, TestPoints int
}

// String is BuiltinCapError's wording of the held-out figure.
func (v CapValidation) String() string {
	return fmt.Sprintf("%s capped times MAPE %.2f%% (%.2f%% prompt, %.2f%% decode), curve fitted on %s's",
		displayName(v.TestModel), v.TestAllPct, v.TestPromptPct, v.TestTokenPct, displayName(v.FitModel))
}

// displayName is the paper's spelling of a profile's model.
func displayName(model string) string {
	switch model {
	case "llama2-70b":
		return "Llama2-70B"
	case "bloom-176b":
		return "BLOOM-176B"
	}
	return model
}

// ValidateCap calibrates the cap curve (static fraction static) on the
// capped points of fitModel and measures it on those of testModel.
func ValidateCap(rows []perf.ProfileRow, fitModel, testModel string, static float64) (CapValidation, error) {
	fit, err := h100CapSamples(rows, fitModel)
	if err != nil {
		return CapValidation{}, err
	}
	test, err := h100CapSamples(rows, testModel)
	if err != nil {
		return CapValidation{}, err
	}
	curve, err := FitCap(fit, static)
	if err != nil {
		return CapValidation{}, err
	}
	v := CapValidation{FitModel: fitModel, TestModel: testModel, Curve: curve, FitPoints: len(fit), TestPoints: len(test)}
	if v.ClockAtCap, err = curve.ClockFraction(ProfileCap); err != nil {
		return CapValidation{}, err
	}
	if v.FitPromptPct, v.FitTokenPct, v.FitAllPct, err = curve.CapMAPE(fit); err != nil {
		return CapValidation{}, err
	}
	if v.TestPromptPct, v.TestTokenPct, v.TestAllPct, err = curve.CapMAPE(test); err != nil {
		return CapValidation{}, err
	}
	return v, nil
}

// ValidateBuiltinCap is ValidateCap from Llama2-70B to BLOOM-176B with the
// built-in idle draw as the static fraction.
func ValidateBuiltinCap(rows []perf.ProfileRow) (CapValidation, error) {
	return ValidateCap(rows, "llama2-70b", "bloom-176b", Builtin.IdleFraction)
}

// a100Samples are the power samples of ProfileHardware on FittedGPU.
func a100Samples(rows []perf.ProfileRow) ([]Sample, int, error) {
	g, err := hw.Lookup(FittedGPU)
	if err != nil {
		return nil, 0, err
	}
	return ProfileSamples(rows, ProfileHardware, g, ProfileEfficiency(FittedGPU))
}

// CappedGPU is the GPU spec of the capped profile's hardware.
const CappedGPU = "h100_sxm"

// h100CapSamples are the capped samples of model on CappedGPU.
func h100CapSamples(rows []perf.ProfileRow, model string) ([]CapSample, error) {
	g, err := hw.Lookup(CappedGPU)
	if err != nil {
		return nil, err
	}
	return CapSamples(rows, model, g, ProfileEfficiency(CappedGPU))
}
