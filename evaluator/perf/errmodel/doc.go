// Package errmodel is the performance model's error as its own held-out
// validation measured it: for each provenance (profiled, calibrated,
// spec-only, measured) and phase (prompt, decode), the residuals
// log(predicted / measured) of iteration times the model predicted
// without having been fitted on them.
//
// Where the residuals come from (internal/generr, go generate, reading
// ../shared/data):
//   - profiled: the held-out 20% of every profile pair's rows (the split
//     of perf validate, seed 1), the pair fitted on the other 80%;
//   - calibrated and spec-only: the serving benchmarks with each GPU left
//     out of the engine fit in turn (perf validate --measured
//     serving_benchmarks.csv --cross-validate gpu), TTFT standing for the
//     prompt phase and TPOT for the decode phase;
//   - measured: the kernel layer's held-out rows (perf validate
//     --kernels), prefill for the prompt phase, decode for the decode phase.
//
// A draw scales a machine type's predicted prompt or decode time by
// measured/predicted = exp(−residual), one residual resampled from the
// table. Drawn once per (GPU, phase) per scenario, an error is shared by
// every iteration of every machine of that GPU, as a real GPU that is 15%
// slower than predicted is slower in every iteration.
package errmodel
