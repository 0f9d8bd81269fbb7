package traces

//go:generate go run ./internal/gensharegpt -out ../examples/sharegpt-like.csv

import (
	"math"
	"math/rand/v2"

	"gonum.org/v1/gonum/stat/distuv"
)

// ShareGPT-like sizes: the synthetic chat workload of
// examples/sharegpt-like.csv, used where a chat workload with long
// answers is wanted (the batching-policy comparison of docs/model.md).
// ShareGPT conversations as the serving papers replay them (the whole
// conversation so far as the prompt, the next answer as the output) have
// prompts of a median of about 1,700 tokens and answers of about 400; the
// Azure conversation trace's answers are far shorter (median 129). The
// sizes are lognormal with these medians, clipped to a range a chat
// request takes.
const (
	// ShareGPTPromptMedian and ShareGPTPromptSigma: prompt tokens are
	// lognormal with this median and log-space standard deviation,
	// clipped to [ShareGPTPromptMin, ShareGPTPromptMax].
	ShareGPTPromptMedian = 1700
	ShareGPTPromptSigma  = 0.8
	ShareGPTPromptMin    = 16
	ShareGPTPromptMax    = 8192
	// ShareGPTOutputMedian and ShareGPTOutputSigma: output tokens are
	// lognormal with this median and log-space standard deviation,
	// clipped to [ShareGPTOutputMin, ShareGPTOutputMax].
	ShareGPTOutputMedian = 400
	ShareGPTOutputSigma  = 0.7
	ShareGPTOutputMin    = 8
	ShareGPTOutputMax    = 2048
	// ShareGPTRequests and ShareGPTSeed are the size of the shipped file
	// and the seed it was drawn with.
	ShareGPTRequests = 10000
	ShareGPTSeed     = 1
)

// ShareGPTLike draws n requests of ShareGPT-like sizes (the constants
// above), arriving one a second, from the given seed: the same n and seed
// give the same requests. As a trace (--trace) only its sizes matter:
// every command resamples them at its own rate.
func ShareGPTLike(n int, seed uint64) []Request {
	rng := rand.New(rand.NewPCG(seed, pcgStream))
	prompt := distuv.LogNormal{Mu: math.Log(ShareGPTPromptMedian), Sigma: ShareGPTPromptSigma, Src: rng}
	output := distuv.LogNormal{Mu: math.Log(ShareGPTOutputMedian), Sigma: ShareGPTOutputSigma, Src: rng}
	clip := func(v float64, lo, hi int) int {
		return min(max(int(math.Round(v)), lo), hi)
	}
	reqs := make([]Request, n)
	for i := range reqs {
		reqs[i] = Request{
			ID:           i,
			Arrival:      float64(i),
			PromptTokens: clip(prompt.Rand(), ShareGPTPromptMin, ShareGPTPromptMax),
			OutputTokens: clip(output.Rand(), ShareGPTOutputMin, ShareGPTOutputMax),
		}
	}
	return reqs
}
