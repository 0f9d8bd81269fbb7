package measured

import (
	"container/heap"
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"

	"splitplan/evaluator/perf/analytic"
)

// Batching is an engine's iteration-level scheduling policy as the
// simulator applies it.
type Batching struct {
	// TokenBudget is the most tokens one iteration processes (prompt
	// tokens plus one per decoding request when MixDecodes): vLLM's
	// max_num_batched_tokens, SGLang's chunked_prefill_size, TensorRT-LLM's
	// max_num_tokens.
	TokenBudget int
	// MaxRunning is the most requests admitted at once (vLLM max_num_seqs,
	// SGLang max_running_requests, TensorRT-LLM max_batch_size).
	MaxRunning int
	// Chunked says a prompt may be split over iterations (vLLM, SGLang);
	// otherwise a prompt runs whole, alone if it exceeds the budget
	// (TensorRT-LLM's default, chunked context off).
	Chunked bool
	// MixDecodes says decodes ride in the same iteration as prompt chunks
	// (vLLM V1, TensorRT-LLM in-flight batching); otherwise a prefill
	// iteration runs alone and stalls the decodes (SGLang without
	// --enable-mixed-chunk).
	MixDecodes bool
	// RecvInterval is SGLang's --scheduler-recv-interval N: with N > 1
	// the scheduler takes in new requests only at the start of an
	// iteration after a prompt iteration, or after N decode iterations
	// since it last did (SGLang's SchedulerRecvSkipper: each decode adds
	// 1 to a counter, anything else more than N); a request sent
	// meanwhile waits, its first token delayed. 0 or 1: every iteration.
	RecvInterval int
	// BalanceTimeout is TensorRT-LLM's attention_dp_config with
	// enable_balance and timeout_iters T: with attention DP over dp
	// ranks, prompts are held back until every rank has one (taken here
	// as dp prompts waiting) or T iterations have passed without (a
	// counter that runs, and resets, whether or not a prompt waits), or a
	// rank has no decodes. 0: no balancing.
	BalanceTimeout int
	// BalanceBatchWait is the balancer's batching_wait_iters W: once every
	// rank has a prompt and every rank decodes, the prompts are held W
	// more iterations before they run.
	BalanceBatchWait int
}

// The benchmark the rows ran (SemiAnalysis InferenceX's copy of vLLM's
// benchmark_serving.py, see doc.go): benchRequestsPerClient requests per
// client (--num-prompts 10 × concurrency), every one measured, each of
// input and output lengths drawn uniformly from the integers
// [⌊benchRangeRatio × L⌋, L] (--random-range-ratio 0.8).
const (
	benchRequestsPerClient = 10
	benchRangeRatio        = 0.8
)

// benchLengthRange returns the lengths a request of nominal length l may
// have: [⌊benchRangeRatio × l⌋, l], at least 1.
func benchLengthRange(l int) (lo, hi int) {
	return max(1, int(benchRangeRatio*float64(l))), max(1, l)
}

// benchMeanLength returns the mean length of requests of nominal length l.
func benchMeanLength(l int) float64 {
	lo, hi := benchLengthRange(l)
	return float64(lo+hi) / 2
}

// benchLengths draws n requests' input and output lengths from a generator
// seeded by the row's clients and nominal lengths, so a row's schedule is
// the same on every run.
func benchLengths(n, clients, isl, osl int) (inputs, outputs []int) {
	rng := rand.New(rand.NewPCG(uint64(clients)<<32|uint64(isl), uint64(osl)^0x5eed))
	iLo, iHi := benchLengthRange(isl)
	oLo, oHi := benchLengthRange(osl)
	inputs, outputs = make([]int, n), make([]int, n)
	for i := range n {
		inputs[i] = iLo + rng.IntN(iHi-iLo+1)
		outputs[i] = oLo + rng.IntN(oHi-oLo+1)
	}
	return inputs, outputs
}

// step is one or more engine iterations of one attention-DP rank, merged
// because they have the same decodes, the same prompts and about the same
// prompt tokens (stepKey), with their weights in the measured means. The
// iteration time is close to linear in the contexts and the prompt tokens
// within a step, so each weight is applied to its own weighted mean batch:
// Σ wₖ·time(batchₖ) ≈ (Σ wₖ)·time(Σ wₖ·batchₖ / Σ wₖ).
type step struct {
	// Count is the number of iterations merged.
	Count float64
	// WaitReqIters is, summed over the iterations, the measured requests
	// waiting for their first token during the iteration; Wait is the
	// iterations' batch averaged with those weights.
	WaitReqIters float64
	Wait         analytic.Batch
	// DecodeWeight is, summed over the iterations, Σ 1/(oᵢ − 1) over the
	// requests i that had their first token but not their last one (oᵢ
	// their output tokens), which weighs each iteration in the mean of the
	// requests' time per output token; Decode is the batch averaged with
	// those weights.
	DecodeWeight float64
	Decode       analytic.Batch
}

// schedule is the timing-free trace of one closed-loop benchmark: which
// iterations ran and how much each one delayed the measured requests.
// Clients send at iteration ends and the engine's choices depend on
// tokens, not times, so the sequence of iterations does not depend on how
// long they take, and one schedule serves every set of efficiencies.
type schedule struct {
	Steps []step
	// Measured is the number of measured requests (every request sent),
	// and MeasuredTPOT those of more than one output token, which the
	// benchmark's mean time per output token averages over.
	Measured, MeasuredTPOT int
	// Iterations is the number of engine iterations simulated, and
	// PromptTokens and DecodeTokens the prompt tokens and decodes they ran
	// (the whole group's, not the busiest rank's).
	Iterations                 int64
	PromptTokens, DecodeTokens int64
}

// stepKey groups iterations into one step: the rank's decodes and
// prompts exactly, its prompt tokens by promptBin.
type stepKey struct {
	decodes, prompts, promptBin int
}

// promptBin bins prompt tokens: exact up to 256, then 1/32 of an octave
// (about 2%).
func promptBin(tokens float64) int {
	if tokens <= 256 {
		return int(tokens)
	}
	return 256 + int(32*math.Log2(tokens/256))
}

// stepAcc accumulates the iterations of one step.
type stepAcc struct {
	count             float64
	wWait, wDec       float64
	waitFeat, decFeat [3]float64 // weighted sums of prompt tokens, pairs, context
	decodes, prompts  int
}

// rankIter is one iteration as one attention-DP rank sees it: prompt
// tokens, prompts and attention pairs, decodes and their summed context.
type rankIter struct {
	promptTokens, pairs, ctx float64
	prompts, decodes         int
}

// finishHeap is a min-heap of decoding requests keyed by the
// decode-iteration count at which they produce their last token (high 32
// bits) and their index (low 32 bits).
type finishHeap []uint64

func (h finishHeap) Len() int           { return len(h) }
func (h finishHeap) Less(i, j int) bool { return h[i] < h[j] }
func (h finishHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *finishHeap) Push(x any)        { *h = append(*h, x.(uint64)) }
func (h *finishHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

// Bounds that keep a schedule's simulation finite.
const (
	maxScheduleRequests   = 1 << 22
	maxScheduleIterations = 200_000_000
)

// simulateSchedule simulates the benchmark against one engine group of dp
// attention-DP ranks in lockstep with batching b (the group's budget and
// running limit): clients clients each sending benchRequestsPerClient
// requests of random lengths around isl and osl (benchLengths), all
// clients at once at the start, each completion releasing the next
// request (the benchmark's semaphore: requests go out in order). Every
// queue is FIFO. The steps describe the busiest rank's share of each
// iteration (rankShare). It stops with cctx's error once cctx is done.
func simulateSchedule(cctx context.Context, clients, isl, osl, dp int, b Batching) (*schedule, error) {
	if clients <= 0 || isl <= 0 || osl <= 0 || dp <= 0 {
		return nil, fmt.Errorf("clients %d, isl %d, osl %d, attention dp %d: expected positive values", clients, isl, osl, dp)
	}
	if b.TokenBudget <= 0 || b.MaxRunning <= 0 {
		return nil, fmt.Errorf("batching %+v: expected a positive token budget and running limit", b)
	}
	total := benchRequestsPerClient * clients
	if total > maxScheduleRequests {
		return nil, fmt.Errorf("%d clients: more than the %d requests simulated", clients, maxScheduleRequests)
	}
	inputs, outputs := benchLengths(total, clients, isl, osl)
	sc := &schedule{Measured: total}
	for _, o := range outputs {
		if o > 1 {
			sc.MeasuredTPOT++
		}
	}
	accs := map[stepKey]*stepAcc{}
	record := func(it rankIter, count, wait, dec, ctxSlope float64) {
		// ctxSlope is the growth of the rank's context per iteration over
		// the count iterations (a decode-only stretch).
		k := stepKey{it.decodes, it.prompts, promptBin(it.promptTokens)}
		a := accs[k]
		if a == nil {
			a = &stepAcc{decodes: it.decodes, prompts: it.prompts}
			accs[k] = a
		}
		meanCtx := it.ctx + ctxSlope*(count-1)/2
		a.count += count
		a.wWait += wait * count
		a.wDec += dec * count
		f := [3]float64{it.promptTokens, it.pairs, meanCtx}
		for i := range f {
			a.waitFeat[i] += wait * count * f[i]
			a.decFeat[i] += dec * count * f[i]
		}
	}

	issued := clients // the burst: every client sends at the start
	wLo := 0          // waiting for a first token: [wLo, issued)
	headDone := 0     // prompt tokens of request wLo already prefilled
	var dec finishHeap
	decW := 0.0       // Σ 1/(oᵢ−1) over the decoding requests
	var decIter int64 // iterations that carried decodes so far
	var ctx int64     // context tokens of the decoding requests
	done := 0
	// received: the requests [wLo, received) the scheduler has taken in
	// (all of them without a receive interval); recvCount: SGLang's
	// counter, decode iterations since it last took requests in.
	received, recvCount := issued, 0
	lastPrompt := false // the last iteration ran prompt tokens
	balance := b.BalanceTimeout > 0 && dp > 1
	balanceCount := 0 // iterations since the balancer last let prompts through
	batchCount := 0   // iterations the balancer has held prompts every rank has
	var chunks []chunk
	for loops := 0; done < total; loops++ {
		if loops%4096 == 4095 {
			if err := cctx.Err(); err != nil {
				return nil, err
			}
		}
		if b.RecvInterval <= 1 {
			received = issued
		} else if loops > 0 {
			if lastPrompt {
				recvCount = b.RecvInterval // a prompt iteration's weight exceeds any interval
			} else {
				recvCount++
			}
			if recvCount >= b.RecvInterval || len(dec) == 0 {
				// (an idle engine's loops spin through the count at once)
				received, recvCount = issued, 0
			}
		}
		decoding := len(dec)
		waiting := issued - wLo // measured as waiting, taken in or not
		hold := false
		if balance {
			if received-wLo >= dp && decoding < b.MaxRunning {
				balanceCount = 0 // every rank has a prompt
				if decoding >= dp && batchCount < b.BalanceBatchWait {
					batchCount++ // and waits for more (every rank decodes)
					hold = true
				} else {
					batchCount = 0
				}
			} else if balanceCount++; balanceCount >= b.BalanceTimeout || decoding < dp {
				balanceCount = 0 // timed out, or a rank has no decodes
			} else {
				hold = true
			}
		}
		prefill := received > wLo && decoding < b.MaxRunning && !hold
		runDecodes := decoding > 0 && (b.MixDecodes || !prefill)
		budget := b.TokenBudget
		if runDecodes && b.MixDecodes {
			budget -= decoding
		}
		chunks = chunks[:0]
		finished := 0 // requests whose prefill completes this iteration
		if prefill {
			slots := b.MaxRunning - decoding
			if b.Chunked {
				left := max(budget, 1) // the engine always makes progress
				for j := wLo; j < received && left > 0 && len(chunks) < slots; j++ {
					prior := 0
					if j == wLo {
						prior = headDone
					}
					c := min(inputs[j]-prior, left)
					chunks = append(chunks, chunk{tokens: c, prior: prior, whole: prior == 0 && c == inputs[j]})
					left -= c
					if prior+c < inputs[j] {
						headDone = prior + c
						break
					}
					finished++
					headDone = 0
				}
			} else {
				left := max(budget, 0)
				for j := wLo; j < received && len(chunks) < slots; j++ {
					// At least one prompt per iteration: an oversize prompt
					// runs whole (see doc.go).
					if inputs[j] > left && len(chunks) > 0 {
						break
					}
					chunks = append(chunks, chunk{tokens: inputs[j], whole: true})
					left -= inputs[j]
					finished++
				}
			}
		}
		if len(chunks) == 0 && !runDecodes {
			return nil, fmt.Errorf("scheduler stalled with %d waiting and %d decoding", waiting, decoding)
		}
		var it rankIter
		if runDecodes {
			it.decodes, it.ctx = decoding, float64(ctx)
		}
		it = rankShare(it, chunks, dp)
		if decoding == 0 {
			decW = 0 // no rounding residue
		}
		// Weights: waiting requests are those without a first token at
		// the iteration's start; a decoding request's time per output
		// token counts every iteration after its first token, including
		// prefill iterations that stall it.
		count := int64(1)
		if len(chunks) == 0 {
			// A decode-only stretch lasts, unchanged but for the
			// contexts, until the next request finishes.
			count = max(1, int64(dec[0]>>32)-decIter)
			// A request waiting to be taken in, or a prompt held by the
			// balancer, ends the stretch before the iteration that lets
			// it through.
			if b.RecvInterval > 1 && received < issued {
				count = min(count, int64(b.RecvInterval-recvCount))
			}
			if hold && waiting > 0 {
				if batchCount > 0 {
					count = min(count, int64(b.BalanceBatchWait-batchCount+1))
				} else {
					count = min(count, int64(b.BalanceTimeout-balanceCount))
				}
			}
			// The counters run on through the stretch: its iterations
			// after this one each add 1 at their start, wrapping where
			// nothing waits.
			if b.RecvInterval > 1 {
				recvCount = int((int64(recvCount) + count - 1) % int64(b.RecvInterval))
			}
			switch {
			case balance && batchCount > 0:
				batchCount += int(count - 1) // (holding prompts every rank has)
			case balance && decoding >= dp:
				// (with a rank short of decodes the balancer lets
				// prompts through at every iteration: its count stays 0)
				balanceCount = int((int64(balanceCount) + count - 1) % int64(b.BalanceTimeout))
			}
		}
		lastPrompt = len(chunks) > 0
		// The rank's context grows by one token per decode per iteration.
		record(it, float64(count), float64(waiting), decW, float64(it.decodes))
		sc.Iterations += count
		if sc.Iterations > maxScheduleIterations {
			return nil, fmt.Errorf("schedule too long (%d iterations)", sc.Iterations)
		}
		for _, c := range chunks {
			sc.PromptTokens += int64(c.tokens)
		}
		if runDecodes {
			decIter += count
			ctx += int64(decoding) * count
			sc.DecodeTokens += int64(decoding) * count
		}
		// Completions: requests that produced their last token.
		completed := 0
		for len(dec) > 0 && int64(dec[0]>>32) <= decIter {
			i := int(dec[0] & 0xffffffff)
			heap.Pop(&dec)
			ctx -= int64(inputs[i] + outputs[i])
			decW -= 1 / float64(outputs[i]-1)
			completed++
		}
		// Finished prompts start decoding (their first token came from
		// the prefill), or complete when they want one token only.
		for i := wLo; i < wLo+finished; i++ {
			if outputs[i] <= 1 {
				completed++
				continue
			}
			heap.Push(&dec, uint64(decIter+int64(outputs[i]-1))<<32|uint64(i))
			ctx += int64(inputs[i] + 1)
			decW += 1 / float64(outputs[i]-1)
		}
		wLo += finished
		done += completed
		// Each completion releases the next request.
		issued = min(total, issued+completed)
	}

	keys := make([]stepKey, 0, len(accs))
	for k := range accs {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b stepKey) int {
		if a.decodes != b.decodes {
			return a.decodes - b.decodes
		}
		if a.prompts != b.prompts {
			return a.prompts - b.prompts
		}
		return a.promptBin - b.promptBin
	})
	sc.Steps = make([]step, 0, len(keys))
	for _, k := range keys {
		a := accs[k]
		s := step{Count: a.count, WaitReqIters: a.wWait, DecodeWeight: a.wDec}
		if a.wWait > 0 {
			s.Wait = meanBatch(a.decodes, a.prompts, a.waitFeat, a.wWait)
		}
		if a.wDec > 0 {
			s.Decode = meanBatch(a.decodes, a.prompts, a.decFeat, a.wDec)
		}
		sc.Steps = append(sc.Steps, s)
	}
	return sc, nil
}

// meanBatch returns the batch of decodes decodes and prompts prompts whose
// prompt tokens, attention pairs and decode context are the weighted sums
// f divided by the total weight w.
func meanBatch(decodes, prompts int, f [3]float64, w float64) analytic.Batch {
	return analytic.Batch{
		PromptTokens:        int(math.Round(f[0] / w)),
		Prompts:             prompts,
		PromptAttnPairs:     f[1] / w,
		Decodes:             decodes,
		DecodeContextTokens: int64(math.Round(f[2] / w)),
	}
}

// chunk is one prompt's part of an iteration: tokens tokens after prior
// already prefilled ones; whole when it is the entire prompt.
type chunk struct {
	tokens, prior int
	whole         bool
}

// rankShare returns the busiest rank's share of an iteration of dp
// lockstep attention-DP ranks running decodes decodes (it.decodes, it.ctx)
// and the prompt chunks: the partial chunks (a continued one, a first
// one) all on that rank (an upper bound when they could be spread),
// ⌈whole/dp⌉ of the whole prompts at their mean length and pairs, and
// ⌈decodes/dp⌉ decodes with their share of the context. With dp 1 it is
// the iteration itself.
func rankShare(it rankIter, chunks []chunk, dp int) rankIter {
	var r rankIter
	var wholeN int
	var wholeTokens, wholePairs float64
	for _, c := range chunks {
		pairs := analytic.AttnPairs(c.tokens, c.prior)
		if c.whole {
			wholeN++
			wholeTokens += float64(c.tokens)
			wholePairs += pairs
			continue
		}
		r.prompts++
		r.promptTokens += float64(c.tokens)
		r.pairs += pairs
	}
	if wholeN > 0 {
		n := (wholeN + dp - 1) / dp
		f := float64(n) / float64(wholeN)
		r.prompts += n
		r.promptTokens += f * wholeTokens
		r.pairs += f * wholePairs
	}
	if it.decodes > 0 {
		r.decodes = (it.decodes + dp - 1) / dp
		r.ctx = it.ctx * float64(r.decodes) / float64(it.decodes)
	}
	return r
}

// times returns the mean time to first token and the mean time per output
// token of the measured requests, in seconds, given the iteration time in
// seconds of a batch.
func (sc *schedule) times(iterSeconds func(b analytic.Batch) float64) (ttftS, tpotS float64) {
	var wait, dec float64
	for i := range sc.Steps {
		s := &sc.Steps[i]
		var tw float64
		if s.WaitReqIters > 0 {
			tw = iterSeconds(s.Wait)
			wait += tw * s.WaitReqIters
		}
		if s.DecodeWeight > 0 {
			td := tw
			if s.WaitReqIters == 0 || s.Decode != s.Wait {
				td = iterSeconds(s.Decode)
			}
			dec += td * s.DecodeWeight
		}
	}
	ttftS = wait / float64(sc.Measured)
	if sc.MeasuredTPOT > 0 {
		tpotS = dec / float64(sc.MeasuredTPOT)
	}
	return ttftS, tpotS
}
