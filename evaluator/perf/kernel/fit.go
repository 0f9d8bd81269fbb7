package kernel

import (
	"fmt"
	"math"
	"slices"

	"gonum.org/v1/gonum/optimize"

	"splitplan/arch"
	"splitplan/hw"
)

// InFit reports whether a row's configuration is in the documented fit
// set: every GEMM row, and the single-prompt prefill and decode rows at
// TP 1 and 8 except those at 8,192 tokens of prompt or context. Held out:
// every row at another TP (the shipped H100 rows: TP 4), every multi-prompt prefill, every prefill of 8,192
// tokens and decode at 8,192 context, every mixed iteration, copies.
func InFit(r Row) bool {
	switch r.Kind {
	case GEMM:
		return true
	case Prefill:
		return (r.TP == 1 || r.TP == 8) && r.Prompts == 1 && r.TokensPerPrompt != 8192
	case Decode:
		return (r.TP == 1 || r.TP == 8) && r.ContextPerRequest != 8192
	}
	return false
}

// DefaultFitGPU and DefaultFitModels are the GPU and the models whose
// iteration rows Default was fitted on (../shared/data/gpu-kernels/h100);
// genkernel fails if that table holds another model.
const DefaultFitGPU = "h100_sxm"

var DefaultFitModels = []string{"llama3.1-8b", "llama3.1-70b"}

// InDefaultFit reports whether a row measured on g is in the fit set of
// Default and ProfiledExperts: on the GPU they were fitted on, a GEMM row
// or a row of one of Default's models that InFit selects, or an iteration
// of a model of ProfiledExpertRuns (every one, but MLA models', which are
// not fitted). A row of any other GPU or model is held out, whatever its
// configuration.
func InDefaultFit(g hw.GPU, r Row) bool {
	switch {
	case g.Name != DefaultFitGPU:
		return false
	case r.IsIteration() && slices.Contains(ProfiledExpertRuns, r.Model):
		return Fitted(r)
	case r.Kind != GEMM && !slices.Contains(DefaultFitModels, r.Model):
		return false
	}
	return InFit(r)
}

// fromVector maps an unconstrained vector to Params: fractions as their
// ceiling × a logistic, the blend as 0.95 × a logistic, times as exp.
func fromVector(x []float64) Params {
	sig := func(v float64) float64 { return 1 / (1 + math.Exp(-v)) }
	return Params{
		GEMMCompute:    MaxComputeFraction * sig(x[0]),
		GEMMComputeFP8: MaxComputeFraction * sig(x[1]),
		GEMMMemory:     MaxMemoryFraction * sig(x[2]),
		Blend:          0.95 * sig(x[3]),
		GEMMLatencyS:   math.Exp(x[4]),
		AttnCompute:    MaxComputeFraction * sig(x[5]),
		KVMemory:       MaxMemoryFraction * sig(x[6]),
		LayerLatencyS:  math.Exp(x[7]),
		IterationS:     math.Exp(x[8]),
	}
}

// toVector is fromVector's inverse.
func toVector(p Params) []float64 {
	logit := func(f, c float64) float64 {
		f = min(max(f/c, 1e-6), 1-1e-6)
		return math.Log(f / (1 - f))
	}
	lg := func(v float64) float64 { return math.Log(max(v, 1e-9)) }
	return []float64{logit(p.GEMMCompute, MaxComputeFraction), logit(p.GEMMComputeFP8, MaxComputeFraction),
		logit(p.GEMMMemory, MaxMemoryFraction), logit(p.Blend, 0.95), lg(p.GEMMLatencyS),
		logit(p.AttnCompute, MaxComputeFraction), logit(p.KVMemory, MaxMemoryFraction), lg(p.LayerLatencyS), lg(p.IterationS)}
}

// Start is the fit's starting point: 70% of the peaks, 85% of the
// bandwidth, a few microseconds per kernel.
var Start = Params{GEMMCompute: 0.7, GEMMComputeFP8: 0.6, GEMMMemory: 0.85, Blend: 0.3, GEMMLatencyS: 4e-6,
	AttnCompute: 0.4, KVMemory: 0.7, LayerLatencyS: 20e-6, IterationS: 100e-6}

// Fit fits Params to the rows of g for which in returns true (GEMM and
// iteration rows; others are ignored), minimising the sum of squared log
// errors with gonum's Nelder-Mead, in two stages. First the dense
// constants on the GEMM rows and the dense models' iteration rows (on the
// MoE models' rows, with the routed experts at the dense GEMM fraction,
// when the table has no dense iteration row); then, when there are MoE
// iteration rows, the routed experts' constants alone on them
// (FitExperts), every other constant frozen at the first stage's. Without MoE rows ExpertCompute stays 0
// (not measured: the dense fraction); without fp8 GEMM rows
// GEMMComputeFP8 keeps start's value. Rows of MLA models are not fitted
// (Row.IsMLA). It fails with no GEMM or no iteration row.
func Fit(rows []Row, g hw.GPU, start Params, in func(Row) bool) (Params, error) {
	var dense, moe []Row
	var gemms, fp8 int
	for _, r := range rows {
		if !in(r) || !(r.Kind == GEMM || r.IsIteration()) {
			continue
		}
		switch {
		case r.IsIteration():
			if _, err := r.Arch(); err != nil {
				return Params{}, fmt.Errorf("line %d: %w", r.Line, err)
			}
			if !Fitted(r) {
				continue
			}
			if r.IsMoE() {
				moe = append(moe, r)
				continue
			}
		default:
			gemms++
			if r.Precision() == arch.FP8 {
				fp8++
			}
		}
		dense = append(dense, r)
	}
	if iters := len(dense) - gemms + len(moe); gemms == 0 || iters == 0 {
		return Params{}, fmt.Errorf("kernel fit: %d GEMM and %d iteration rows (MLA models' rows are not fitted): expected at least one of each", gemms, iters)
	}
	use := dense
	if len(dense) == gemms {
		use = append(use, moe...) // no dense iteration row: the dense constants from the MoE rows
	}
	x0 := toVector(start)
	loss := func(x []float64) float64 {
		p := fromVector(x)
		if fp8 == 0 {
			p.GEMMComputeFP8 = start.GEMMComputeFP8
		}
		return sqLogErr(p, g, use)
	}
	res, err := optimize.Minimize(optimize.Problem{Func: loss}, x0, &optimize.Settings{FuncEvaluations: 20000, Converger: &optimize.FunctionConverge{Absolute: 1e-10, Iterations: 400}}, &optimize.NelderMead{})
	if err != nil && res == nil {
		return Params{}, fmt.Errorf("kernel fit: %w", err)
	}
	p := fromVector(res.X)
	if fp8 == 0 {
		p.GEMMComputeFP8 = start.GEMMComputeFP8
	}
	if len(moe) > 0 {
		if p, err = FitExperts(p, g, moe); err != nil {
			return Params{}, err
		}
	}
	return p, p.Validate()
}

// sqLogErr is the sum of the squared log errors of p's predictions of
// rows (+Inf where one cannot be predicted).
func sqLogErr(p Params, g hw.GPU, rows []Row) float64 {
	var s float64
	for _, r := range rows {
		t, err := Predict(p, g, r)
		if err != nil || !(t > 0) {
			return math.Inf(1)
		}
		e := math.Log(t / r.TimeS)
		s += e * e
	}
	return s
}

// FitExperts fits the routed experts' constants on the MoE iteration
// rows of g, every other constant of p frozen, minimising the squared log
// errors: ExpertCompute (the grouped GEMMs' fraction of the bf16 peak),
// ExpertLayerS (an MoE layer's routing time beyond its GEMMs, at most
// MaxExpertLayerS) and ExpertTileRows (the rows a grouped GEMM computes
// at least per touched expert: 0, 16, 32, … MaxExpertTileRows, each with
// its own Nelder-Mead over the other two from the dense fraction and
// 20 µs; the best wins, the first on a tie). Rows that are not MoE
// iterations, and MLA models' rows (Row.IsMLA), are ignored; with none
// left it fails.
func FitExperts(p Params, g hw.GPU, rows []Row) (Params, error) {
	var moe []Row
	for _, r := range rows {
		if r.IsMoE() && Fitted(r) {
			moe = append(moe, r)
		}
	}
	if len(moe) == 0 {
		return Params{}, fmt.Errorf("kernel fit: no MoE iteration row to fit expert_compute on")
	}
	sig := func(v float64) float64 { return 1 / (1 + math.Exp(-v)) }
	logit := func(f float64) float64 {
		f = min(max(f, 1e-6), 1-1e-6)
		return math.Log(f / (1 - f))
	}
	best, bestLoss := Params{}, math.Inf(1)
	for tile := 0.0; tile <= MaxExpertTileRows; tile += 16 {
		at := func(x []float64) Params {
			q := p
			q.ExpertCompute = MaxComputeFraction * sig(x[0])
			q.ExpertLayerS = MaxExpertLayerS * sig(x[1])
			q.ExpertTileRows = tile
			return q
		}
		x0 := []float64{logit(p.GEMMCompute / MaxComputeFraction), logit(20e-6 / MaxExpertLayerS)}
		res, err := optimize.Minimize(optimize.Problem{Func: func(x []float64) float64 { return sqLogErr(at(x), g, moe) }},
			x0, &optimize.Settings{FuncEvaluations: 2000, Converger: &optimize.FunctionConverge{Absolute: 1e-12, Iterations: 100}}, &optimize.NelderMead{})
		if err != nil && res == nil {
			return Params{}, fmt.Errorf("kernel fit of the routed experts: %w", err)
		}
		if q := at(res.X); res.F < bestLoss {
			best, bestLoss = q, res.F
		}
	}
	return best, best.Validate()
}
