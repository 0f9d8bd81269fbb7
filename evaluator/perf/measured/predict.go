package measured

import (
	"errors"
	"fmt"
	"math"
	"strings"

	"splitplan/arch"
	"splitplan/evaluator/perf/analytic"
	"splitplan/hw"
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

// checkLayout rejects layouts the model cannot credibly represent: an
// instance whose GPUs (the larger of tp × attention dp and moe_tp × moe_ep)
// span several nodes of a GPU whose nodes are joined by a slower link than
// NVLink (H100, H200, B200, B300: 8 per node), or more than maxNVLinkGPUs
// on a rack-scale system. Such rows (DeepSeek on "64" B200s, MiniMax on 16
// H100s, DeepSeek at tp 12–72 on GB200) either run wide tensor/expert
// parallelism across nodes, which package analytic costs as all-reduces
// over the slowest link without the multi-node algorithms (and, fitted
// per pair, with one FlatLatency for 8 and 72 GPUs alike), or record
// degrees inconsistent with the id (tp8_ep8 written as tp_size 64);
// neither is credible to fit.
func checkLayout(p Parallel, g hw.GPU) error {
	world := max(atLeast1(p.TP)*atLeast1(p.AttentionDP), atLeast1(p.MoETP)*atLeast1(p.MoEEP))
	limit := g.GPUsPerNode
	if g.InterNodeGBs >= g.IntraNodeGBs {
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
	// spec is the GPU's spec relative to the shared entries' reference.
	spec ratios
	// clients is the closed-loop clients of one rank (agg) or of one
	// decode rank (disagg).
	clients float64
	agg     *schedule
	model   *iterModel // agg, or the decode side of disagg
	// disagg
	prefill                    *iterModel
	prefillWorkers, decWorkers int
	prefillBatch               int
	kvTransferBytes            float64
	transferGBs                float64
}

// newRowPredictor prepares a row, or says why it cannot be predicted.
func newRowPredictor(r Row) (*rowPredictor, error) {
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
	b := EngineBatching(r.Engine, g.MemoryGiB, r.InputTokens)
	p := &rowPredictor{row: r, spec: specRatios(g)}
	if r.Mode == Agg {
		if err := checkLayout(r.Agg, g); err != nil {
			return nil, fmt.Errorf("%w: %v", ErrUnpredictable, err)
		}
		shape := shapeOf(r.Agg)
		if p.model, err = newIterModel(a, g, shape, weight, kv); err != nil {
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
		if p.agg, err = simulateSchedule(clients, r.InputTokens, r.OutputTokens, shape.DP, b); err != nil {
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
	if p.prefill, err = newIterModel(a, g, ps, weight, kv); err != nil {
		return nil, fmt.Errorf("%w: prefill: %v", ErrUnpredictable, err)
	}
	if p.model, err = newIterModel(a, g, ds, weight, kv); err != nil {
		return nil, fmt.Errorf("%w: decode: %v", ErrUnpredictable, err)
	}
	p.prefillWorkers, p.decWorkers = atLeast1(r.Prefill.Workers), atLeast1(r.Decode.Workers)
	meanISL := benchMeanLength(r.InputTokens)
	p.prefillBatch = max(1, int(float64(b.TokenBudget)/meanISL))
	if r.Prefill.BatchSize > 0 {
		p.prefillBatch = min(p.prefillBatch, r.Prefill.BatchSize)
	}
	p.clients = float64(r.Concurrency) / float64(p.decWorkers*ds.DP)
	p.kvTransferBytes = float64(a.KVBytesForContext(kv, int64(math.Round(meanISL))))
	p.transferGBs = g.InterNodeGBs
	return p, nil
}

// predict returns TTFT and TPOT in seconds.
func (p *rowPredictor) predict(eff analytic.Efficiency, sv Serving) (ttftS, tpotS float64) {
	ttftS, tpotS = p.engine(eff)
	return ttftS + sv.RequestOverheadS + sv.WaitIterations*tpotS + sv.ClientOverheadS*p.clients, tpotS
}

// engine returns TTFT and TPOT in seconds as the engine's iterations give
// them, before the serving latency.
func (p *rowPredictor) engine(eff analytic.Efficiency) (ttftS, tpotS float64) {
	if p.agg != nil {
		m, err := p.model.model(eff)
		if err != nil {
			return math.NaN(), math.NaN()
		}
		return p.agg.times(m.BatchTime)
	}
	return p.disagg(eff)
}

// disagg is the steady state of a disaggregated deployment (see doc.go):
// decode ranks each hold their share of the requests that are decoding;
// prefill ranks serve prompts in batches; the closed loop's cycle is TTFT
// plus the decode time, unless the prefill pool's capacity caps it.
func (p *rowPredictor) disagg(eff analytic.Efficiency) (ttftS, tpotS float64) {
	r := p.row
	// The benchmark's mean lengths (benchMeanLength).
	isl, osl := benchMeanLength(r.InputTokens), benchMeanLength(r.OutputTokens)
	c := float64(r.Concurrency)
	k := p.prefillBatch
	pm, err := p.prefill.model(eff)
	if err != nil {
		return math.NaN(), math.NaN()
	}
	dm, err := p.model.model(eff)
	if err != nil {
		return math.NaN(), math.NaN()
	}
	sBatch := pm.BatchTime(wholePrompts(k, isl))
	s1 := pm.BatchTime(wholePrompts(1, isl))
	mu := float64(p.prefillWorkers*p.prefill.w.DP*k) / sBatch // prompts/s
	transfer := p.kvTransferBytes / (p.transferGBs * 1e9 * eff.Comm)
	decRanks := float64(p.decWorkers * p.model.w.DP)
	decoding := c
	for range 30 {
		b := math.Max(1, math.Ceil(decoding/decRanks))
		ctx := b * (isl + osl/2)
		tpotS = dm.BatchTime(analytic.Batch{Decodes: int(b), DecodeContextTokens: int64(ctx)})
		decodeS := (osl - 1) * tpotS
		base := s1 + transfer
		cycle := base + decodeS
		lambda := c / cycle
		rho := lambda / mu
		if rho >= 1 {
			cycle = c / mu
			ttftS = math.Max(base, cycle-decodeS)
		} else {
			// Queueing for a prefill slot: M/D/1 waiting time.
			wait := rho / (2 * (1 - rho)) * sBatch
			ttftS = base + math.Min(wait, c/mu)
			cycle = ttftS + decodeS
		}
		next := c * decodeS / cycle
		if math.Abs(next-decoding) < 0.5 {
			break
		}
		decoding = 0.5 * (decoding + next)
	}
	return ttftS, tpotS
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
	p, err := newRowPredictor(r)
	if err != nil {
		return Prediction{}, fmt.Errorf("measured: row %s (line %d): %w", r.ID, r.Line, err)
	}
	e, prov := cal.LookupEntry(r.GPU, r.Engine)
	ttft, tpot := p.predict(e.Efficiency, e.Serving)
	return Prediction{TTFTms: ttft * 1e3, TPOTms: tpot * 1e3, Provenance: prov}, nil
}
