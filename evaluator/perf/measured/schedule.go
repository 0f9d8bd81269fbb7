package measured

import (
	"fmt"
	"math/rand/v2"
	"slices"
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
}

// step is one engine iteration (or Count identical decode-only iterations
// with the context at their midpoint) and its weight in the measured means.
type step struct {
	// The prompt work: a continued chunk of HeadTokens on top of HeadPrior
	// cached tokens, Whole whole prompts, and a first chunk of TailTokens.
	HeadTokens, HeadPrior int
	Whole                 int
	TailTokens            int
	// Decodes decoding requests whose contexts add up to ContextTokens.
	Decodes       int
	ContextTokens int64
	// Count identical iterations.
	Count float64
	// WaitReqIters and DecodeReqIters are, summed over the Count iterations,
	// the number of measured requests waiting for their first token and
	// decoding during the iteration.
	WaitReqIters, DecodeReqIters float64
}

// PromptTokens returns the prompt tokens the step processes per iteration.
func (s *step) PromptTokens(isl int) int { return s.HeadTokens + s.Whole*isl + s.TailTokens }

// schedule is the timing-free trace of one closed-loop benchmark: which
// iterations ran and how many measured requests each one delayed. Because
// clients resubmit at iteration ends and all requests are identical, the
// sequence of iterations does not depend on how long they take, so one
// schedule serves every set of efficiencies.
type schedule struct {
	ISL, OSL int
	Steps    []step
	// Measured is the number of measured requests.
	Measured int
}

// Measurement window: the benchmark sends Rounds×concurrency requests and
// the client averages over the requests after the first WarmupRounds×
// concurrency. See doc.go for the choice.
const (
	benchRounds  = 3
	warmupRounds = 1
)

// cohort is a run of consecutive requests that started decoding together.
type cohort struct {
	n     int
	start int // decode-iteration counter at the cohort's first token
}

// simulateSchedule simulates clients closed-loop clients each sending
// requests of isl prompt and osl output tokens, back to back, against one
// engine instance with batching b. Requests are numbered in send order;
// every queue is FIFO, so the waiting and the decoding requests are always
// contiguous index ranges.
func simulateSchedule(clients, isl, osl int, b Batching) (*schedule, error) {
	if clients <= 0 || isl <= 0 || osl <= 0 {
		return nil, fmt.Errorf("clients %d, isl %d, osl %d: expected positive values", clients, isl, osl)
	}
	if b.TokenBudget <= 0 || b.MaxRunning <= 0 {
		return nil, fmt.Errorf("batching %+v: expected a positive token budget and running limit", b)
	}
	total := benchRounds * clients
	mLo, mHi := warmupRounds*clients, total
	sc := &schedule{ISL: isl, OSL: osl, Measured: mHi - mLo}
	overlap := func(lo, hi int) float64 {
		lo, hi = max(lo, mLo), min(hi, mHi)
		if hi <= lo {
			return 0
		}
		return float64(hi - lo)
	}
	issued := 0         // requests sent so far: [0, issued)
	wLo := 0            // waiting (not yet first token): [wLo, issued)
	headDone := 0       // prompt tokens of request wLo already prefilled
	dLo := 0            // decoding: [dLo, wLo)
	var dec []cohort    // decoding cohorts, FIFO
	decIter := 0        // iterations that carried decodes so far
	var ctx int64       // context tokens of the decoding requests
	done := 0           // finished requests
	finishAt := osl - 1 // decode iterations after the first token
	// Staggered start: the clients send their first requests at random
	// iterations (uniform over one request's iterations alone, its prompt
	// chunks plus its decodes; fixed seed per client count, so the
	// schedule is deterministic and the same fractions of the period for
	// every isl and osl), as a benchmark's clients drift apart, rather
	// than in one synchronized burst that identical requests would repeat
	// every round. Random rather than even spacing lets arrivals collide
	// as they do in practice.
	period := int64(osl) + int64((isl+b.TokenBudget-1)/b.TokenBudget)
	starts := make([]int64, clients)
	rng := rand.New(rand.NewPCG(uint64(clients), 0x5eed))
	for j := range starts {
		starts[j] = int64(rng.Float64() * float64(period))
	}
	slices.Sort(starts)
	startAt := func(j int) int64 { return starts[j] }
	started := 0
	var iter int64 // iterations run so far (idle gaps skipped)
	for done < total {
		for started < clients && startAt(started) <= iter {
			started++
			issued++
		}
		if issued == wLo && wLo == dLo {
			// Idle until the next client starts.
			iter = startAt(started)
			continue
		}
		decoding := wLo - dLo
		waiting := issued - wLo
		var s step
		s.Count = 1
		prefill := waiting > 0 && decoding < b.MaxRunning
		runDecodes := decoding > 0 && (b.MixDecodes || !prefill)
		budget := b.TokenBudget
		if runDecodes {
			s.Decodes, s.ContextTokens = decoding, ctx
			if b.MixDecodes {
				budget -= decoding
			}
		}
		finished := 0 // requests whose prefill completes this iteration
		if prefill {
			slots := b.MaxRunning - decoding // admitted requests allowed
			if b.Chunked {
				if budget < 1 {
					budget = 1 // the engine always makes progress
				}
				left := budget
				if headDone > 0 {
					c := min(isl-headDone, left)
					s.HeadTokens, s.HeadPrior = c, headDone
					left -= c
					if headDone+c == isl {
						finished++
						headDone = 0
					} else {
						headDone += c
					}
				}
				if headDone == 0 {
					avail := min(waiting-finished, slots-finished)
					whole := min(left/isl, avail)
					s.Whole = whole
					finished += whole
					left -= whole * isl
					if left > 0 && avail > whole {
						s.TailTokens = left
						headDone = left
					}
				}
			} else {
				whole := min(max(budget, 0)/isl, waiting, slots)
				if whole == 0 && slots > 0 {
					// At least one prompt per iteration: an oversize
					// prompt runs whole (see doc.go).
					whole = 1
				}
				s.Whole = whole
				finished = whole
			}
		}
		if s.PromptTokens(isl) == 0 && s.Decodes == 0 {
			return nil, fmt.Errorf("scheduler stalled with %d waiting and %d decoding", waiting, decoding)
		}
		// Weights: waiting requests are those without a first token at the
		// iteration's start; decoding ones are those decoding in it.
		s.WaitReqIters = overlap(wLo, issued)
		// A decoding request's time per output token counts every
		// iteration after its first token, including prefill iterations
		// that stall it.
		s.DecodeReqIters = overlap(dLo, wLo)
		// Fast path: a decode-only stretch with nothing waiting lasts until
		// the oldest cohort finishes.
		if s.PromptTokens(isl) == 0 && waiting == 0 && len(dec) > 0 {
			k := dec[0].start + finishAt - decIter
			if started < clients {
				k = min(k, int(startAt(started)-iter))
			}
			if k > 1 {
				s.Count = float64(k)
				s.ContextTokens = ctx + int64(decoding)*int64(k-1)/2
				s.DecodeReqIters *= float64(k)
				s.WaitReqIters *= float64(k)
				decIter += k - 1
				ctx += int64(decoding) * int64(k-1)
			}
		}
		sc.Steps = append(sc.Steps, s)
		iter += int64(s.Count)
		// Advance: decodes produce a token each; finished prompts start
		// decoding (their first token came from the prefill).
		if runDecodes {
			decIter++
			ctx += int64(decoding)
		}
		// Completions: cohorts that produced their last token.
		completed := 0
		for len(dec) > 0 && decIter-dec[0].start >= finishAt {
			completed += dec[0].n
			ctx -= int64(dec[0].n) * int64(isl+1+finishAt)
			dec = dec[1:]
		}
		dLo += completed
		done += completed
		if finished > 0 {
			wLo += finished
			if finishAt == 0 { // osl 1: done at the first token
				dLo += finished
				done += finished
				completed += finished
			} else {
				dec = append(dec, cohort{n: finished, start: decIter})
				ctx += int64(finished) * int64(isl+1)
			}
		}
		// Clients whose request completed send the next one.
		if completed > 0 && issued < total {
			issued += min(completed, total-issued)
		}
		if len(sc.Steps) > 50_000_000/max(1, osl) && len(sc.Steps) > 2_000_000 {
			return nil, fmt.Errorf("schedule too long (%d iterations)", len(sc.Steps))
		}
	}
	return sc, nil
}

// times returns the mean time to first token and mean time per output
// token of the measured requests, in seconds, given each step's iteration
// time in seconds.
func (sc *schedule) times(iterSeconds func(s *step) float64) (ttftS, tpotS float64) {
	var wait, dec float64
	for i := range sc.Steps {
		s := &sc.Steps[i]
		if s.WaitReqIters == 0 && s.DecodeReqIters == 0 {
			continue
		}
		t := iterSeconds(s)
		wait += t * s.WaitReqIters
		dec += t * s.DecodeReqIters
	}
	ttftS = wait / float64(sc.Measured)
	if sc.OSL > 1 {
		tpotS = dec / (float64(sc.Measured) * float64(sc.OSL-1))
	}
	return ttftS, tpotS
}
