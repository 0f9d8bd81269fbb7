package measured

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"

	"gonum.org/v1/gonum/optimize"
	"gonum.org/v1/gonum/stat"

	"splitplan/evaluator/perf/analytic"
	"splitplan/hw"
)

// Fit sizes: the rows one (GPU, engine) fit and one engine's shared fit
// evaluate (fitSubsample; validation always uses every row), the loss
// evaluations of each, and the ridge that keeps a pair near its engine's
// shared fit.
const (
	fitRowsPerPair   = 150
	fitRowsShared    = 300
	pairEvaluations  = 900
	sharedEvaluation = 2700
	pairRidge        = 0.002
)

// RowPrediction is one row's measurement next to its prediction, or the
// reason it has none.
type RowPrediction struct {
	Row Row
	// TTFTms and TPOTms are predicted (0 when Reason is set).
	TTFTms, TPOTms float64
	// Provenance of the efficiencies used.
	Provenance string
	// Reason is why the row could not be predicted ("" when it was).
	Reason string
}

// CellMAPE is the mean absolute percentage error of one validation cell
// (GPU, model, engine, mode), or of all rows when Cell is zero and All is
// true.
type CellMAPE struct {
	Cell Cell
	// All marks the overall line.
	All bool
	// Rows is the number of predicted rows in the cell.
	Rows int
	// TTFT and TPOT are the MAPEs in percent.
	TTFT, TPOT float64
}

// Report summarizes a calibration: the entries (with their in-sample
// MAPEs) and the rows left out because they cannot be predicted.
type Report struct {
	Entries     []Entry
	Unpredicted []RowPrediction
}

// pairKey is a (GPU, engine) pair.
type pairKey struct {
	gpu    string
	engine Engine
}

// params maps eleven unconstrained optimizer coordinates to efficiencies
// and serving latency: fractions (Compute, ExpertCompute, Memory, Comm)
// through a logistic in [0.02, 1] (FlatLatency in [0, 1]), the overheads
// through exp, the per-iteration one within [10 µs, 200 ms], the per-layer
// one within [0.1 µs, 2 ms], the per-sequence one within [0.1 µs, 5 ms],
// the per-request one within [0.1 ms, 2 s], the wait within [0, 50]
// iterations, the per-client one within [0.1 µs, 50 ms]. ScoreBytes stays
// 0 (fused attention). A shared fit has two more coordinates, its spec
// exponents (exponents).
func params(x []float64) (analytic.Efficiency, Serving) {
	frac := func(v float64) float64 { return 0.02 + 0.98/(1+math.Exp(-v)) }
	clamp := func(v, lo, hi float64) float64 { return math.Min(hi, math.Max(lo, v)) }
	return analytic.Efficiency{
			Compute:           frac(x[0]),
			Memory:            frac(x[1]),
			Comm:              frac(x[2]),
			OverheadS:         clamp(math.Exp(x[3]), 1e-5, 0.2),
			SequenceOverheadS: clamp(math.Exp(x[4]), 1e-7, 5e-3),
			FlatLatency:       1 / (1 + math.Exp(-x[8])),
			ExpertCompute:     frac(x[9]),
			LayerOverheadS:    clamp(math.Exp(x[10]), 1e-7, 2e-3),
		}, Serving{
			RequestOverheadS: clamp(math.Exp(x[5]), 1e-4, 2),
			WaitIterations:   50 / (1 + math.Exp(-x[6])),
			ClientOverheadS:  clamp(math.Exp(x[7]), 1e-7, 0.05),
		}
}

// Bounds of the shared entries' spec exponents (Entry.ComputeExponent,
// MemoryExponent).
const minExponent, maxExponent = -0.5, 1.0

// exponents maps the shared fit's two extra coordinates to the spec
// exponents, logistic in [minExponent, maxExponent].
func exponents(x []float64) (compute, memory float64) {
	f := func(v float64) float64 { return minExponent + (maxExponent-minExponent)/(1+math.Exp(-v)) }
	return f(x[11]), f(x[12])
}

// unexponent is exponents' inverse for one coordinate.
func unexponent(v float64) float64 {
	f := (v - minExponent) / (maxExponent - minExponent)
	f = min(max(f, 1e-6), 1-1e-6)
	return math.Log(f / (1 - f))
}

// unparams is params' inverse. Values at or beyond a bound (a spec-scaled
// efficiency clamped to 1, say) map to a coordinate just inside it, so the
// optimiser never starts from an infinite coordinate.
func unparams(e analytic.Efficiency, sv Serving) []float64 {
	inv := func(f float64) float64 {
		f = min(max((f-0.02)/0.98, 1e-6), 1-1e-6)
		return math.Log(f / (1 - f))
	}
	w := sv.WaitIterations / 50
	fl := min(max(e.FlatLatency, 1e-6), 1-1e-6)
	return []float64{inv(e.Compute), inv(e.Memory), inv(e.Comm), math.Log(e.OverheadS), math.Log(max(e.SequenceOverheadS, 1e-7)),
		math.Log(max(sv.RequestOverheadS, 1e-4)), math.Log(w / (1 - w)), math.Log(max(sv.ClientOverheadS, 1e-7)),
		math.Log(fl / (1 - fl)), inv(expertCompute(e)), math.Log(max(e.LayerOverheadS, 1e-7))}
}

// expertCompute is e's routed-expert efficiency: ExpertCompute, or
// Compute when it is 0.
func expertCompute(e analytic.Efficiency) float64 {
	if e.ExpertCompute > 0 {
		return e.ExpertCompute
	}
	return e.Compute
}

// logErr is the absolute log error of a prediction pair, TTFT plus TPOT
// (L1: robust to the rows the model cannot follow, which under a squared
// loss dragged every efficiency to its bound).
func logErr(p *rowPredictor, eff analytic.Efficiency, sv Serving) float64 {
	t, o := p.predict(eff, sv)
	r := p.row
	if !(t > 0) || !(o > 0) {
		return 100
	}
	a := math.Log(t * 1e3 / r.TTFTms)
	b := math.Log(o * 1e3 / r.TPOTms)
	return math.Abs(a) + math.Abs(b)
}

// fitStart is where a shared fit starts: the analytic defaults with the
// all-reduce latency halfway between a ring and a flat one and 20 µs per
// layer.
var fitStart = func() analytic.Efficiency {
	e := analytic.DefaultEfficiency
	e.FlatLatency = 0.5
	e.LayerOverheadS = 20e-6
	return e
}()

// fitSubsample picks up to n rows of preds balanced over their cells
// (GPU, model, engine, mode): every cell gives up to the same quota of
// evenly spaced rows (in input order), the quota the largest that keeps
// the total within n. It returns the rows and their loss weights, 1/√k for
// a cell of k picked rows (normalised to sum 1), so a cell of many rows
// counts more than a cell of one but not in proportion: the figure the fit
// serves is the median over cells.
func fitSubsample(preds []*rowPredictor, n int) ([]*rowPredictor, []float64) {
	byCell := map[Cell][]*rowPredictor{}
	var cells []Cell
	for _, p := range preds {
		c := p.row.CellOf()
		if _, ok := byCell[c]; !ok {
			cells = append(cells, c)
		}
		byCell[c] = append(byCell[c], p)
	}
	slices.SortFunc(cells, func(a, b Cell) int { return strings.Compare(a.String(), b.String()) })
	total := func(q int) int {
		s := 0
		for _, c := range cells {
			s += min(q, len(byCell[c]))
		}
		return s
	}
	q := 1
	for total(q+1) <= n && total(q+1) > total(q) {
		q++
	}
	var sub []*rowPredictor
	var w []float64
	var sum float64
	for _, c := range cells {
		rs := byCell[c]
		k := min(q, len(rs))
		for i := range k {
			sub = append(sub, rs[i*len(rs)/k])
			w = append(w, 1/math.Sqrt(float64(k)))
			sum += 1 / math.Sqrt(float64(k))
		}
	}
	for i := range w {
		w[i] /= sum
	}
	return sub, w
}

// fitGroup fits one set of efficiencies and serving terms to preds by
// Nelder–Mead on the weighted mean absolute log error of TTFT and TPOT
// (fitSubsample's rows and weights), starting from x0. With prior set, it
// adds ridge · Σ (x − prior)² in the optimiser's coordinates, which keeps
// a pair's fit near its engine's shared one where the pair's rows do not
// say otherwise.
func fitGroup(preds []*rowPredictor, rows int, x0, prior []float64, ridge float64, evals int) ([]float64, error) {
	sub, w := fitSubsample(preds, rows)
	f := func(x []float64) float64 {
		eff, sv := params(x)
		var s float64
		if len(x) > 11 {
			ce, me := exponents(x)
			for i, p := range sub {
				s += w[i] * logErr(p, scaleEfficiency(eff, ce, me, p.spec), sv)
			}
		} else {
			for i, p := range sub {
				s += w[i] * logErr(p, eff, sv)
			}
		}
		for i := range prior {
			d := x[i] - prior[i]
			s += ridge * d * d
		}
		return s
	}
	// Two Nelder–Mead runs, the second restarted (a fresh simplex) from
	// the first's best point: a collapsed simplex stalls on these
	// piecewise-smooth losses.
	x := slices.Clone(x0)
	if !allFinite(x) {
		return nil, fmt.Errorf("starting point %v: expected finite coordinates", x)
	}
	for _, n := range []int{evals * 2 / 3, evals / 3} {
		res, err := optimize.Minimize(optimize.Problem{Func: f}, x,
			&optimize.Settings{MajorIterations: n, FuncEvaluations: n}, &optimize.NelderMead{})
		if err != nil && res == nil {
			return nil, err
		}
		if !allFinite(res.X) {
			return nil, fmt.Errorf("Nelder–Mead from %v ended at %v: expected finite coordinates", x, res.X)
		}
		x = res.X
	}
	return x, nil
}

// allFinite says whether every coordinate of x is finite.
func allFinite(x []float64) bool {
	for _, v := range x {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return false
		}
	}
	return true
}

// prepare builds the row predictors, splitting off rows that cannot be
// predicted.
func prepare(rows []Row) ([]*rowPredictor, []RowPrediction) {
	var ok []*rowPredictor
	var bad []RowPrediction
	for _, r := range rows {
		p, err := newRowPredictor(r)
		if err != nil {
			bad = append(bad, RowPrediction{Row: r, Reason: reason(err)})
			continue
		}
		ok = append(ok, p)
	}
	return ok, bad
}

func reason(err error) string {
	s := err.Error()
	if i := strings.Index(s, ErrUnpredictable.Error()+": "); i >= 0 {
		return s[i+len(ErrUnpredictable.Error())+2:]
	}
	return s
}

// Calibrate fits, for every engine present in rows, a shared entry on all
// its rows (GPU SharedGPU: the efficiencies and serving terms of a GPU
// that has no fit of its own, whose spec sheet then makes the
// difference), and for every (GPU, engine) pair an entry fitted on the
// pair's rows, kept near the shared one by a ridge. Rows that cannot be
// predicted are listed in the report; a pair with no predictable row gets
// no entry.
func Calibrate(rows []Row) (Calibration, Report, error) {
	preds, bad := prepare(rows)
	return calibratePreds(preds, bad, true)
}

// calibratePreds fits the shared entries and, with pairs, the pair
// entries.
func calibratePreds(preds []*rowPredictor, bad []RowPrediction, pairs bool) (Calibration, Report, error) {
	groups := map[pairKey][]*rowPredictor{}
	var keys []pairKey
	for _, p := range preds {
		for _, k := range []pairKey{{SharedGPU, p.row.Engine}, {p.row.GPU, p.row.Engine}} {
			if _, ok := groups[k]; !ok {
				keys = append(keys, k)
			}
			groups[k] = append(groups[k], p)
		}
	}
	slices.SortFunc(keys, func(a, b pairKey) int {
		if d := int(a.engine) - int(b.engine); d != 0 {
			return d
		}
		if (a.gpu == SharedGPU) != (b.gpu == SharedGPU) {
			if a.gpu == SharedGPU {
				return -1
			}
			return 1
		}
		return strings.Compare(a.gpu, b.gpu)
	})
	var cal Calibration
	shared := map[Engine][]float64{}
	for _, k := range keys {
		var x []float64
		var err error
		if k.gpu == SharedGPU {
			x0 := append(unparams(fitStart, DefaultServing), unexponent(0.3), unexponent(0.3))
			x, err = fitGroup(groups[k], fitRowsShared, x0, nil, 0, sharedEvaluation)
			shared[k.engine] = x
		} else {
			if !pairs {
				continue
			}
			// The pair starts from, and is drawn to, the shared entry's
			// efficiencies for its GPU.
			sx := shared[k.engine]
			eff, sv := params(sx)
			ce, me := exponents(sx)
			g, gerr := hw.Lookup(k.gpu)
			if gerr == nil {
				eff = scaleEfficiency(eff, ce, me, specRatios(g))
			}
			prior := unparams(eff, sv)
			x, err = fitGroup(groups[k], fitRowsPerPair, prior, prior, pairRidge, pairEvaluations)
		}
		if err != nil {
			return Calibration{}, Report{}, fmt.Errorf("measured: fitting %s/%s: %w", k.gpu, k.engine, err)
		}
		eff, sv := params(x)
		e := Entry{GPU: k.gpu, Engine: k.engine, Rows: len(groups[k])}
		if k.gpu == SharedGPU {
			ce, me := exponents(x)
			e.ComputeExponent, e.MemoryExponent = round6(ce), round6(me)
		}
		e.Efficiency = analytic.Efficiency{Compute: round6(eff.Compute), Memory: round6(eff.Memory), Comm: round6(eff.Comm),
			OverheadS: round9(eff.OverheadS), SequenceOverheadS: round9(eff.SequenceOverheadS), FlatLatency: round6(eff.FlatLatency),
			ExpertCompute: round6(eff.ExpertCompute), LayerOverheadS: round9(eff.LayerOverheadS)}
		e.Serving = Serving{RequestOverheadS: round9(sv.RequestOverheadS), WaitIterations: round6(sv.WaitIterations), ClientOverheadS: round9(sv.ClientOverheadS)}
		var at, ap []float64
		for _, p := range groups[k] {
			t, o := p.predict(e.efficiencyFor(p.spec), e.Serving)
			at = append(at, ape(t*1e3, p.row.TTFTms))
			ap = append(ap, ape(o*1e3, p.row.TPOTms))
		}
		e.MAPETTFT, e.MAPETPOT = round6(stat.Mean(at, nil)), round6(stat.Mean(ap, nil))
		cal.Entries = append(cal.Entries, e)
	}
	if len(cal.Entries) == 0 {
		return Calibration{}, Report{Unpredicted: bad}, errors.New("measured: no predictable rows to calibrate on")
	}
	cal.sort()
	return cal, Report{Entries: cal.Entries, Unpredicted: bad}, nil
}

func round6(v float64) float64 { return math.Round(v*1e6) / 1e6 }

func round9(v float64) float64 { return math.Round(v*1e9) / 1e9 }

// ape is the absolute percentage error of a prediction.
func ape(pred, meas float64) float64 { return 100 * math.Abs(pred-meas) / meas }

// Validate predicts every row with cal and returns the MAPE per cell
// (sorted by cell) followed by the overall line, and every row's
// prediction in input order. These are in-sample figures when cal was
// fitted on rows.
func Validate(rows []Row, cal Calibration) ([]CellMAPE, []RowPrediction) {
	preds := make([]RowPrediction, len(rows))
	for i, r := range rows {
		p, err := Predict(r, cal)
		if err != nil {
			preds[i] = RowPrediction{Row: r, Reason: reason(err)}
			continue
		}
		preds[i] = RowPrediction{Row: r, TTFTms: p.TTFTms, TPOTms: p.TPOTms, Provenance: p.Provenance}
	}
	return cellMAPEs(preds), preds
}

// cellMAPEs aggregates predictions per cell plus an overall line.
func cellMAPEs(preds []RowPrediction) []CellMAPE {
	type acc struct{ t, p []float64 }
	m := map[Cell]*acc{}
	var all acc
	for _, rp := range preds {
		if rp.Reason != "" {
			continue
		}
		c := rp.Row.CellOf()
		a := m[c]
		if a == nil {
			a = &acc{}
			m[c] = a
		}
		t, p := ape(rp.TTFTms, rp.Row.TTFTms), ape(rp.TPOTms, rp.Row.TPOTms)
		a.t, a.p = append(a.t, t), append(a.p, p)
		all.t, all.p = append(all.t, t), append(all.p, p)
	}
	out := make([]CellMAPE, 0, len(m)+1)
	for c, a := range m {
		out = append(out, CellMAPE{Cell: c, Rows: len(a.t), TTFT: stat.Mean(a.t, nil), TPOT: stat.Mean(a.p, nil)})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Cell.String() < out[j].Cell.String() })
	if len(all.t) > 0 {
		out = append(out, CellMAPE{All: true, Rows: len(all.t), TTFT: stat.Mean(all.t, nil), TPOT: stat.Mean(all.p, nil)})
	}
	return out
}

// MedianCellMAPE returns the median over cells (the overall line
// excluded) of the TTFT and TPOT MAPEs.
func MedianCellMAPE(cells []CellMAPE) (ttft, tpot float64) {
	var t, p []float64
	for _, c := range cells {
		if !c.All {
			t, p = append(t, c.TTFT), append(p, c.TPOT)
		}
	}
	if len(t) == 0 {
		return math.NaN(), math.NaN()
	}
	sort.Float64s(t)
	sort.Float64s(p)
	return stat.Quantile(0.5, stat.LinInterp, t, nil), stat.Quantile(0.5, stat.LinInterp, p, nil)
}

// EngineMAPE is the median over one engine's cells of the per-cell MAPEs
// (percent).
type EngineMAPE struct {
	Engine     Engine
	Cells      int
	TTFT, TPOT float64
}

// MedianCellMAPEByEngine returns, for every engine with cells in cells
// (the overall line excluded), the median over its cells (MedianCellMAPE),
// in the engines' order.
func MedianCellMAPEByEngine(cells []CellMAPE) []EngineMAPE {
	by := map[Engine][]CellMAPE{}
	for _, c := range cells {
		if !c.All {
			by[c.Cell.Engine] = append(by[c.Cell.Engine], c)
		}
	}
	out := make([]EngineMAPE, 0, len(by))
	for e, cs := range by {
		t, p := MedianCellMAPE(cs)
		out = append(out, EngineMAPE{Engine: e, Cells: len(cs), TTFT: t, TPOT: p})
	}
	slices.SortFunc(out, func(a, b EngineMAPE) int { return int(a.Engine) - int(b.Engine) })
	return out
}

// CrossValidate refits with each GPU (by "gpu") or each model (by
// "model") left out and predicts the left-out rows with the efficiencies
// Lookup gives them: a left-out GPU's engine's shared entry, fitted on the
// other GPUs, scaled to its spec sheet (only the shared entries are fitted
// then); for a left-out model the pair is still calibrated, on the other
// models. It returns the held-out
// per-cell MAPEs (and overall line) and the held-out predictions.
func CrossValidate(rows []Row, by string) ([]CellMAPE, []RowPrediction, error) {
	keyOf := func(r Row) string { return r.GPU }
	switch by {
	case "gpu":
	case "model":
		keyOf = func(r Row) string { return r.Model }
	default:
		return nil, nil, fmt.Errorf("measured: cross-validation by %q: expected gpu or model", by)
	}
	preds, bad := prepare(rows)
	var folds []string
	for _, p := range preds {
		if k := keyOf(p.row); !slices.Contains(folds, k) {
			folds = append(folds, k)
		}
	}
	slices.Sort(folds)
	out := append([]RowPrediction(nil), bad...)
	for _, f := range folds {
		var train, test []*rowPredictor
		for _, p := range preds {
			if keyOf(p.row) == f {
				test = append(test, p)
			} else {
				train = append(train, p)
			}
		}
		cal, _, err := calibratePreds(train, nil, by == "model")
		if err != nil {
			return nil, nil, fmt.Errorf("measured: fold %s: %w", f, err)
		}
		for _, p := range test {
			e, prov := cal.LookupEntry(p.row.GPU, p.row.Engine)
			t, o := p.predict(e.Efficiency, e.Serving)
			out = append(out, RowPrediction{Row: p.row, TTFTms: t * 1e3, TPOTms: o * 1e3, Provenance: prov})
		}
	}
	return cellMAPEs(out), out, nil
}
