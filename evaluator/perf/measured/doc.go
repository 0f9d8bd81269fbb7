// Package measured reads the measured serving benchmarks (vLLM, SGLang and
// TensorRT-LLM on H100 to GB300), predicts each benchmark by simulating its
// closed loop of clients on the analytic iteration-time model, and fits the
// analytic model's efficiencies per GPU and engine on them.
//
// Validate reports in-sample errors; CrossValidate reports held-out errors
// (leave one GPU or one model out), which are the figures to quote.
package measured
