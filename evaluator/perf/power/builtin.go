package power

import (
	"fmt"

	"splitplan/evaluator/perf"
	"splitplan/hw"
)

//go:generate go run ./internal/genpower

// BuiltinHeldOutError is the held-out error of the built-in coefficients'
// fit: ValidateBuiltin's fit on the H100 kernel iterations with
// KernelHeldOut's rows held out, as a provenance prints it. A test
// recomputes it.
const BuiltinHeldOutError = "held-out median 4.4%, P90 23.3% board power on 41 H100 kernel iterations"

// BuiltinCapError is the error of the built-in cap curve calibrated on
// Llama2-70B's capped runs when it predicts BLOOM-176B's (ValidateCap), as
// `splitplan perf validate` prints it. A test recomputes it.
const BuiltinCapError = "BLOOM-176B capped times MAPE 2.15% (4.25% prompt, 0.04% decode), curve fitted on Llama2-70B's"

// FitBuiltin fits the built-in coefficients and cap curve: Coefficients
// on every H100 kernel iteration (FitKernels, the idle fraction the
// measured idle draw idleFraction), then the CapCurve's exponent on every
// model's capped profile runs with its static fraction at that idle draw.
// go generate writes the result into builtin_gen.go.
func FitBuiltin(rows []perf.ProfileRow, kernels []KernelSample, idleFraction float64) (Coefficients, CapCurve, error) {
	c, err := FitKernels(kernels, idleFraction)
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

// ValidateBuiltin is ValidateKernels on the H100 kernel iterations: the
// fit on the rows KernelHeldOut keeps, judged on the rest.
func ValidateBuiltin(kernels []KernelSample, idleFraction float64) (KernelValidation, error) {
	g, err := hw.Lookup(KernelGPU)
	if err != nil {
		return KernelValidation{}, err
	}
	return ValidateKernels(kernels, idleFraction, g.TDPW)
}

// ValidateProfile is Validate (seed 1) of the coefficients' shape refitted
// on the Splitwise profile's runs of ProfileHardware, with DroppedRows
// counting the inconsistent ones: the same formula fitted on another GPU.
func ValidateProfile(rows []perf.ProfileRow) (Validation, error) {
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

// CarriedToProfile is the error of coefficients c, fitted on the H100 and
// carried by board power (the spec-only rule), on the Splitwise profile's
// A100 runs with consistent power figures: the mean absolute percentage
// errors and the mean signed errors (positive: c draws too much) of their
// average and peak power.
func CarriedToProfile(rows []perf.ProfileRow, c Coefficients) (avgPct, peakPct, avgBiasPct, peakBiasPct float64, n int, err error) {
	samples, _, err := a100Samples(rows)
	if err != nil {
		return 0, 0, 0, 0, 0, err
	}
	avgPct, peakPct = c.MAPE(samples)
	for _, s := range samples {
		a, p := c.Predict(s)
		avgBiasPct += (a - s.Row.AveragePower) / s.Row.AveragePower * 100
		peakBiasPct += (p - s.Row.PeakPower) / s.Row.PeakPower * 100
	}
	n = len(samples)
	return avgPct, peakPct, avgBiasPct / float64(n), peakBiasPct / float64(n), n, nil
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

// a100Samples are the power samples of ProfileHardware on ProfileGPU.
func a100Samples(rows []perf.ProfileRow) ([]Sample, int, error) {
	g, err := hw.Lookup(ProfileGPU)
	if err != nil {
		return nil, 0, err
	}
	return ProfileSamples(rows, ProfileHardware, g, ProfileEfficiency(ProfileGPU))
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
