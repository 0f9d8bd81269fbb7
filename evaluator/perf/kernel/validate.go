package kernel

import (
	"math"
	"sort"

	"gonum.org/v1/gonum/stat"

	"splitplan/hw"
)

// RowError is one iteration row's prediction.
type RowError struct {
	Row Row
	// PredS is the kernel layer's time; ErrPct the absolute error in %
	// of the measured time; InFit whether the row's configuration is in
	// the fit set (InFit).
	PredS, ErrPct float64
	InFit         bool
}

// Summary is the median and 90th percentile of the absolute % errors of
// N rows.
type Summary struct {
	N           int
	Median, P90 float64
}

// summarize summarizes errs (the zero Summary for none).
func summarize(errs []float64) Summary {
	if len(errs) == 0 {
		return Summary{}
	}
	s := append([]float64(nil), errs...)
	sort.Float64s(s)
	return Summary{N: len(s), Median: stat.Quantile(0.5, stat.LinInterp, s, nil), P90: stat.Quantile(0.9, stat.LinInterp, s, nil)}
}

// Validation is the kernel layer's accuracy on a file's iteration rows.
type Validation struct {
	Rows []RowError
	// ByKind are the summaries of the held-out rows of each kind
	// (prefill, decode, mixed: dense models), of the MoE models' rows of
	// every kind ("moe") and of all of them ("pooled"); FitByKind the
	// same over the rows in the fit set.
	ByKind, FitByKind map[Kind]Summary
	// Skipped is the iteration rows not predicted (a model that is not
	// a built-in architecture, or a bad layer count).
	Skipped int
}

// Pooled is the key of the summaries over every kind; MoE that of the
// mixture-of-experts models' iteration rows (of every kind), and MLA that
// of the latent-attention models' (Row.IsMLA; never fitted), which the
// kinds' own summaries leave out.
const (
	Pooled Kind = "pooled"
	MoE    Kind = "moe"
	MLA    Kind = "mla"
)

// Validate predicts every iteration row of rows on g with p; rows it
// cannot predict (an unknown model) are left out.
func Validate(p Params, g hw.GPU, rows []Row, in func(Row) bool) Validation {
	v := Validation{ByKind: map[Kind]Summary{}, FitByKind: map[Kind]Summary{}}
	held, fit := map[Kind][]float64{}, map[Kind][]float64{}
	for _, r := range rows {
		if !r.IsIteration() {
			continue
		}
		t, err := Predict(p, g, r)
		if err != nil {
			v.Skipped++
			continue
		}
		e := RowError{Row: r, PredS: t, ErrPct: 100 * math.Abs(t-r.TimeS) / r.TimeS, InFit: in(r)}
		v.Rows = append(v.Rows, e)
		m := held
		if e.InFit {
			m = fit
		}
		group := r.Kind
		switch {
		case r.IsMLA():
			group = MLA
		case r.IsMoE():
			group = MoE
		}
		m[group] = append(m[group], e.ErrPct)
		m[Pooled] = append(m[Pooled], e.ErrPct)
	}
	for _, k := range []Kind{Prefill, Decode, Mixed, MoE, MLA, Pooled} {
		v.ByKind[k] = summarize(held[k])
		v.FitByKind[k] = summarize(fit[k])
	}
	return v
}
