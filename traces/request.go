package traces

// Request is one inference request of a workload: when it arrives and how
// many tokens it brings and asks for.
type Request struct {
	// ID is the request's index in its workload (0, 1, 2, ...).
	ID int
	// Arrival is the arrival time in seconds from the start of the workload.
	Arrival float64
	// PromptTokens is the number of input (context) tokens, at least 1.
	PromptTokens int
	// OutputTokens is the number of tokens to generate, at least 1. The
	// first of them is produced by the prompt iteration.
	OutputTokens int
}
