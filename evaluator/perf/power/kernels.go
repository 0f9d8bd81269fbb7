package power

import (
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"sort"

	"gonum.org/v1/gonum/stat"

	"splitplan/arch"
	"splitplan/evaluator/perf/analytic"
	"splitplan/evaluator/perf/kernel"
	"splitplan/evaluator/perf/measured"
	"splitplan/hw"
)

// KernelGPU is the GPU spec (package hw) of the kernel measurements
// (../shared/data/gpu-kernels/h100): one H100 SXM at its 700 W limit.
const KernelGPU = "h100_sxm"

// KernelRow is one row of a GPU kernel table (gpu-kernels/*/kernels.csv
// or mixed.csv) with board power: an idle reading, or one prefill,
// decode or mixed iteration of a model's per-GPU share at tensor
// parallelism TP, with no all-reduce and no serving engine.
type KernelRow struct {
	// Line is the row's line in its file (1 is the header).
	Line int
	// Model is the model's catalog name ("" for an idle row), TP its
	// tensor parallelism.
	Model string
	TP    int
	// Kind is prefill, decode, mixed or idle.
	Kind string
	// Prompts of PromptTokens tokens each (prefill, mixed), and Batch
	// decodes of ContextTokens tokens of context each (decode, mixed).
	Prompts, PromptTokens, Batch, ContextTokens int
	// TimeS is the iteration's time in seconds, AvgPowerW the board's
	// average power over the timed window, AvgSMMHz its SM clock.
	TimeS, AvgPowerW, AvgSMMHz float64
}

// ReadKernelFile reads the iteration and idle rows of a kernel table with
// board power; GEMM and copy rows are skipped. Errors name the file and
// line.
func ReadKernelFile(path string) ([]KernelRow, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return readKernels(f, path)
}

// ReadKernels reads the iteration and idle rows of a kernel table (see
// ReadKernelFile) from r with the one reader of the format,
// kernel.ReadCSV; an iteration row must carry its board power.
func ReadKernels(r io.Reader) ([]KernelRow, error) { return readKernels(r, "kernel table") }

// readKernels is ReadKernels with name in its errors.
func readKernels(r io.Reader, name string) ([]KernelRow, error) {
	rows, err := kernel.ReadCSV(r, name)
	if err != nil {
		return nil, err
	}
	var out []KernelRow
	for _, kr := range rows {
		if !kr.IsIteration() && kr.Kind != kernel.Idle {
			continue
		}
		if !(kr.PowerW > 0) {
			return nil, fmt.Errorf("%s:%d: a %s row needs a positive avg_power_w", name, kr.Line, kr.Kind)
		}
		row := KernelRow{Line: kr.Line, Kind: string(kr.Kind), TimeS: kr.TimeS, AvgPowerW: kr.PowerW, AvgSMMHz: kr.SMMHz}
		if kr.IsIteration() {
			row.Model, row.TP = kr.Model, kr.TP
			row.Prompts, row.PromptTokens, row.Batch, row.ContextTokens = kr.Prompts, kr.TokensPerPrompt, kr.Batch, kr.ContextPerRequest
		}
		out = append(out, row)
	}
	return out, nil
}

// KernelSample is a measured iteration with the analytic model's work of
// it on the kernel GPU.
type KernelSample struct {
	// Row is the measured row; File names its table ("kernels.csv").
	Row  KernelRow
	File string
	// Work is the analytic model's compute and memory split of the
	// iteration (the model's per-GPU share at the row's TP).
	Work analytic.Work
	// Fraction is the measured draw as a fraction of board power.
	Fraction float64
}

// Phase is the sample's phase: prefill, decode or mixed.
func (s KernelSample) Phase() string { return s.Row.Kind }

// KernelSamples builds the samples of the iteration rows of a kernel table
// (file names it) on GPU spec g with the analytic efficiencies eff, and
// returns the mean idle draw of its idle rows as a fraction of g's board
// power (idleOK false when it has none).
func KernelSamples(rows []KernelRow, file string, g hw.GPU, eff analytic.Efficiency) (samples []KernelSample, idleFraction float64, idleOK bool, err error) {
	models := map[string]*analytic.Model{}
	var idle []float64
	for _, r := range rows {
		if r.Kind == "idle" {
			idle = append(idle, r.AvgPowerW/g.TDPW)
			continue
		}
		key := fmt.Sprintf("%s/%d", r.Model, r.TP)
		an := models[key]
		if an == nil {
			a, err := arch.Lookup(r.Model)
			if err != nil {
				return nil, 0, false, fmt.Errorf("%s line %d: %w", file, r.Line, err)
			}
			if an, err = analytic.New(analytic.Config{Arch: a, GPU: g, TP: r.TP, Weights: arch.BF16, KV: arch.BF16, Eff: eff}); err != nil {
				return nil, 0, false, fmt.Errorf("%s line %d: %w", file, r.Line, err)
			}
			models[key] = an
		}
		var b analytic.Batch
		if r.Kind != "decode" {
			b.Prompts, b.PromptTokens = r.Prompts, r.Prompts*r.PromptTokens
			b.PromptAttnPairs = float64(r.Prompts) * analytic.AttnPairs(r.PromptTokens, 0)
		}
		if r.Kind != "prefill" {
			b.Decodes, b.DecodeContextTokens = r.Batch, int64(r.Batch)*int64(r.ContextTokens)
		}
		samples = append(samples, KernelSample{Row: r, File: file, Work: an.BatchWork(b), Fraction: r.AvgPowerW / g.TDPW})
	}
	if len(idle) > 0 {
		idleFraction, idleOK = stat.Mean(idle, nil), true
	}
	return samples, idleFraction, idleOK, nil
}

// Predict is c's draw of the sample's iteration (uncapped: the kernels
// ran at the board's own limit), as a fraction of board power.
func (c Coefficients) PredictKernel(s KernelSample) float64 {
	return c.Fraction(s.Work, s.Row.TimeS, 1)
}

// FitKernels fits the memory and compute fractions on the samples, the
// idle fraction fixed at the measured idle draw: Nelder–Mead (gonum
// optimize) on the sum of squared relative errors of the draw.
func FitKernels(samples []KernelSample, idleFraction float64) (Coefficients, error) {
	if len(samples) < 2 {
		return Coefficients{}, fmt.Errorf("power: %d kernel samples: expected at least 2 to fit 2 coefficients", len(samples))
	}
	if !(idleFraction > 0 && idleFraction < 1) {
		return Coefficients{}, fmt.Errorf("power: idle draw %v of board power: expected a fraction in (0, 1)", idleFraction)
	}
	toCoef := func(x []float64) Coefficients {
		return Coefficients{IdleFraction: idleFraction, MemoryFraction: x[0] * x[0], ComputeFraction: x[1] * x[1]}
	}
	loss := func(x []float64) float64 {
		c := toCoef(x)
		var l float64
		for _, s := range samples {
			e := (c.PredictKernel(s) - s.Fraction) / s.Fraction
			l += e * e
		}
		return l
	}
	return minimizeCoefficients("kernel fit", loss, []float64{math.Sqrt(0.5), math.Sqrt(0.8)}, toCoef)
}

// PhaseError is the absolute percentage error of predicted draws over the
// samples of one phase.
type PhaseError struct {
	// Phase is prefill, decode, mixed or all.
	Phase string
	// N is the samples; MedianPct, P90Pct and MaxPct the median, 90th
	// percentile and largest absolute error in percent; BiasPct the mean
	// signed error (positive: the model draws too much).
	N                                  int
	MedianPct, P90Pct, MaxPct, BiasPct float64
}

// KernelErrors returns c's errors on the samples per phase (in the order
// prefill, decode, mixed, those present) and over all of them.
func (c Coefficients) KernelErrors(samples []KernelSample) []PhaseError {
	by := map[string][]float64{}
	bias := map[string]float64{}
	for _, s := range samples {
		e := (c.PredictKernel(s) - s.Fraction) / s.Fraction * 100
		for _, k := range []string{s.Phase(), "all"} {
			by[k] = append(by[k], math.Abs(e))
			bias[k] += e
		}
	}
	var out []PhaseError
	for _, k := range []string{"prefill", "decode", "mixed", "all"} {
		v := by[k]
		if len(v) == 0 {
			continue
		}
		sort.Float64s(v)
		out = append(out, PhaseError{Phase: k, N: len(v), MedianPct: stat.Quantile(0.5, stat.Empirical, v, nil),
			P90Pct: stat.Quantile(0.9, stat.Empirical, v, nil), MaxPct: v[len(v)-1], BiasPct: bias[k] / float64(len(v))})
	}
	return out
}

// KernelValidation is the power model fitted on part of the H100 kernel
// measurements and judged on the rest, and on another GPU.
type KernelValidation struct {
	// Coefficients are fitted on the training samples, the idle fraction
	// the measured idle draw.
	Coefficients Coefficients
	// IdleW is the measured idle board power.
	IdleW float64
	// Train and Test are the errors per phase in sample and held out.
	Train, Test []PhaseError
	// TrainRows and TestRows count the samples; HeldOut says which.
	TrainRows, TestRows int
	HeldOut             string
}

// KernelHeldOut says which kernel samples ValidateKernels holds out: every
// Llama-3.1-70B TP-4 row (a per-GPU share the fit never sees) and every
// mixed iteration (mixed.csv's prefill chunk plus decodes). Its "mixed-pass
// reference" prefill and decode rows re-measure training points; they are
// held out too, as repeats.
func KernelHeldOut(s KernelSample) bool {
	return s.Row.TP == 4 || s.File == "mixed.csv"
}

// KernelHeldOutDescription is KernelHeldOut in words.
const KernelHeldOutDescription = "Llama-3.1-70B TP 4 and every mixed.csv row held out"

// ValidateKernels fits on the samples KernelHeldOut keeps (the idle
// fraction from idleFraction) and returns the errors on both sides.
func ValidateKernels(samples []KernelSample, idleFraction, boardW float64) (KernelValidation, error) {
	var train, test []KernelSample
	for _, s := range samples {
		if KernelHeldOut(s) {
			test = append(test, s)
		} else {
			train = append(train, s)
		}
	}
	c, err := FitKernels(train, idleFraction)
	if err != nil {
		return KernelValidation{}, err
	}
	return KernelValidation{Coefficients: c, IdleW: idleFraction * boardW, Train: c.KernelErrors(train), Test: c.KernelErrors(test),
		TrainRows: len(train), TestRows: len(test), HeldOut: KernelHeldOutDescription}, nil
}

// String is the held-out error over every phase, as a provenance shows it.
func (v KernelValidation) String() string {
	for _, e := range v.Test {
		if e.Phase == "all" {
			return fmt.Sprintf("held-out median %.1f%%, P90 %.1f%% board power on %d H100 kernel iterations", e.MedianPct, e.P90Pct, e.N)
		}
	}
	return "no held-out kernel iterations"
}

// ReadKernelDir reads a GPU's kernel tables (kernels.csv and mixed.csv of
// dir, as ../shared/data/gpu-kernels/h100 holds them) into samples on GPU
// spec g with efficiencies eff, and the mean of their idle readings as a
// fraction of g's board power. Both files, an idle reading and an
// iteration reading are required.
func ReadKernelDir(dir string, g hw.GPU, eff analytic.Efficiency) ([]KernelSample, float64, error) {
	var all []KernelSample
	var idle []float64
	for _, f := range []string{"kernels.csv", "mixed.csv"} {
		rows, err := ReadKernelFile(filepath.Join(dir, f))
		if err != nil {
			return nil, 0, err
		}
		s, id, ok, err := KernelSamples(rows, f, g, eff)
		if err != nil {
			return nil, 0, err
		}
		all = append(all, s...)
		if ok {
			idle = append(idle, id)
		}
	}
	if len(idle) == 0 {
		return nil, 0, fmt.Errorf("%s: no idle row (kind idle) in kernels.csv or mixed.csv: the idle draw is needed", dir)
	}
	if len(all) == 0 {
		return nil, 0, fmt.Errorf("%s: no prefill, decode or mixed row in kernels.csv or mixed.csv: the board power of iterations is needed", dir)
	}
	return all, stat.Mean(idle, nil), nil
}

// ReadH100Kernels is ReadKernelDir on KernelGPU with the kernel layer
// alone (measured.Physics: no engine terms), what the built-in
// coefficients are fitted on: the kernel measurements ran no serving
// engine, so no engine's per-iteration, per-layer or per-sequence time
// belongs in their work split, and the power model's physics does not
// move when the serving calibration does.
func ReadH100Kernels(dir string) ([]KernelSample, float64, error) {
	g, err := hw.Lookup(KernelGPU)
	if err != nil {
		return nil, 0, err
	}
	return ReadKernelDir(dir, g, measured.Physics)
}
