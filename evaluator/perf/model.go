package perf

// IterationModel answers the one question the simulator asks of a
// performance model: how long one batch iteration takes on one machine type
// for one model. Every method also says whether the answer was extrapolated
// beyond the profiled range, so callers can count such answers.
//
// Implementations must be safe for concurrent use by many simulations: they
// hold no mutable state.
type IterationModel interface {
	// PromptTime is the duration in seconds of a prompt-only iteration
	// whose prompts hold tokens tokens in all.
	PromptTime(tokens int) (seconds float64, extrapolated bool)
	// DecodeTime is the duration in seconds of a decode-only iteration of
	// batch decoding requests whose contexts (prompt plus tokens generated
	// so far) add up to contextTokens.
	DecodeTime(batch int, contextTokens int64) (seconds float64, extrapolated bool)
	// MixedTime is the duration in seconds of an iteration that runs
	// prompts holding promptTokens tokens together with decodes decoding
	// requests (whose contexts add up to contextTokens).
	MixedTime(promptTokens, decodes int, contextTokens int64) (seconds float64, extrapolated bool)
}
