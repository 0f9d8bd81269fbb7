package search

import (
	"math"

	"splitplan/costpower"
	"splitplan/evaluator"
	"splitplan/evaluator/perf"
	"splitplan/resolve"
)

// upperBoundRPS is a safe analytic bound on the rate cl can sustain: every
// prompt token and every decode token needs machine time at the best rate
// any machine type of the cluster achieves — in prompt-only, decode-only
// or mixed iterations, whichever is cheapest per token (a decode riding in
// a mixed iteration can cost less than in a decode-only one) — and the
// cluster has Machines() machines' worth of time per second (borrowing
// into the mixed pool cannot beat that).
func (s *search) upperBoundRPS(cl resolve.Cluster) float64 {
	cl = cl.Simulated() // replicas, each with its share of the memory
	opt := s.p.Options
	def := evaluator.DefaultOptions()
	if opt.MaxBatchRequests == 0 {
		opt.MaxBatchRequests = def.MaxBatchRequests
	}
	if opt.MaxBatchTokens == 0 {
		opt.MaxBatchTokens = def.MaxBatchTokens
	}
	promptTPS := math.Max(maxPromptTPS(cl.PromptPerf, opt), maxPromptTPS(cl.TokenPerf, opt))
	perReq := (s.meanP + s.meanD + 1) * float64(cl.KVBytesPerToken())
	kvOf := func(mc costpower.Machine) int64 { // every replica of the machine: an upper bound
		return cl.KVCapacityBytes(mc) * int64(mc.InstancesPerMachine())
	}
	decodeTPS := math.Max(maxDecodeTPS(cl.PromptPerf, kvOf(cl.PromptType), perReq, opt),
		maxDecodeTPS(cl.TokenPerf, kvOf(cl.TokenType), perReq, opt))
	mixedTPS := math.Max(maxMixedTPS(cl.PromptPerf, opt), maxMixedTPS(cl.TokenPerf, opt))
	promptTPS, decodeTPS = math.Max(promptTPS, mixedTPS), math.Max(decodeTPS, mixedTPS)
	secondsPerReq := s.meanP/promptTPS + s.meanD/decodeTPS
	if !(secondsPerReq > 0) {
		return math.Inf(1)
	}
	return float64(cl.Machines()) / secondsPerReq
}

// maxPromptTPS is the most prompt tokens per second an iteration of this
// performance model can process, over iteration sizes up to 64k tokens.
func maxPromptTPS(m perf.IterationModel, opt evaluator.Options) float64 {
	best := 0.0
	for x := 1; x <= 1<<16; x *= 2 {
		if t, _ := m.PromptTime(x); t > 0 {
			best = math.Max(best, float64(x)/t)
		}
	}
	// Also the largest batch, which the doubling may skip.
	if t, _ := m.PromptTime(opt.MaxBatchTokens); t > 0 {
		best = math.Max(best, float64(opt.MaxBatchTokens)/t)
	}
	return best
}

// maxDecodeTPS is the most decode tokens per second a machine achieves at
// any batch that fits its KV-cache (at least one request) and the batch
// cap. Contexts are taken as short as possible, which only helps the
// bound.
func maxDecodeTPS(m perf.IterationModel, capBytes int64, perReqBytes float64, opt evaluator.Options) float64 {
	maxB := opt.MaxBatchRequests
	if perReqBytes > 0 {
		if fit := int(float64(capBytes) / perReqBytes * 4); fit < maxB {
			maxB = max(fit, 1) // ×4: requests smaller than the mean fit more
		}
	}
	best := 0.0
	for b := 1; b <= maxB; b++ {
		if t, _ := m.DecodeTime(b, int64(b)); t > 0 {
			best = math.Max(best, float64(b)/t)
		}
	}
	return best
}

// maxMixedTPS is the most tokens per second (a prompt token or a decode
// each counting one) a mixed iteration of this performance model achieves,
// over iteration sizes up to 64k tokens and a few splits between prompt
// tokens and decodes, contexts as short as possible.
func maxMixedTPS(m perf.IterationModel, opt evaluator.Options) float64 {
	best := 0.0
	try := func(n int) {
		for _, d := range []int{1, n / 2, n - 1} {
			if d < 1 || d >= n {
				continue
			}
			if t, _ := m.MixedTime(n-d, d, int64(d)); t > 0 {
				best = math.Max(best, float64(n)/t)
			}
		}
	}
	for n := 2; n <= 1<<16; n *= 2 {
		try(n)
	}
	try(opt.MaxBatchTokens)
	return best
}
