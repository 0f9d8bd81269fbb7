package power

import (
	"fmt"
	"math"
	"sort"
	"strings"

	"gonum.org/v1/gonum/optimize"
	"gonum.org/v1/gonum/stat"

	"splitplan/arch"
	"splitplan/evaluator/perf"
	"splitplan/evaluator/perf/analytic"
	"splitplan/hw"
)

// Profile hardware names of the power-capped profile and its uncapped
// twin, and the cap the capped runs were taken at: SPEC §2's DGX-H100cap,
// "GPUs capped at 50% (machine at 70% of rated power)", the catalog's
// gpu_power_cap of 0.5.
const (
	CappedHardware   = "h100-80gb-pcap"
	UncappedHardware = "h100-80gb"
	ProfileCap       = 0.5
)

// CapSample is one profiled point (model, tp, prompt, batch, tokens) run
// both uncapped and capped: the median prompt and decode times of each, and
// the analytic batches of its prompt and mean decode iterations.
type CapSample struct {
	// Model is the profile's model name, TP its tensor parallelism.
	Model string
	TP    int
	// PromptSize, BatchSize and TokenSize are the point's sizes.
	PromptSize, BatchSize, TokenSize int
	// Uncapped and Capped are the median prompt_time and token_time in
	// seconds of the point's runs without and with the cap.
	UncappedPromptS, UncappedTokenS, CappedPromptS, CappedTokenS float64
	// Prompt and Decode are the iterations' analytic batches; An the
	// analytic model of the model at that tp.
	Prompt, Decode analytic.Batch
	An             *analytic.Model
}

// CapSamples pairs the consistent (perf.Consistent) uncapped and capped
// runs of the profile by point, for the models whose names contain model
// (case-insensitive; "" for all), with the analytic model on gpu at eff.
// Samples are sorted by model, tp and sizes.
func CapSamples(rows []perf.ProfileRow, model string, gpu hw.GPU, eff analytic.Efficiency) ([]CapSample, error) {
	type key struct {
		model                     string
		tp, prompt, batch, tokens int
	}
	type times struct{ up, ut, cp, ct []float64 }
	byKey := map[key]*times{}
	for _, r := range rows {
		if !perf.Consistent(r) || (model != "" && !strings.Contains(strings.ToLower(r.Model), strings.ToLower(model))) {
			continue
		}
		capped := strings.EqualFold(r.Hardware, CappedHardware)
		if !capped && !strings.EqualFold(r.Hardware, UncappedHardware) {
			continue
		}
		k := key{strings.ToLower(r.Model), r.TP, r.PromptSize, r.BatchSize, r.TokenSize}
		t := byKey[k]
		if t == nil {
			t = &times{}
			byKey[k] = t
		}
		if capped {
			t.cp, t.ct = append(t.cp, r.PromptTime), append(t.ct, r.TokenTime)
		} else {
			t.up, t.ut = append(t.up, r.PromptTime), append(t.ut, r.TokenTime)
		}
	}
	keys := make([]key, 0, len(byKey))
	for k, t := range byKey {
		if len(t.up) > 0 && len(t.cp) > 0 {
			keys = append(keys, k)
		}
	}
	sort.Slice(keys, func(i, j int) bool {
		a, b := keys[i], keys[j]
		if a.model != b.model {
			return a.model < b.model
		}
		if a.tp != b.tp {
			return a.tp < b.tp
		}
		if a.prompt != b.prompt {
			return a.prompt < b.prompt
		}
		if a.batch != b.batch {
			return a.batch < b.batch
		}
		return a.tokens < b.tokens
	})
	if len(keys) == 0 {
		return nil, fmt.Errorf("power: no profiled point run both on %s and %s for model %q", UncappedHardware, CappedHardware, model)
	}
	models := map[string]*analytic.Model{}
	out := make([]CapSample, 0, len(keys))
	for _, k := range keys {
		mk := fmt.Sprintf("%s/%d", k.model, k.tp)
		an := models[mk]
		if an == nil {
			a, err := arch.Lookup(k.model)
			if err != nil {
				return nil, fmt.Errorf("power: %w", err)
			}
			if an, err = analytic.New(analytic.Config{Arch: a, GPU: gpu, TP: k.tp, Weights: arch.BF16, KV: arch.BF16, Eff: eff}); err != nil {
				return nil, fmt.Errorf("power: %w", err)
			}
			models[mk] = an
		}
		t := byKey[k]
		out = append(out, CapSample{Model: k.model, TP: k.tp, PromptSize: k.prompt, BatchSize: k.batch, TokenSize: k.tokens,
			UncappedPromptS: median(t.up), UncappedTokenS: median(t.ut), CappedPromptS: median(t.cp), CappedTokenS: median(t.ct),
			Prompt: analytic.Batch{PromptTokens: k.prompt * k.batch, Prompts: k.batch,
				PromptAttnPairs: float64(k.batch) * analytic.AttnPairs(k.prompt, 0)},
			Decode: analytic.Batch{Decodes: k.batch, DecodeContextTokens: int64(k.batch) * (int64(k.prompt) + int64(k.tokens)/2)},
			An:     an})
	}
	return out, nil
}

// median is the median of xs (sorted in place; gonum's empirical
// quantile at 0.5).
func median(xs []float64) float64 {
	sort.Float64s(xs)
	return stat.Quantile(0.5, stat.Empirical, xs, nil)
}

// CapMAPE returns curve's mean absolute percentage errors on samples when
// it predicts each capped time as the uncapped one times the latency
// multiplier from a cap of 1 to ProfileCap: of the prompt times, of the
// decode times, and of both pooled.
func (c CapCurve) CapMAPE(samples []CapSample) (promptPct, tokenPct, allPct float64, err error) {
	if len(samples) == 0 {
		return 0, 0, 0, fmt.Errorf("power: no capped samples")
	}
	for _, s := range samples {
		kp, err := c.LatencyMultiplier(s.An, s.Prompt, 1, ProfileCap)
		if err != nil {
			return 0, 0, 0, err
		}
		kd, err := c.LatencyMultiplier(s.An, s.Decode, 1, ProfileCap)
		if err != nil {
			return 0, 0, 0, err
		}
		promptPct += math.Abs(s.UncappedPromptS*kp-s.CappedPromptS) / s.CappedPromptS * 100
		tokenPct += math.Abs(s.UncappedTokenS*kd-s.CappedTokenS) / s.CappedTokenS * 100
	}
	n := float64(len(samples))
	return promptPct / n, tokenPct / n, (promptPct + tokenPct) / (2 * n), nil
}

// FitCap calibrates the curve's Exponent on samples with its
// StaticFraction fixed at static (the fitted idle draw), minimising the
// pooled CapMAPE by Nelder–Mead (gonum optimize) over log Exponent.
func FitCap(samples []CapSample, static float64) (CapCurve, error) {
	curve := func(x []float64) CapCurve {
		return CapCurve{StaticFraction: static, Exponent: math.Exp(max(-5, min(x[0], math.Log(100))))}
	}
	if err := curve([]float64{0}).Validate(); err != nil {
		return CapCurve{}, err
	}
	loss := func(x []float64) float64 {
		_, _, all, err := curve(x).CapMAPE(samples)
		if err != nil {
			return math.Inf(1)
		}
		return all
	}
	res, err := optimize.Minimize(optimize.Problem{Func: loss}, []float64{math.Log(3)},
		&optimize.Settings{Converger: &optimize.FunctionConverge{Absolute: 1e-10, Iterations: 100}, MajorIterations: 2000},
		&optimize.NelderMead{})
	if err != nil && res == nil {
		return CapCurve{}, fmt.Errorf("power: cap fit: %w", err)
	}
	c := curve(res.X)
	if _, _, _, err := c.CapMAPE(samples); err != nil {
		return CapCurve{}, err
	}
	return c, nil
}
