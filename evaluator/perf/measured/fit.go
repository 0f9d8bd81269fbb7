package measured

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"

	"gonum.org/v1/gonum/optimize"
	"gonum.org/v1/gonum/stat"

	"splitplan/evaluator/perf/analytic"
	"splitplan/internal/quantile"
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
	// Unphysical marks a row left out because its measurement beats
	// physics: its TPOT is below the spec-sheet roofline of the batches
	// its clients keep running, or (PrefillBound too) its clients sent
	// prompts faster than its GPU prefills them.
	Unphysical, PrefillBound bool
	// Duplicate marks a row left out because it repeats the measurement
	// of a row before it to 12 significant digits (one run recorded twice).
	Duplicate bool
	// Speculative marks a row left out because it ran with speculative
	// decoding (MTP), which the rows do not record and the model does
	// not simulate (speculativeRuns).
	Speculative bool
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
	// RatioTTFT and RatioTPOT are the medians of predicted / measured
	// over the rows: above 1 the model is too slow on the cell, below 1
	// too fast (the MAPE alone does not say which).
	RatioTTFT, RatioTPOT float64
	// E2E is the MAPE in percent of a request's end-to-end latency
	// (E2Ems: its TTFT, then its other output tokens at its TPOT), the
	// figure an E2E SLO is checked on; where the TTFT and TPOT errors
	// have opposite signs they partly cancel in it.
	E2E float64
}

// E2Ems is a benchmark request's end-to-end latency in milliseconds from
// a row's mean TTFT and TPOT (measured or predicted): the first token,
// then the rest of the mean output length the benchmark's requests had
// (benchMeanLength of the row's nominal length) at the TPOT.
func E2Ems(r Row, ttftMs, tpotMs float64) float64 {
	return ttftMs + (benchMeanLength(r.OutputTokens)-1)*tpotMs
}

// Report summarizes a calibration: the entries (with their in-sample
// MAPEs) and the rows left out because they cannot be predicted.
type Report struct {
	Entries     []Entry
	Unpredicted []RowPrediction
}

// Physics is the physical part of the iteration model that the serving
// fit holds fixed, one GPU-independent value: the kernel layer of issue
// 28 (package kernel: fitted on the H100 kernel measurements, carried to
// every GPU by its spec sheet alone) and all-reduces at
// analytic.NCCLEfficiency of the link. Nothing fitted on serving rows
// changes it: Calibrate fits only the engine terms (EngineTerms) and the
// host-speed factors.
var Physics = analytic.Efficiency{Kernels: true}

// EngineTerms are the host-side costs of an iteration, fitted per engine:
// OverheadS, LayerOverheadS, PromptOverheadS and SequenceOverheadS of
// analytic.Efficiency, in that order (seconds per iteration, per layer
// per iteration, per iteration carrying prompt tokens, per sequence).
type EngineTerms [4]float64

// engineTermsOf returns e's engine terms.
func engineTermsOf(e analytic.Efficiency) EngineTerms {
	return EngineTerms{e.OverheadS, e.LayerOverheadS, e.PromptOverheadS, e.SequenceOverheadS}
}

// withEngineTerms returns phys with its engine terms set to th.
func withEngineTerms(phys analytic.Efficiency, th EngineTerms) analytic.Efficiency {
	phys.OverheadS, phys.LayerOverheadS, phys.PromptOverheadS, phys.SequenceOverheadS = th[0], th[1], th[2], th[3]
	return phys
}

// Bounds of the fitted engine terms (seconds) and of the serving terms:
// per iteration [1 µs, 200 ms], per layer [10 ns, 30 µs], per prompt
// iteration [1 µs, 5 ms], per sequence [10 ns, 5 ms], per request
// [0.1 ms, 2 s], iterations waited [0, 3], per client [0.1 µs, 1 ms],
// per prompt token [1 ns, 10 µs].
// A layer's host-side launches and small kernels cost microseconds, a
// prompt iteration launched without a CUDA graph some milliseconds (a
// few kernels per layer at about 5 µs each); unbounded, the fit took
// 80–100 µs per layer and 15 ms per prompt iteration, standing in for
// the frozen physics' error (MoE GEMMs, prefill compute), which broke
// package power's cap test (a compute-bound prompt slowing by 1/clock).
// A request arriving mid-iteration waits out the rest of it and, with an
// asynchronous front end or scheduler, about one more: more than 3 would
// be queueing the simulated schedule does not have, standing in for it
// (the fit put it at 12 to 31 without the bound, the held-out figures
// within about a point either way). A front end's work on another
// client's stream (detokenising and sending a chunk) costs tens of
// microseconds: bounded at 50 ms a client, SGLang's fit took 3–5 ms,
// standing in for queueing too, and its fold without the H200 put 5.2 ms
// on that GPU's 64–128-client runs. A tokeniser reading 100,000 tokens a
// second takes 10 µs a prompt token.
var termBounds = [8][2]float64{{1e-6, 0.2}, {1e-8, 30e-6}, {1e-6, 5e-3}, {1e-8, 5e-3}, {1e-4, 2}, {0, 3}, {1e-7, 1e-3}, {1e-9, 10e-6}}

// engineParams maps seven unconstrained optimizer coordinates to the
// engine terms and the serving terms: each within termBounds, through a
// logistic in the logarithm of the bounds (linear for the iterations
// waited).
func engineParams(x []float64) (EngineTerms, Serving) {
	var v [8]float64
	for i, b := range termBounds {
		s := 1 / (1 + math.Exp(-x[i]))
		if b[0] == 0 {
			v[i] = b[1] * s
		} else {
			v[i] = math.Exp(math.Log(b[0]) + s*(math.Log(b[1])-math.Log(b[0])))
		}
	}
	return EngineTerms{v[0], v[1], v[2], v[3]}, Serving{RequestOverheadS: v[4], WaitIterations: v[5], ClientOverheadS: v[6], PromptTokenS: v[7]}
}

// engineCoords is engineParams' inverse; values at or beyond a bound map
// to a coordinate just inside it.
func engineCoords(th EngineTerms, sv Serving) []float64 {
	v := [8]float64{th[0], th[1], th[2], th[3], sv.RequestOverheadS, sv.WaitIterations, sv.ClientOverheadS, sv.PromptTokenS}
	x := make([]float64, len(v))
	for i, b := range termBounds {
		var s float64
		if b[0] == 0 {
			s = v[i] / b[1]
		} else {
			s = (math.Log(max(v[i], 1e-300)) - math.Log(b[0])) / (math.Log(b[1]) - math.Log(b[0]))
		}
		s = min(max(s, 1e-6), 1-1e-6)
		x[i] = math.Log(s / (1 - s))
	}
	return x
}

// fitStart is where an engine's fit starts: 1 ms per iteration, 20 µs per
// layer, 1 ms per prompt iteration, 20 µs per sequence, DefaultServing.
var fitStart = EngineTerms{1e-3, 20e-6, 1e-3, 20e-6}

// Fit sizes: the rows one engine's fit evaluates at most (fitSubsample;
// validation always uses every row), the loss evaluations of one
// engine's fit and of one generation's host factor, the fitting rounds
// (engines, then host factors, in turn), and the ridge on the logarithm
// of a host factor.
const (
	fitRowsEngine = 1200
	engineEvals   = 1500
	hostEvals     = 60
	fitRounds     = 2
	hostRidge     = 0.05
	referenceGen  = "hopper"
	baselineEvals = 300
)

// fitErr is the loss of a prediction pair: the mean of its absolute
// relative error (the terms of the MAPE that validation quotes) and its
// absolute log error, TTFT plus TPOT. The relative error alone fits the
// figure quoted but leans low (minimising it rewards under-prediction),
// which put TTFTs too fast on 74–78% of an engine's held-out rows,
// against the 75% limit; the log error alone is symmetric but weighs a
// TTFT under-predicted 10× (queues the schedule does not have) like one
// over-predicted 10×, which pulled the shared serving terms up for every
// cell. Their mean keeps most of the relative error's gain and the log
// error's balance (leave one GPU out, median per cell: TTFT 44.4% →
// 40.6%, TPOT 17.0% → 17.2%, at most 71% of an engine's rows one way;
// see doc.go).
func fitErr(r Row, t, o float64) float64 {
	if !(t > 0) || !(o > 0) {
		return 100
	}
	rt, ro := t*1e3/r.TTFTms, o*1e3/r.TPOTms
	return 0.5*(math.Abs(rt-1)+math.Abs(ro-1)) + 0.5*(math.Abs(math.Log(rt))+math.Abs(math.Log(ro)))
}

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

// minimize runs Nelder–Mead on f from x0 for about evals evaluations, in
// two runs (the second restarted, a fresh simplex, from the first's best
// point: a collapsed simplex stalls on these piecewise-smooth losses),
// and stops with ctx's error once ctx is done.
func minimize(ctx context.Context, f func([]float64) float64, x0 []float64, evals int) ([]float64, error) {
	x := slices.Clone(x0)
	if !allFinite(x) {
		return nil, fmt.Errorf("starting point %v: expected finite coordinates", x)
	}
	status := func() (optimize.Status, error) {
		if err := ctx.Err(); err != nil {
			return optimize.Failure, err
		}
		return optimize.NotTerminated, nil
	}
	for _, n := range []int{evals * 2 / 3, evals - evals*2/3} {
		res, err := optimize.Minimize(optimize.Problem{Func: f, Status: status}, x,
			&optimize.Settings{MajorIterations: n, FuncEvaluations: n}, &optimize.NelderMead{})
		if cerr := ctx.Err(); cerr != nil {
			return nil, cerr
		}
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

// Options are the optional controls of Calibrate and CrossValidate.
type Options struct {
	// Progress, when set, is called as the work advances: stage names
	// what runs (preparing rows, a fold, a fit), done of total its steps.
	Progress func(stage string, done, total int)
}

func (o Options) progress(stage string, done, total int) {
	if o.Progress != nil {
		o.Progress(stage, done, total)
	}
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
// predicted; it stops with ctx's error once ctx is done.
func prepare(ctx context.Context, rows []Row, opt Options) ([]*rowPredictor, []RowPrediction, error) {
	var ok []*rowPredictor
	var bad []RowPrediction
	var seen sameRun
	spec := newSpeculativeKeys(rows)
	for i, r := range rows {
		if i%16 == 0 {
			if err := ctx.Err(); err != nil {
				return nil, nil, err
			}
			opt.progress("simulating the benchmarks' schedules", i, len(rows))
		}
		p, err := checkedPredictor(ctx, r, &seen, spec)
		if err != nil {
			if cerr := ctx.Err(); cerr != nil {
				return nil, nil, cerr
			}
			bad = append(bad, unpredicted(r, err))
			continue
		}
		ok = append(ok, p)
	}
	return ok, bad, nil
}

func reason(err error) string {
	s := err.Error()
	if i := strings.Index(s, ErrUnpredictable.Error()+": "); i >= 0 {
		return s[i+len(ErrUnpredictable.Error())+2:]
	}
	return s
}

// Calibrate fits, for every engine present in rows, a shared entry (GPU
// SharedGPU) on all its rows, on every GPU: its engine terms
// (EngineTerms) and serving terms, with the physics held at Physics; and
// one host-speed factor per GPU generation (HostSpeed; hopper, the
// reference, is 1), shared by the engines and held near 1 by a ridge.
// No compute, memory, communication or expert efficiency is fitted on
// serving rows. Rows that cannot be predicted are listed in the report.
// It stops with ctx's error once ctx is done.
func Calibrate(ctx context.Context, rows []Row, opt Options) (Calibration, Report, error) {
	preds, bad, err := prepare(ctx, rows, opt)
	if err != nil {
		return Calibration{}, Report{}, err
	}
	return calibratePreds(ctx, preds, bad, opt)
}

// engineGroup is the rows of one engine fitted together, with their loss
// weights and host generations.
type engineGroup struct {
	engine Engine
	rows   []*rowPredictor
	sub    []*rowPredictor
	w      []float64
	terms  EngineTerms
	sv     Serving
}

// calibratePreds fits the shared entries and the host factors.
func calibratePreds(ctx context.Context, preds []*rowPredictor, bad []RowPrediction, opt Options) (Calibration, Report, error) {
	byEngine := map[Engine]*engineGroup{}
	var groups []*engineGroup
	gens := map[string]int{}
	for _, p := range preds {
		g := byEngine[p.row.Engine]
		if g == nil {
			g = &engineGroup{engine: p.row.Engine, terms: fitStart, sv: DefaultServing}
			byEngine[p.row.Engine] = g
			groups = append(groups, g)
		}
		g.rows = append(g.rows, p)
		gens[Generation(p.row.GPU)]++
	}
	if len(groups) == 0 {
		return Calibration{}, Report{Unpredicted: bad}, errors.New("measured: no predictable rows to calibrate on")
	}
	slices.SortFunc(groups, func(a, b *engineGroup) int { return int(a.engine) - int(b.engine) })
	for _, g := range groups {
		g.sub, g.w = fitSubsample(g.rows, fitRowsEngine)
	}
	var genNames []string
	for gen := range gens {
		if gen != "" && gen != referenceGen {
			genNames = append(genNames, gen)
		}
	}
	slices.Sort(genNames)
	host := map[string]float64{}
	factor := func(gpu string) float64 {
		if h, ok := host[Generation(gpu)]; ok {
			return h
		}
		return 1
	}
	steps, step := fitRounds*(len(groups)+len(genNames)), 0
	for range fitRounds {
		for _, g := range groups {
			opt.progress("fitting "+g.engine.String(), step, steps)
			x, err := minimize(ctx, func(x []float64) float64 {
				th, sv := engineParams(x)
				var s float64
				for i, p := range g.sub {
					t, o := p.predictTerms(th, sv, factor(p.row.GPU))
					s += g.w[i] * fitErr(p.row, t, o)
				}
				return s
			}, engineCoords(g.terms, g.sv), engineEvals)
			if err != nil {
				return Calibration{}, Report{}, fmt.Errorf("measured: fitting %s: %w", g.engine, err)
			}
			g.terms, g.sv = engineParams(x)
			step++
		}
		for _, gen := range genNames {
			opt.progress("fitting the "+gen+" host factor", step, steps)
			x, err := minimize(ctx, func(x []float64) float64 {
				h := hostParam(x[0])
				var s float64
				for _, g := range groups {
					for i, p := range g.sub {
						if Generation(p.row.GPU) == gen {
							t, o := p.predictTerms(g.terms, g.sv, h)
							s += g.w[i] * fitErr(p.row, t, o)
						}
					}
				}
				l := math.Log(h)
				return s + hostRidge*l*l
			}, []float64{hostCoord(host[gen])}, hostEvals)
			if err != nil {
				return Calibration{}, Report{}, fmt.Errorf("measured: fitting the %s host factor: %w", gen, err)
			}
			host[gen] = hostParam(x[0])
			step++
		}
	}
	opt.progress("fitted", steps, steps)
	var cal Calibration
	for gen, n := range gens {
		if gen == "" {
			continue
		}
		h := 1.0
		if v, ok := host[gen]; ok {
			h = round6(v)
		}
		cal.Hosts = append(cal.Hosts, HostSpeed{Generation: gen, Factor: h, Rows: n})
	}
	for _, g := range groups {
		e := Entry{GPU: SharedGPU, Engine: g.engine, Rows: len(g.rows)}
		th := g.terms
		e.Efficiency = withEngineTerms(Physics, EngineTerms{round9(th[0]), round9(th[1]), round9(th[2]), round9(th[3])})
		e.Serving = Serving{RequestOverheadS: round9(g.sv.RequestOverheadS), WaitIterations: round6(g.sv.WaitIterations), ClientOverheadS: round9(g.sv.ClientOverheadS), PromptTokenS: round12(g.sv.PromptTokenS)}
		for _, p := range g.rows {
			if !slices.Contains(e.GPUs, p.row.GPU) {
				e.GPUs = append(e.GPUs, p.row.GPU)
			}
		}
		slices.Sort(e.GPUs)
		cal.Entries = append(cal.Entries, e)
	}
	cal.sort()
	for i := range cal.Entries {
		e := &cal.Entries[i]
		var at, ap []float64
		for _, p := range byEngine[e.Engine].rows {
			le, _ := cal.LookupEntry(p.row.GPU, e.Engine)
			t, o := p.predict(le.Efficiency, le.Serving)
			at = append(at, ape(t*1e3, p.row.TTFTms))
			ap = append(ap, ape(o*1e3, p.row.TPOTms))
		}
		e.MAPETTFT, e.MAPETPOT = round6(stat.Mean(at, nil)), round6(stat.Mean(ap, nil))
	}
	if err := cal.Validate(); err != nil {
		return Calibration{}, Report{}, err
	}
	return cal, Report{Entries: cal.Entries, Unpredicted: bad}, nil
}

// hostParam maps an optimizer coordinate to a host factor, logistic in
// the logarithm within [minHostFactor, maxHostFactor]; hostCoord is its
// inverse (0 for factor 1 given the symmetric bounds; an unset factor,
// 0, starts at 1).
func hostParam(y float64) float64 {
	lo, hi := math.Log(minHostFactor), math.Log(maxHostFactor)
	return math.Exp(lo + (hi-lo)/(1+math.Exp(-y)))
}

func hostCoord(h float64) float64 {
	if h <= 0 {
		h = 1
	}
	lo, hi := math.Log(minHostFactor), math.Log(maxHostFactor)
	s := min(max((math.Log(h)-lo)/(hi-lo), 1e-6), 1-1e-6)
	return math.Log(s / (1 - s))
}

func round6(v float64) float64 { return math.Round(v*1e6) / 1e6 }

func round9(v float64) float64 { return math.Round(v*1e9) / 1e9 }

// round12 rounds to 12 decimals (picoseconds: the per-token terms).
func round12(v float64) float64 { return math.Round(v*1e12) / 1e12 }

// ape is the absolute percentage error of a prediction.
func ape(pred, meas float64) float64 { return 100 * math.Abs(pred-meas) / meas }

// Validate predicts every row with cal and returns the MAPE per cell
// (sorted by cell) followed by the overall line, and every row's
// prediction in input order. These are in-sample figures when cal was
// fitted on rows.
func Validate(rows []Row, cal Calibration) ([]CellMAPE, []RowPrediction) {
	preds := make([]RowPrediction, len(rows))
	var seen sameRun
	spec := newSpeculativeKeys(rows)
	for i, r := range rows {
		p, err := checkedPredictor(context.Background(), r, &seen, spec)
		if err != nil {
			preds[i] = unpredicted(r, err)
			continue
		}
		pr := p.prediction(cal)
		preds[i] = RowPrediction{Row: r, TTFTms: pr.TTFTms, TPOTms: pr.TPOTms, Provenance: pr.Provenance}
	}
	return cellMAPEs(preds), preds
}

// cellMAPEs aggregates predictions per cell plus an overall line.
func cellMAPEs(preds []RowPrediction) []CellMAPE {
	type acc struct{ t, p, e, rt, rp []float64 }
	m := map[Cell]*acc{}
	var all acc
	cell := func(c Cell, isAll bool, a *acc) CellMAPE {
		return CellMAPE{Cell: c, All: isAll, Rows: len(a.t), TTFT: stat.Mean(a.t, nil), TPOT: stat.Mean(a.p, nil),
			RatioTTFT: quantile.Median(a.rt), RatioTPOT: quantile.Median(a.rp), E2E: stat.Mean(a.e, nil)}
	}
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
		e := ape(E2Ems(rp.Row, rp.TTFTms, rp.TPOTms), E2Ems(rp.Row, rp.Row.TTFTms, rp.Row.TPOTms))
		rt, rq := rp.TTFTms/rp.Row.TTFTms, rp.TPOTms/rp.Row.TPOTms
		a.t, a.p, a.e, a.rt, a.rp = append(a.t, t), append(a.p, p), append(a.e, e), append(a.rt, rt), append(a.rp, rq)
		all.t, all.p, all.e, all.rt, all.rp = append(all.t, t), append(all.p, p), append(all.e, e), append(all.rt, rt), append(all.rp, rq)
	}
	out := make([]CellMAPE, 0, len(m)+1)
	for c, a := range m {
		out = append(out, cell(c, false, a))
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Cell.String() < out[j].Cell.String() })
	if len(all.t) > 0 {
		out = append(out, cell(Cell{}, true, &all))
	}
	return out
}

// MedianCellMAPE returns the median over cells (the overall line
// excluded) of the TTFT and TPOT MAPEs.
func MedianCellMAPE(cells []CellMAPE) (ttft, tpot float64) {
	return medianCell(cells, func(c CellMAPE) float64 { return c.TTFT }), medianCell(cells, func(c CellMAPE) float64 { return c.TPOT })
}

// MedianCellE2E returns the median over cells (the overall line
// excluded) of the per-cell end-to-end MAPEs (CellMAPE.E2E), NaN for no
// cells.
func MedianCellE2E(cells []CellMAPE) float64 {
	return medianCell(cells, func(c CellMAPE) float64 { return c.E2E })
}

// medianCell is the median of one figure of cells (the overall line
// excluded; gonum's LinInterp quantile), NaN for no cells.
func medianCell(cells []CellMAPE, of func(CellMAPE) float64) float64 {
	var v []float64
	for _, c := range cells {
		if !c.All {
			v = append(v, of(c))
		}
	}
	return medianOf(v)
}

// medianOf is the median of v as the per-cell figures take it (gonum's
// LinInterp quantile, the lower of the two middle values of an even
// count), NaN for none; it sorts v.
func medianOf(v []float64) float64 {
	if len(v) == 0 {
		return math.NaN()
	}
	sort.Float64s(v)
	return stat.Quantile(0.5, stat.LinInterp, v, nil)
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

// CrossValidation is the outcome of CrossValidate: the model's held-out
// predictions and those of the two-parameter roofline baseline fitted on
// the same folds (Baseline), each with its per-cell MAPEs and overall
// line.
type CrossValidation struct {
	Cells, BaselineCells []CellMAPE
	Preds, BaselinePreds []RowPrediction
}

// CrossValidate refits with each GPU (by "gpu") or each model (by
// "model") left out and predicts the left-out rows with the entry Lookup
// gives them: the engine's shared entry fitted on the other folds, with
// the host factor of the GPU's generation (1 when the fold took every
// GPU of a generation), the physics from its spec sheet. On the same
// folds it fits and predicts the two-parameter roofline baseline
// (fitBaseline). Rows that cannot be predicted come first in the
// predictions, with their reason. It stops with ctx's error once ctx is
// done.
func CrossValidate(ctx context.Context, rows []Row, by string, opt Options) (CrossValidation, error) {
	keyOf := func(r Row) string { return r.GPU }
	switch by {
	case "gpu":
	case "model":
		keyOf = func(r Row) string { return r.Model }
	default:
		return CrossValidation{}, fmt.Errorf("measured: cross-validation by %q: expected gpu or model", by)
	}
	preds, bad, err := prepare(ctx, rows, opt)
	if err != nil {
		return CrossValidation{}, err
	}
	var folds []string
	for _, p := range preds {
		if k := keyOf(p.row); !slices.Contains(folds, k) {
			folds = append(folds, k)
		}
	}
	slices.Sort(folds)
	out := append([]RowPrediction(nil), bad...)
	base := append([]RowPrediction(nil), bad...)
	for i, f := range folds {
		var train, test []*rowPredictor
		for _, p := range preds {
			if keyOf(p.row) == f {
				test = append(test, p)
			} else {
				train = append(train, p)
			}
		}
		fo := opt
		if opt.Progress != nil {
			fo.Progress = func(stage string, done, total int) {
				opt.Progress(fmt.Sprintf("fold %d of %d (%s left out): %s", i+1, len(folds), f, stage), done, total)
			}
		}
		cal, _, err := calibratePreds(ctx, train, nil, fo)
		if err != nil {
			return CrossValidation{}, fmt.Errorf("measured: fold %s: %w", f, err)
		}
		bl, err := fitBaseline(ctx, train)
		if err != nil {
			return CrossValidation{}, fmt.Errorf("measured: fold %s: baseline: %w", f, err)
		}
		for _, p := range test {
			e, prov := cal.LookupEntry(p.row.GPU, p.row.Engine)
			t, o := p.predict(e.Efficiency, e.Serving)
			out = append(out, RowPrediction{Row: p.row, TTFTms: t * 1e3, TPOTms: o * 1e3, Provenance: prov})
			c := bl[p.row.Engine]
			t, o = p.baseline(c[0], c[1])
			base = append(base, RowPrediction{Row: p.row, TTFTms: t * 1e3, TPOTms: o * 1e3, Provenance: "two-parameter roofline"})
		}
	}
	return CrossValidation{Cells: cellMAPEs(out), Preds: out, BaselineCells: cellMAPEs(base), BaselinePreds: base}, nil
}

// EngineBias is the direction of one engine's errors: the share of its
// predicted rows whose TTFT (TPOT) is predicted longer than measured
// ("too slow"); the rest are predicted too fast or exact.
type EngineBias struct {
	Engine Engine
	// Rows is the engine's predicted rows.
	Rows int
	// SlowTTFT and SlowTPOT are fractions in [0, 1].
	SlowTTFT, SlowTPOT float64
}

// Bias returns, per engine with predicted rows in preds (in the engines'
// order), the share of rows predicted too slow.
func Bias(preds []RowPrediction) []EngineBias {
	by := map[Engine]*EngineBias{}
	for _, p := range preds {
		if p.Reason != "" {
			continue
		}
		b := by[p.Row.Engine]
		if b == nil {
			b = &EngineBias{Engine: p.Row.Engine}
			by[p.Row.Engine] = b
		}
		b.Rows++
		if p.TTFTms > p.Row.TTFTms {
			b.SlowTTFT++
		}
		if p.TPOTms > p.Row.TPOTms {
			b.SlowTPOT++
		}
	}
	out := make([]EngineBias, 0, len(by))
	for _, b := range by {
		b.SlowTTFT /= float64(b.Rows)
		b.SlowTPOT /= float64(b.Rows)
		out = append(out, *b)
	}
	slices.SortFunc(out, func(a, b EngineBias) int { return int(a.Engine) - int(b.Engine) })
	return out
}

// PooledMAPE returns the TTFT and TPOT MAPEs of the overall line of cells
// (PooledCell) and whether there is one.
func PooledMAPE(cells []CellMAPE) (ttft, tpot float64, ok bool) {
	c, ok := PooledCell(cells)
	return c.TTFT, c.TPOT, ok
}

// PooledCell returns the overall line of cells (the MAPEs over every
// predicted row, pooled) and whether there is one.
func PooledCell(cells []CellMAPE) (CellMAPE, bool) {
	for _, c := range cells {
		if c.All {
			return c, true
		}
	}
	return CellMAPE{}, false
}

// PooledShare is one cell's share of the pooled MAPE: the points of the
// pooled TTFT and TPOT MAPE its rows' errors make (rows × the cell's
// MAPE / every predicted row), so the shares of all cells sum to the
// pooled figures.
type PooledShare struct {
	Cell       Cell
	Rows       int
	TTFT, TPOT float64 // points of the pooled MAPE, percent
}

// PooledShares returns every cell's share of the pooled MAPE of cells
// (the overall line excluded), largest TTFT share first (ties: TPOT
// share, then the cell's name), and the number of rows pooled.
func PooledShares(cells []CellMAPE) ([]PooledShare, int) {
	n := 0
	for _, c := range cells {
		if !c.All {
			n += c.Rows
		}
	}
	if n == 0 {
		return nil, 0
	}
	var out []PooledShare
	for _, c := range cells {
		if c.All || c.Rows == 0 {
			continue
		}
		w := float64(c.Rows) / float64(n)
		out = append(out, PooledShare{Cell: c.Cell, Rows: c.Rows, TTFT: c.TTFT * w, TPOT: c.TPOT * w})
	}
	slices.SortStableFunc(out, func(a, b PooledShare) int {
		if a.TTFT != b.TTFT {
			return cmp.Compare(b.TTFT, a.TTFT)
		}
		if a.TPOT != b.TPOT {
			return cmp.Compare(b.TPOT, a.TPOT)
		}
		return strings.Compare(a.Cell.String(), b.Cell.String())
	})
	return out, n
}
