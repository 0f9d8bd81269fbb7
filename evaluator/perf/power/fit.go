package power

import (
	"fmt"
	"math"
	"strings"

	"gonum.org/v1/gonum/optimize"

	"splitplan/arch"
	"splitplan/evaluator/perf"
	"splitplan/evaluator/perf/analytic"
	"splitplan/evaluator/perf/measured"
	"splitplan/hw"
)

// ProfileHardware is the hardware of the Splitwise profile's runs with
// power figures, and ProfileGPU its spec: the same formula refitted there
// (ValidateProfile), and the built-in coefficients carried there
// (CarriedToProfile), check the power model on a second GPU.
const (
	ProfileHardware = "a100-80gb"
	ProfileGPU      = "a100_sxm"
)

// Sample is one profile run with power figures, and the compute and memory
// split of its prompt iteration and of its mean decode iteration.
type Sample struct {
	// Row is the profile row: prompt_time and token_time (seconds) the
	// durations, average_power and peak_power the targets, as fractions
	// of board power.
	Row perf.ProfileRow
	// Prompt is the work of the batch's prompt iteration (BatchSize prompts
	// of PromptSize tokens), Decode that of a decode iteration of
	// BatchSize requests at the run's mean context (PromptSize +
	// TokenSize/2 each, as perf.Validate takes it).
	Prompt, Decode analytic.Work
}

// HasPower reports whether r carries power figures: the profile writes 0
// in both columns of the runs it did not measure (every H100 row).
func HasPower(r perf.ProfileRow) bool { return r.AveragePower > 0 && r.PeakPower > 0 }

// PowerConsistent reports whether r's average power can be the average of
// its own run. The prompt iteration is where the run peaks (it is the
// compute-bound part) and draws near that peak throughout, so the run's
// average is at least the prompt's share of the run's time times the peak
// power. In the shipped profile the bound drops exactly the three
// Llama2-70B runs of 8,192-token prompts (average 0.17–0.18 of board
// power, peaks 0.95–1.01, prompts a fifth to a third of the run: 0.20–0.30
// expected at least), against 0.39–0.74 for every other prompt size at the
// same tp.
func PowerConsistent(r perf.ProfileRow) bool {
	if !HasPower(r) || !(r.E2ETime > 0) {
		return false
	}
	share := min(1, r.PromptTime/r.E2ETime)
	return r.AveragePower >= share*r.PeakPower
}

// ProfileSamples returns the samples of the profile rows of hardware that
// carry consistent power figures (HasPower, PowerConsistent and
// perf.Consistent), sorted as the rows came, the analytic model of each
// row's model and tp on gpu with the efficiencies eff. dropped counts the
// rows with power figures left out.
func ProfileSamples(rows []perf.ProfileRow, hardware string, gpu hw.GPU, eff analytic.Efficiency) (samples []Sample, dropped int, err error) {
	models := map[string]*analytic.Model{}
	for _, r := range rows {
		if !strings.EqualFold(r.Hardware, hardware) || !HasPower(r) {
			continue
		}
		if !PowerConsistent(r) || !perf.Consistent(r) {
			dropped++
			continue
		}
		key := fmt.Sprintf("%s/%d", arch.ShortName(r.Model), r.TP)
		an := models[key]
		if an == nil {
			a, err := arch.Lookup(r.Model)
			if err != nil {
				return nil, 0, fmt.Errorf("power: %w", err)
			}
			if an, err = analytic.New(analytic.Config{Arch: a, GPU: gpu, TP: r.TP, Weights: arch.BF16, KV: arch.BF16, Eff: eff}); err != nil {
				return nil, 0, fmt.Errorf("power: %w", err)
			}
			models[key] = an
		}
		prompt := analytic.Batch{PromptTokens: r.PromptSize * r.BatchSize, Prompts: r.BatchSize,
			PromptAttnPairs: float64(r.BatchSize) * analytic.AttnPairs(r.PromptSize, 0)}
		decode := analytic.Batch{Decodes: r.BatchSize,
			DecodeContextTokens: int64(r.BatchSize) * (int64(r.PromptSize) + int64(r.TokenSize)/2)}
		samples = append(samples, Sample{Row: r, Prompt: an.BatchWork(prompt), Decode: an.BatchWork(decode)})
	}
	if len(samples) == 0 {
		return nil, dropped, fmt.Errorf("power: no profile rows of hardware %s with power figures", hardware)
	}
	return samples, dropped, nil
}

// Predict returns c's average and peak power of s's run, as fractions of
// board power: the prompt iteration at its draw for prompt_time and the
// decode iterations at theirs for the rest of the run (e2e_time −
// prompt_time), averaged over e2e_time; the peak is the larger draw.
func (c Coefficients) Predict(s Sample) (average, peak float64) {
	r := s.Row
	pp := c.Fraction(s.Prompt, r.PromptTime, 1)
	pd := c.Fraction(s.Decode, r.TokenTime, 1)
	tp := min(r.PromptTime, r.E2ETime)
	return (pp*tp + pd*(r.E2ETime-tp)) / r.E2ETime, max(pp, pd)
}

// Fit fits Coefficients on samples by Nelder–Mead (gonum optimize),
// minimising the sum of squared relative errors of the average power and,
// at half weight, of the peak power (a single sample of the run, noisier).
func Fit(samples []Sample) (Coefficients, error) {
	if len(samples) < 3 {
		return Coefficients{}, fmt.Errorf("power: %d samples: expected at least 3 to fit 3 coefficients", len(samples))
	}
	// x holds the coefficients' square roots, keeping them non-negative.
	toCoef := func(x []float64) Coefficients {
		return Coefficients{IdleFraction: x[0] * x[0], MemoryFraction: x[1] * x[1], ComputeFraction: x[2] * x[2]}
	}
	loss := func(x []float64) float64 {
		c := toCoef(x)
		var l float64
		for _, s := range samples {
			a, p := c.Predict(s)
			ea := (a - s.Row.AveragePower) / s.Row.AveragePower
			ep := (p - s.Row.PeakPower) / s.Row.PeakPower
			l += ea*ea + 0.5*ep*ep
		}
		if c.IdleFraction >= 0.9 {
			l += 1e6 * (c.IdleFraction - 0.9)
		}
		return l
	}
	return minimizeCoefficients("fit", loss, []float64{math.Sqrt(0.2), math.Sqrt(0.5), math.Sqrt(0.5)}, toCoef)
}

// minimizeCoefficients minimizes loss by Nelder–Mead from x0 and returns
// the valid coefficients toCoef makes of the minimum; what names the fit
// in errors. Every fit of the package runs it, with the same settings.
func minimizeCoefficients(what string, loss func([]float64) float64, x0 []float64, toCoef func([]float64) Coefficients) (Coefficients, error) {
	res, err := optimize.Minimize(optimize.Problem{Func: loss}, x0,
		&optimize.Settings{Converger: &optimize.FunctionConverge{Absolute: 1e-12, Iterations: 200}, MajorIterations: 20000},
		&optimize.NelderMead{})
	if err != nil && res == nil {
		return Coefficients{}, fmt.Errorf("power: %s: %w", what, err)
	}
	c := toCoef(res.X)
	if err := c.Validate(); err != nil {
		return Coefficients{}, fmt.Errorf("power: %s: %w", what, err)
	}
	return c, nil
}

// MAPE returns the mean absolute percentage errors of c's average and peak
// power on samples.
func (c Coefficients) MAPE(samples []Sample) (averagePct, peakPct float64) {
	if len(samples) == 0 {
		return 0, 0
	}
	for _, s := range samples {
		a, p := c.Predict(s)
		averagePct += math.Abs(a-s.Row.AveragePower) / s.Row.AveragePower * 100
		peakPct += math.Abs(p-s.Row.PeakPower) / s.Row.PeakPower * 100
	}
	n := float64(len(samples))
	return averagePct / n, peakPct / n
}

// Validation is the held-out error of a fit.
type Validation struct {
	// Coefficients are those fitted on the training samples.
	Coefficients Coefficients
	// AverageMAPEPct and PeakMAPEPct are the mean absolute percentage
	// errors of the average and peak power on the test samples;
	// TrainAverageMAPEPct the in-sample error of the average power.
	AverageMAPEPct, PeakMAPEPct, TrainAverageMAPEPct float64
	// TrainRows and TestRows are the samples fitted and predicted;
	// DroppedRows the rows with power figures that are not consistent.
	TrainRows, TestRows, DroppedRows int
}

// Validate splits the samples as perf.Validate splits a profile: per pair
// (model, hardware, tp) shuffled by a PCG seeded from seed and an FNV-1a
// hash of the pair's key, 20% held out (at least one of two or more);
// it fits one set of coefficients on every pair's training samples and
// returns the error on the test samples. Runs of the same profiled point
// repeat its power figures, so a test run often has a twin in training:
// the figure measures the fit's shape and the runs' spread, not an
// unprofiled point (docs/model.md says so; no leave-one-point-out figure
// is computed).
func Validate(samples []Sample, seed uint64) (Validation, error) {
	var train, test []Sample
	for _, g := range perf.HeldOutGroups(samples, seed, func(s Sample) (string, string, int) { return s.Row.Model, s.Row.Hardware, s.Row.TP }) {
		test = append(test, g.Test...)
		train = append(train, g.Train...)
	}
	c, err := Fit(train)
	if err != nil {
		return Validation{}, err
	}
	v := Validation{Coefficients: c, TrainRows: len(train), TestRows: len(test)}
	v.AverageMAPEPct, v.PeakMAPEPct = c.MAPE(test)
	v.TrainAverageMAPEPct, _ = c.MAPE(train)
	return v, nil
}

// String is BuiltinHeldOutError's wording of the figures.
func (v Validation) String() string {
	return fmt.Sprintf("held-out MAPE %.2f%% average power, %.2f%% peak power", v.AverageMAPEPct, v.PeakMAPEPct)
}

// ProfileEfficiency is the analytic model's efficiencies on gpu that the
// fits on the Splitwise profile's serving runs use (ProfileSamples,
// CapSamples): the built-in calibration's for the vllm engine. The H100
// kernel samples, which ran no engine, use the kernel layer alone
// (ReadH100Kernels).
func ProfileEfficiency(gpu string) analytic.Efficiency {
	eff, _ := measured.Default().Lookup(gpu, measured.VLLM)
	return eff
}
