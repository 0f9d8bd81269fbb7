package measured

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"

	"splitplan/arch"
	"splitplan/evaluator/perf/analytic"
	"splitplan/hw"
	"splitplan/memory"
)

// Prediction is the predicted outcome of one benchmark run.
type Prediction struct {
	// TTFTms and TPOTms are the predicted mean time to first token and time
	// per output token in milliseconds.
	TTFTms, TPOTms float64
	// Provenance says where the efficiencies came from (Lookup).
	Provenance string
}

// ErrUnpredictable marks a row the predictor cannot simulate (unknown
// architecture or GPU, no concurrency); errors.Is matches it and the
// message gives the reason.
var ErrUnpredictable = errors.New("unpredictable row")

// errUnphysical marks a row whose measurement beats physics
// (measuredPhysical); RowPrediction.Unphysical reports it.
var errUnphysical = errors.New("measured faster than physics")

// errPrefillRate marks an unphysical row whose clients sent prompts
// faster than its GPU prefills them (measuredPhysical);
// RowPrediction.PrefillBound reports it.
var errPrefillRate = errors.New("prompts sent faster than the GPU prefills them")

// EngineBatching returns the batching an engine applies by default on a
// GPU with memGiB of memory, for prompts of isl tokens (see doc.go for the
// sources of the defaults).
func EngineBatching(e Engine, memGiB float64, isl int) Batching {
	switch e {
	case SGLang:
		budget := 8192
		if memGiB >= 160 {
			budget = 16384
		}
		return Batching{TokenBudget: budget, MaxRunning: 4096, Chunked: true}
	case TRTLLM:
		return Batching{TokenBudget: max(8192, isl), MaxRunning: 2048, MixDecodes: true}
	default:
		return Batching{TokenBudget: max(8192, 2*isl), MaxRunning: 1024, Chunked: true, MixDecodes: true}
	}
}

// rowPrecisions returns the weight precision the iteration model charges
// (the experts' for MoE models, else the GEMMs', else the precision column;
// bf16 when all are empty, mxfp4 for gpt-oss which ships so) and the
// KV-cache precision (fp8 when the weights are fp8 or fp4, else bf16).
func rowPrecisions(r Row, a arch.Arch) (weight, kv arch.Precision, err error) {
	cands := []string{r.GEMMQuant, r.Precision}
	if a.IsMoE() {
		cands = []string{r.MoEQuant, r.GEMMQuant, r.Precision}
	}
	name := ""
	for _, c := range cands {
		if c != "" {
			name = c
			break
		}
	}
	if name == "" {
		if strings.Contains(strings.ToLower(r.Model), "gpt-oss") {
			name = "fp4"
		} else {
			name = "bf16"
		}
	}
	weight, err = arch.ParsePrecision(name)
	if err != nil {
		return 0, 0, err
	}
	return weight, weight.KVCache(), nil
}

func atLeast1(v int) int { return max(v, 1) }

// shapeOf returns an instance layout from the CSV's degrees: attention TP
// × DP GPUs, experts over EP (1 when absent).
func shapeOf(p Parallel) workerShape {
	return workerShape{TP: atLeast1(p.TP), DP: atLeast1(p.AttentionDP), EP: atLeast1(p.MoEEP)}
}

// maxNVLinkGPUs is the widest instance predicted on a rack-scale NVLink
// system (GB200, GB300), whose nodes of 4 share one NVLink domain.
const maxNVLinkGPUs = 8

// nvlinkNode returns the GPUs of the one node g's NVLink domain spans
// (H100, H200, B200, B300: 8), or 0 where the domain spans nodes, their
// link as fast as NVLink (a GB200 or GB300 rack).
func nvlinkNode(g hw.GPU) int {
	if g.InterNodeGBs >= g.IntraNodeGBs {
		return 0
	}
	return g.GPUsPerNode
}

// checkLayout rejects layouts the model cannot credibly represent: an
// instance whose GPUs (the larger of tp × attention dp and moe_tp × moe_ep)
// span several nodes of a GPU whose nodes are joined by a slower link than
// NVLink (H100, H200, B200, B300: 8 per node), or more than maxNVLinkGPUs
// on a rack-scale system (nvlinkNode). Such rows (DeepSeek at tp 12–72 on
// GB200, 16-GPU disaggregated workers on H100) run wide tensor/expert
// parallelism across nodes, which package analytic costs as all-reduces
// over the slowest link without the multi-node algorithms (and, fitted
// per pair, with one FlatLatency for 8 and 72 GPUs alike): not credible
// to fit. (Layouts written as products of their degrees, tp8_ep8 as
// tp_size 64, are read as their runs before this check: Parallel.read.)
func checkLayout(p Parallel, g hw.GPU) error {
	world := max(atLeast1(p.TP)*atLeast1(p.AttentionDP), atLeast1(p.MoETP)*atLeast1(p.MoEEP))
	limit := g.GPUsPerNode
	if nvlinkNode(g) == 0 {
		limit = max(limit, maxNVLinkGPUs)
	}
	if world > limit {
		return fmt.Errorf("layout tp %d × attention dp %d, moe tp %d × ep %d spans %d GPUs, more than the %d of one %s NVLink domain modelled (wide and multi-node layouts are not modelled)",
			p.TP, p.AttentionDP, p.MoETP, p.MoEEP, world, limit, g.Name)
	}
	if p.PP > 1 {
		return fmt.Errorf("pipeline parallelism %d is not modelled", p.PP)
	}
	return nil
}

// rowPredictor predicts one row for any efficiencies; it holds everything
// that does not depend on them (the schedule, the models).
type rowPredictor struct {
	row Row
	// layers is the model's layers (LayerOverheadS is per layer).
	layers float64
	// ttft and tpot are, for an agg row, the engine's TTFT and TPOT
	// (before the serving terms) with the physics at Physics, linear in
	// the engine terms; roof the schedule's roofline work (baseline).
	ttft, tpot linearTime
	roof       [4]float64
	// phys and physPrefill are the decode (or agg) and prefill models at
	// Physics without engine terms; peak and peakPrefill the same at the
	// spec sheet's peaks (the baseline's work).
	phys, physPrefill *analytic.Model
	peak, peakPrefill *analytic.Model
	// clients is the closed-loop clients of one rank (agg) or of one
	// decode rank (disagg).
	clients float64
	// promptTokens is the benchmark's mean prompt length (PromptTokenS).
	promptTokens float64
	agg          *schedule
	model        *iterModel // agg, or the decode side of disagg
	// disagg
	prefill                    *iterModel
	prefillWorkers, decWorkers int
	prefillBatch               int
	// decodeSlots is the requests a decode rank runs at once, as the
	// run's recipe sets it (disaggRecipe.DecodeMaxBatch; 0: no limit
	// known): clients beyond the decode ranks' slots wait for one.
	decodeSlots     float64
	kvTransferBytes float64
	transferGBs     float64
}

// newRowPredictor prepares a row, or says why it cannot be predicted.
func newRowPredictor(ctx context.Context, r Row) (*rowPredictor, error) {
	a, err := arch.Lookup(r.Model)
	if err != nil {
		return nil, fmt.Errorf("%w: model %s has no architecture", ErrUnpredictable, r.Model)
	}
	g, err := hw.Lookup(r.GPU)
	if err != nil {
		return nil, fmt.Errorf("%w: GPU %s has no spec sheet", ErrUnpredictable, r.GPU)
	}
	if r.Concurrency <= 0 {
		return nil, fmt.Errorf("%w: no concurrency given", ErrUnpredictable)
	}
	weight, kv, err := rowPrecisions(r, a)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrUnpredictable, err)
	}
	// The run's launch script, where known, sets the batching and the
	// memory (recipe.go).
	rc := recipeOf(r)
	if rc.bf16KV {
		kv = arch.BF16
	}
	b := rc.batching(EngineBatching(r.Engine, g.MemoryGiB, r.InputTokens))
	expert := rc.moePath(r, a, g, weight)
	p := &rowPredictor{row: r, layers: float64(a.Layers), promptTokens: benchMeanLength(r.InputTokens)}
	if r.Mode == Agg {
		if err := checkLayout(r.Agg, g); err != nil {
			return nil, fmt.Errorf("%w: %v", ErrUnpredictable, err)
		}
		shape := shapeOf(r.Agg)
		if p.model, err = newIterModel(a, g, shape, weight, kv, rc.memory, expert); err != nil {
			return nil, fmt.Errorf("%w: %v", ErrUnpredictable, err)
		}
		// Attention-DP ranks run their iterations in lockstep (the MoE
		// layers exchange their tokens), so the group is scheduled as one
		// engine with DP times the clients, token budget and running limit,
		// and each iteration lasts as long as its busiest rank's share
		// (rankStep).
		// The KV cache bounds the running requests: TensorRT-LLM reserves
		// a request's whole context up front (GUARANTEED_NO_EVICT), vLLM
		// and SGLang admit on the prompt and hold isl + osl/2 tokens on
		// average in steady state.
		// The lengths are the benchmark's mean ones (benchMeanLength).
		isl, osl := benchMeanLength(r.InputTokens), benchMeanLength(r.OutputTokens)
		perReq := int64(math.Ceil(isl + osl/2))
		if r.Engine == TRTLLM {
			perReq = int64(math.Ceil(isl + osl))
		}
		km, err := p.model.model(analytic.DefaultEfficiency)
		if err != nil {
			return nil, fmt.Errorf("%w: %v", ErrUnpredictable, err)
		}
		kvCap := km.KVCapacityTokens()
		fit := kvCap / perReq
		if fit < 1 {
			return nil, fmt.Errorf("%w: the KV cache (%d tokens per rank) cannot hold one request of %d tokens", ErrUnpredictable, kvCap, perReq)
		}
		b.MaxRunning = int(min(int64(b.MaxRunning), fit))
		p.clients = float64(r.RankClients())
		clients := r.RankClients() * shape.DP
		b.TokenBudget *= shape.DP
		b.MaxRunning *= shape.DP
		if p.agg, err = simulateSchedule(ctx, clients, r.InputTokens, r.OutputTokens, shape.DP, b); err != nil {
			if ctx.Err() != nil {
				return nil, err
			}
			return nil, fmt.Errorf("%w: %v", ErrUnpredictable, err)
		}
		if err := p.frozen(); err != nil {
			return nil, fmt.Errorf("%w: %v", ErrUnpredictable, err)
		}
		return p, nil
	}
	if r.Prefill.Workers <= 0 || r.Decode.Workers <= 0 {
		// Without the pool sizes the prefill queue (TTFTs of up to two
		// minutes in these rows) and the decode ranks' share of the
		// clients are unknown; fitting them lets the queueing swamp the
		// efficiencies (it drove compute to its floor).
		return nil, fmt.Errorf("%w: disaggregated run without prefill/decode worker counts", ErrUnpredictable)
	}
	for _, w := range []Parallel{r.Prefill.Parallel, r.Decode.Parallel} {
		if err := checkLayout(w, g); err != nil {
			return nil, fmt.Errorf("%w: %v", ErrUnpredictable, err)
		}
	}
	ps, ds := shapeOf(r.Prefill.Parallel), shapeOf(r.Decode.Parallel)
	if p.prefill, err = newIterModel(a, g, ps, weight, kv, memory.Settings{}, expert); err != nil {
		return nil, fmt.Errorf("%w: prefill: %v", ErrUnpredictable, err)
	}
	if p.model, err = newIterModel(a, g, ds, weight, kv, memory.Settings{}, expert); err != nil {
		return nil, fmt.Errorf("%w: decode: %v", ErrUnpredictable, err)
	}
	p.prefillWorkers, p.decWorkers = atLeast1(r.Prefill.Workers), atLeast1(r.Decode.Workers)
	meanISL := benchMeanLength(r.InputTokens)
	p.prefillBatch = max(1, int(float64(b.TokenBudget)/meanISL))
	if r.Prefill.BatchSize > 0 {
		p.prefillBatch = min(p.prefillBatch, r.Prefill.BatchSize)
	}
	p.clients = float64(r.Concurrency) / float64(p.decWorkers*ds.DP)
	if d, ok := disaggRecipeOf(r); ok {
		p.decodeSlots = d.decodeSlots(r, ds.DP)
		if k := d.prefillBatch(r, meanISL); k > 0 {
			p.prefillBatch = k
		}
	}
	p.kvTransferBytes = float64(a.KVBytesForContext(kv, int64(math.Round(meanISL))))
	p.transferGBs = g.InterNodeGBs
	if err := p.frozen(); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrUnpredictable, err)
	}
	return p, nil
}

// measuredPhysical checks an agg row's measurement against physics, and
// validation and the fit leave out, with the reason, a row that beats it:
//   - its time per output token cannot beat the spec sheet's roofline of
//     the batches the schedule runs (every FLOP at the dense peak, every
//     byte at the HBM bandwidth). A row that does ran fewer requests at
//     once than its clients, under a limit the row does not record, and
//     no schedule of its clients predicts it;
//   - its clients cannot send prompts faster than the GPU prefills them:
//     a rank's clients / (TTFT + (output − 1) × TPOT), the closed loop's
//     request rate at the mean lengths, times the kernel layer's time for
//     one whole prompt alone (its per-GPU share, no all-reduce, no engine
//     term) is the share of the time the rank would spend prefilling with
//     nothing else to do, and may pass 1 by an engine's faster kernels
//     (PrefillAllowance) but no more. A row beyond it did not prefill its
//     whole prompts: a prefix cache served part of them (vLLM and SGLang
//     cache prefixes by default), which the row does not record
//     (errPrefillRate).
func (p *rowPredictor) measuredPhysical() error {
	if p.agg == nil || !(p.row.TPOTms > 0) {
		return nil
	}
	if floor := max(p.roof[2], p.roof[3]) * 1e3; p.row.TPOTms < floor {
		return fmt.Errorf("%w: %w: measured TPOT %.3g ms is below the spec-sheet floor %.3g ms of the batches %d clients keep running: the run held fewer requests at once (a limit the row does not record)",
			ErrUnpredictable, errUnphysical, p.row.TPOTms, floor, p.row.Concurrency)
	}
	if !(p.row.TTFTms > 0) {
		return nil
	}
	// The mean output length is at least 1 (benchMeanLength): the cycle
	// is positive with the TTFT.
	isl := benchMeanLength(p.row.InputTokens)
	cycle := E2Ems(p.row, p.row.TTFTms, p.row.TPOTms) / 1e3
	prompt := p.phys.Breakdown(wholePrompts(1, isl)).Kernel.Total()
	if busy := p.clients / cycle * prompt; busy > PrefillAllowance {
		return fmt.Errorf("%w: %w: %w: %d clients a rank at %.4g s a request send %.4g prompts/s of %.0f tokens, each %.3g ms of the kernel layer's prefill alone (per-GPU share, no all-reduce): %.2f× what the GPU can prefill with nothing else to do, beyond the %.2f× an engine's kernels may gain; the run did not prefill its whole prompts (a prefix cache the row does not record)",
			ErrUnpredictable, errUnphysical, errPrefillRate, int(p.clients), cycle, p.clients/cycle, isl, prompt*1e3, busy, PrefillAllowance)
	}
	return nil
}

// PrefillAllowance is how much faster than the kernel layer an engine's
// prefill may run (measuredPhysical): its GEMMs are cuBLAS's and its
// attention PyTorch's flash kernel, within 3–11% of fp8 and bf16 prefills
// measured on an H100 and an H200 (data/gpu-runs), where an engine may
// fuse the norms and casts and run a newer flash attention.
const PrefillAllowance = 1.25

// checkedPredictor is newRowPredictor for validation and the fit, which
// also leave out a row whose measurement beats physics (measuredPhysical)
// and a row that repeats the measurement of a row predicted before it
// (seen, sameRun).
//
// A row that ran with speculative decoding (speculativeRuns, or a copy
// of one's measurement: spec) is left out too, after the repeat check so
// that its own copies are counted as repeats of it.
func checkedPredictor(ctx context.Context, r Row, seen *sameRun, spec speculativeKeys) (*rowPredictor, error) {
	p, err := newRowPredictor(ctx, r)
	if err == nil {
		err = p.measuredPhysical()
	}
	if err == nil {
		err = seen.check(r)
	}
	if err == nil {
		err = spec.check(r)
	}
	return p, err
}

// errDuplicate marks a row that repeats an earlier row's measurement
// (sameRun); RowPrediction.Duplicate reports it.
var errDuplicate = errors.New("the same measurement as an earlier row")

// sameRun finds rows that are one benchmark run recorded more than once.
// The shipped data imports InferenceX's results from several snapshots
// (source_file=2026-03-25.csv, 2026-04-06.csv, db-dump/...), and some
// runs under both DeepSeek-R1 and DeepSeek-V3 (one architecture) or with
// and without an engine version, so many of the rows predicted repeat an
// earlier row's GPU, engine and both measured means to 12 significant
// digits (most to every digit; some differ in the last bit, parsed
// through another path), with the same prediction. The gap-analysis
// files (kimi-k2.5-gap-analysis.csv, qwen3.5-397b-gap-analysis.csv)
// record runs of those snapshots again with both means rounded to 0.01
// ms. Two runs never agree that closely in both means, so such rows are
// one measurement: the first predicted (in file order) is kept and the
// others are left out of the errors and of any fit, which would otherwise
// count that run two or three times (and make two cells of one set of
// runs). Two rows written to full precision that agree only to 0.01 ms
// are not merged. Copies recorded with a layout that cannot be predicted
// keep their own reason.
type sameRun struct {
	// exact holds the rows checked by their means to 12 significant
	// digits; hundredths by their means rounded to hundredths of a
	// millisecond (the first of each), and rounded the same for the rows
	// whose both means are written to at most two decimals.
	exact, hundredths, rounded map[runKey]Row
}

// runKey is what two records of one run share.
type runKey struct {
	gpu        string
	engine     Engine
	ttft, tpot string // the means to 12 significant digits, or in hundredths of a ms
}

// exactKey is r's GPU, engine and both means to 12 significant digits.
func exactKey(r Row) runKey {
	return runKey{gpu: r.GPU, engine: r.Engine,
		ttft: strconv.FormatFloat(r.TTFTms, 'g', 12, 64), tpot: strconv.FormatFloat(r.TPOTms, 'g', 12, 64)}
}

// hundredthsKey is r's GPU, engine and both means in hundredths of a
// millisecond, rounded.
func hundredthsKey(r Row) runKey {
	return runKey{gpu: r.GPU, engine: r.Engine,
		ttft: strconv.FormatFloat(math.Round(r.TTFTms*100), 'f', 0, 64), tpot: strconv.FormatFloat(math.Round(r.TPOTms*100), 'f', 0, 64)}
}

// inHundredths reports whether v (ms) is written to at most two decimals.
func inHundredths(v float64) bool {
	x := v * 100
	return math.Abs(x-math.Round(x)) < 1e-6*max(1, math.Abs(x))
}

// check returns an errDuplicate error when r repeats the measurement of
// a row checked before it, and otherwise remembers r. A row without both
// measurements is never a repeat.
func (s *sameRun) check(r Row) error {
	if s == nil {
		return nil
	}
	if first, how, ok := s.find(r); ok {
		return fmt.Errorf("%w: %w: TTFT %.6g ms and TPOT %.6g ms %s, as %s (line %d, %s): one run recorded twice, counted once",
			ErrUnpredictable, errDuplicate, r.TTFTms, r.TPOTms, how, first.ID, first.Line, first.Model)
	}
	s.add(r)
	return nil
}

// find returns the row remembered whose measurement r repeats, and how
// closely: to 12 digits, or to 0.01 ms where one of the two is written
// rounded (a rounded record repeats any row that rounds to it, a full one
// only a rounded record). A row without both measurements repeats none.
func (s *sameRun) find(r Row) (first Row, how string, ok bool) {
	if !(r.TTFTms > 0 && r.TPOTms > 0) {
		return Row{}, "", false
	}
	if first, ok = s.exact[exactKey(r)]; ok {
		return first, "to 12 digits", true
	}
	h := hundredthsKey(r)
	if inHundredths(r.TTFTms) && inHundredths(r.TPOTms) {
		first, ok = s.hundredths[h]
	} else {
		first, ok = s.rounded[h]
	}
	return first, "to 0.01 ms (one of them written rounded)", ok
}

// add remembers r's measurement (the first row of each rounded key).
func (s *sameRun) add(r Row) {
	if !(r.TTFTms > 0 && r.TPOTms > 0) {
		return
	}
	if s.exact == nil {
		s.exact, s.hundredths, s.rounded = map[runKey]Row{}, map[runKey]Row{}, map[runKey]Row{}
	}
	h := hundredthsKey(r)
	s.exact[exactKey(r)] = r
	if _, seen := s.hundredths[h]; !seen {
		s.hundredths[h] = r
	}
	if _, seen := s.rounded[h]; !seen && inHundredths(r.TTFTms) && inHundredths(r.TPOTms) {
		s.rounded[h] = r
	}
}

// unpredicted is r's entry when err keeps it from being predicted.
func unpredicted(r Row, err error) RowPrediction {
	return RowPrediction{Row: r, Reason: reason(err), Unphysical: errors.Is(err, errUnphysical), PrefillBound: errors.Is(err, errPrefillRate),
		Duplicate: errors.Is(err, errDuplicate), Speculative: errors.Is(err, errSpeculative)}
}

// peakEfficiency runs every roofline term at the spec sheet's peaks: the
// baseline's work (Work.ComputeS, MemoryS) is FLOPs / peak and bytes /
// bandwidth.
var peakEfficiency = analytic.Efficiency{Compute: 1, Memory: 1, Comm: 1, FlatLatency: 1}

// frozen prepares what does not change while the engine terms are
// fitted: the models at Physics without engine terms and at the peaks,
// and for an agg row the schedule's TTFT and TPOT as linear functions of
// the engine terms and its roofline work.
func (p *rowPredictor) frozen() error {
	var err error
	phys := withEngineTerms(Physics, EngineTerms{})
	if p.phys, err = p.model.model(phys); err != nil {
		return err
	}
	if p.peak, err = p.model.model(peakEfficiency); err != nil {
		return err
	}
	if p.prefill != nil {
		if p.physPrefill, err = p.prefill.model(phys); err != nil {
			return err
		}
		if p.peakPrefill, err = p.prefill.model(peakEfficiency); err != nil {
			return err
		}
	}
	if p.agg == nil {
		return nil
	}
	sc := p.agg
	var wait, dec linearTime
	for i := range sc.Steps {
		st := &sc.Steps[i]
		if st.WaitReqIters > 0 {
			wait.add(p.phys.BatchTime(st.Wait), engineUnits(st.Wait, p.layers), st.WaitReqIters)
			w := p.peak.BatchWork(st.Wait)
			p.roof[0] += st.WaitReqIters * w.ComputeS
			p.roof[1] += st.WaitReqIters * w.MemoryS
		}
		if st.DecodeWeight > 0 {
			dec.add(p.phys.BatchTime(st.Decode), engineUnits(st.Decode, p.layers), st.DecodeWeight)
			w := p.peak.BatchWork(st.Decode)
			p.roof[2] += st.DecodeWeight * w.ComputeS
			p.roof[3] += st.DecodeWeight * w.MemoryS
		}
	}
	p.ttft = wait.scaled(1 / float64(sc.Measured))
	p.roof[0] /= float64(sc.Measured)
	p.roof[1] /= float64(sc.Measured)
	if sc.MeasuredTPOT > 0 {
		p.tpot = dec.scaled(1 / float64(sc.MeasuredTPOT))
		p.roof[2] /= float64(sc.MeasuredTPOT)
		p.roof[3] /= float64(sc.MeasuredTPOT)
	}
	return nil
}

// linearTime is a time in seconds that is linear in the engine terms:
// Phys + Units · terms.
type linearTime struct {
	Phys  float64
	Units [4]float64
}

func (l *linearTime) add(phys float64, units [4]float64, w float64) {
	l.Phys += w * phys
	for i := range units {
		l.Units[i] += w * units[i]
	}
}

func (l linearTime) scaled(f float64) linearTime {
	l.Phys *= f
	for i := range l.Units {
		l.Units[i] *= f
	}
	return l
}

// at returns the time with engine terms th, each × h.
func (l linearTime) at(th EngineTerms, h float64) float64 {
	var e float64
	for i := range th {
		e += l.Units[i] * th[i]
	}
	return l.Phys + h*e
}

// engineUnits returns how many of each engine term an iteration of b
// pays (analytic.Model.BatchTime): one per iteration, one per layer, one
// when it carries prompt tokens, one per sequence; none for no work.
func engineUnits(b analytic.Batch, layers float64) [4]float64 {
	p, d := max(b.PromptTokens, 0), max(b.Decodes, 0)
	if p+d == 0 {
		return [4]float64{}
	}
	seqs := float64(max(b.Prompts, 0) + d)
	if p > 0 && b.Prompts <= 0 {
		seqs++
	}
	prompt := 0.0
	if p > 0 {
		prompt = 1
	}
	return [4]float64{1, layers, prompt, seqs}
}

// predictTerms returns TTFT and TPOT in seconds with the physics at
// Physics, the engine terms th and serving terms sv, every host-side time
// × h (HostSpeed): the fit's fast path, equal to predict with the same
// efficiencies.
func (p *rowPredictor) predictTerms(th EngineTerms, sv Serving, h float64) (ttftS, tpotS float64) {
	if p.agg != nil {
		ttftS, tpotS = p.ttft.at(th, h), p.tpot.at(th, h)
	} else {
		iter := func(m *analytic.Model) func(analytic.Batch) float64 {
			return func(b analytic.Batch) float64 {
				u := engineUnits(b, p.layers)
				return m.BatchTime(b) + h*(u[0]*th[0]+u[1]*th[1]+u[2]*th[2]+u[3]*th[3])
			}
		}
		ttftS, tpotS = p.disagg(iter(p.physPrefill), iter(p.phys), analytic.NCCLEfficiency)
	}
	return p.withServing(ttftS, tpotS, sv, h), tpotS
}

// withServing is the row's TTFT ttftS with the serving latency sv adds
// (Serving), its host-side times × h: per request, the iterations waited
// at the TPOT, per client of the rank and per prompt token.
func (p *rowPredictor) withServing(ttftS, tpotS float64, sv Serving, h float64) float64 {
	return ttftS + h*sv.RequestOverheadS + sv.WaitIterations*tpotS + h*sv.ClientOverheadS*p.clients + h*sv.PromptTokenS*p.promptTokens
}

// baseline returns the two-parameter roofline's TTFT and TPOT in seconds
// (fitBaseline): every iteration of the same schedule takes a × its
// FLOPs at peak + b × its bytes at peak bandwidth, with no link, engine
// or serving time.
func (p *rowPredictor) baseline(a, b float64) (ttftS, tpotS float64) {
	if p.agg != nil {
		return a*p.roof[0] + b*p.roof[1], a*p.roof[2] + b*p.roof[3]
	}
	iter := func(m *analytic.Model) func(analytic.Batch) float64 {
		return func(bt analytic.Batch) float64 {
			w := m.BatchWork(bt)
			return a*w.ComputeS + b*w.MemoryS
		}
	}
	return p.disagg(iter(p.peakPrefill), iter(p.peak), math.Inf(1))
}

// predict returns TTFT and TPOT in seconds.
func (p *rowPredictor) predict(eff analytic.Efficiency, sv Serving) (ttftS, tpotS float64) {
	ttftS, tpotS = p.engine(eff)
	return p.withServing(ttftS, tpotS, sv, 1), tpotS
}

// engine returns TTFT and TPOT in seconds as the engine's iterations give
// them, before the serving latency.
func (p *rowPredictor) engine(eff analytic.Efficiency) (ttftS, tpotS float64) {
	m, err := p.model.model(eff)
	if err != nil {
		return math.NaN(), math.NaN()
	}
	if p.agg != nil {
		return p.agg.times(m.BatchTime)
	}
	pm, err := p.prefill.model(eff)
	if err != nil {
		return math.NaN(), math.NaN()
	}
	return p.disagg(pm.BatchTime, m.BatchTime, eff.LinkFraction())
}

// disagg is the steady state of a disaggregated deployment (see doc.go):
// decode ranks each hold their share of the requests that are decoding;
// prefill ranks serve prompts in batches; the closed loop's cycle is TTFT
// plus the decode time, unless the prefill pool's capacity caps it.
// prefill and decode time one iteration of each pool; comm is the
// fraction of the link the KV transfer achieves (+Inf: no transfer time).
func (p *rowPredictor) disagg(prefill, decode func(analytic.Batch) float64, comm float64) (ttftS, tpotS float64) {
	r := p.row
	// The benchmark's mean lengths (benchMeanLength).
	isl, osl := benchMeanLength(r.InputTokens), benchMeanLength(r.OutputTokens)
	c := float64(r.Concurrency)
	batchS := func(b int) float64 { return prefill(wholePrompts(b, isl)) } // b whole prompts at once
	k := p.prefillBatch
	sBatch, s1 := batchS(k), batchS(1)
	preRanks := float64(p.prefillWorkers * p.prefill.w.DP)
	mu := preRanks * float64(k) / sBatch // prompts/s
	transfer := p.kvTransferBytes / (p.transferGBs * 1e9 * comm)
	decRanks := float64(p.decWorkers * p.model.w.DP)
	slots := decRanks * p.decodeSlots // (0: no limit known)
	decoding := c
	for range 30 {
		b := math.Max(1, math.Ceil(decoding/decRanks))
		if p.decodeSlots > 0 {
			b = math.Min(b, p.decodeSlots)
		}
		ctx := b * (isl + osl/2)
		tpotS = decode(analytic.Batch{Decodes: int(b), DecodeContextTokens: int64(ctx)})
		decodeS := (osl - 1) * tpotS
		base := s1 + transfer
		cycle := base + decodeS
		// At most slots requests decode at once: with more clients the
		// closed loop's cycle is at least c × decodeS / slots, the rest
		// of it spent waiting for a slot, which the first token waits
		// out too.
		slotCycle := 0.0
		if slots > 0 {
			slotCycle = c * decodeS / slots
		}
		lambda := c / math.Max(cycle, slotCycle)
		rho := lambda / mu
		if rho >= 1 {
			cycle = c / mu
			ttftS = math.Max(base, cycle-decodeS)
		} else {
			// Queueing for a prefill slot: M/D/1 waiting time.
			wait := rho / (2 * (1 - rho)) * sBatch
			if k > 1 {
				wait = batchedWait(lambda/preRanks, k, s1, batchS)
			}
			ttftS = base + math.Min(wait, c/mu)
			cycle = ttftS + decodeS
		}
		if slotCycle > cycle {
			cycle = slotCycle
			ttftS = cycle - decodeS
		}
		next := c * decodeS / cycle
		if math.Abs(next-decoding) < 0.5 {
			break
		}
		decoding = 0.5 * (decoding + next)
	}
	// The burst: every client sends its first request at once, so the
	// first of its benchRequestsPerClient requests waits on average half
	// the prefill pool's time for all the clients' prompts, c/μ.
	ttftS += c / mu / 2 / benchRequestsPerClient
	return ttftS, tpotS
}

// batchedWait is a prompt's wait for a prefill rank that runs batches of
// up to k prompts, prompts reaching it at lr a second, s1 its time for
// one prompt alone and s(b) for b at once: at light load it runs one at a
// time and a prompt waits behind another's as in an M/D/1 queue; once
// they come faster, each batch takes the prompts that arrived during the
// one before (b = lr × s(b), at most k) and a prompt waits out half of the
// running batch and then runs in the next, 1.5 s(b) in all where alone it
// takes s1. It is the lesser of the two (the M/D/1 wait alone where k is
// 1).
func batchedWait(lr float64, k int, s1 float64, s func(int) float64) float64 {
	md1 := math.Inf(1)
	if rho := lr * s1; rho < 1 {
		md1 = rho / (2 * (1 - rho)) * s1
	}
	if k <= 1 {
		return md1
	}
	b, sb := 1, s1
	for range 8 {
		nb := min(k, max(1, int(math.Ceil(lr*sb))))
		if nb == b {
			break
		}
		b, sb = nb, s(nb)
	}
	return math.Min(md1, math.Max(0, 1.5*sb-s1))
}

// wholePrompts returns the batch of k whole prompts of isl tokens (rounded).
func wholePrompts(k int, isl float64) analytic.Batch {
	l := int(math.Round(isl))
	return analytic.Batch{PromptTokens: k * l, Prompts: k, PromptAttnPairs: float64(k) * analytic.AttnPairs(l, 0)}
}

// Predict simulates the benchmark a row describes with the efficiencies
// cal gives its GPU and engine. It returns an error wrapping
// ErrUnpredictable when the row cannot be simulated.
func Predict(r Row, cal Calibration) (Prediction, error) {
	p, err := newRowPredictor(context.Background(), r)
	if err != nil {
		return Prediction{}, fmt.Errorf("measured: row %s (line %d): %w", r.ID, r.Line, err)
	}
	return p.prediction(cal), nil
}

// prediction is the row's prediction with cal's efficiencies for its GPU
// and engine.
func (p *rowPredictor) prediction(cal Calibration) Prediction {
	e, prov := cal.LookupEntry(p.row.GPU, p.row.Engine)
	ttft, tpot := p.predict(e.Efficiency, e.Serving)
	return Prediction{TTFTms: ttft * 1e3, TPOTms: tpot * 1e3, Provenance: prov}
}
