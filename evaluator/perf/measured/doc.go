// Package measured reads the measured serving benchmarks (vLLM, SGLang and
// TensorRT-LLM on H100 to GB300), predicts each benchmark by simulating its
// closed loop of clients on package analytic's iteration-time model, and
// fits the serving engines' host-side terms on them, the physics held
// fixed: one entry per engine shared by every GPU, and one host-speed
// factor per GPU generation. Validate gives in-sample errors;
// CrossValidate gives held-out errors (leave one GPU or one model out)
// beside a two-parameter roofline fitted on the same folds, the figures
// to quote.
//
// Modelling choices (each a simplification, stated so it can be checked):
//
//   - Iterations are timed by package analytic's model (analytic.New,
//     BatchTime), the one iteration model of the project: a Calibration
//     entry holds an analytic.Efficiency, so a fitted entry means the same
//     thing in the simulator. GPU spec sheets come from package hw.
//   - Reading of the rows: a layout whose moe_tp_size exceeds its
//     tp_size is attention data parallelism (Parallel.attentionDP):
//     TensorRT-LLM's tp8_ep8 runs with attention DP are written tp_size
//     1, moe_tp_size 8, moe_ep_size 8 and attention_dp_size 64 (the
//     product), batch_size concurrency/64; they are read as 8 GPUs, 8
//     attention-DP ranks of concurrency/8 clients, experts 8-way EP
//     (38 agg rows refused before as spanning 16 or 64 GPUs are now
//     predicted). Two snapshots write the tpN_epN runs without attention
//     DP as products of their degrees (tp_size N², moe tp N × ep N; or
//     tp N × attention DP N, ep N²); they are read as N GPUs, attention
//     tp N, experts ep N (Parallel.productTP) where the id, or that of a
//     row recording the same measurement, names the layout, or N²
//     exceeds one 8-GPU node. Otherwise batch_size is the clients of one engine rank
//     (concurrency / attention_dp_size with attention DP, concurrency /
//     replicas for runs through a router), so an agg rank simulates
//     Row.RankClients() clients; Concurrency is the system's.
//   - The benchmark as run: the rows are SemiAnalysis InferenceX runs of
//     its copy of vLLM's benchmark_serving.py (--dataset-name random
//     --random-range-ratio 0.8 --num-prompts 10×concurrency
//     --max-concurrency --request-rate inf --ignore-eos; warm-ups run
//     and finish before the measured run). So each request's input and
//     output lengths are uniform integers in [⌊0.8 L⌋, L] (mean about
//     0.9 L; the output forced), drawn here from a generator seeded by
//     the row (benchLengths); every client sends its first request at
//     once (the burst, measured) and each completion releases the next
//     request in order, ten per client, all measured (simulateSchedule).
//     TTFT is the mean over requests of send to first token, TPOT the
//     mean over requests of (latency − TTFT)/(oᵢ − 1), so each iteration
//     weighs the requests waiting in it by 1 and those decoding in it by
//     1/(oᵢ − 1). Clients send at iteration ends and the engines choose
//     by tokens, not times, so the sequence of iterations does not depend
//     on their durations: one timing-free schedule per row serves every
//     efficiency and the fit re-times cached schedules. A schedule merges
//     the iterations of the same decodes and prompts and about the same
//     prompt tokens (within 2%) into one step, each weight applied to the
//     batch averaged with that weight (exact where the iteration time is
//     linear in the contexts and prompt tokens): about 50 steps for the
//     median row, at most about 1,100.
//   - Engines (the recipes' flags are not in the rows): vLLM V1 mixes
//     decodes and FIFO prompt chunks within max_num_batched_tokens
//     max(8192, 2·isl) (an InferenceX vLLM recipe passes 2·isl) and
//     max_num_seqs 1024 (8192 for gpt-oss-120b, whose InferenceX scripts
//     pass it, recipe.go); SGLang runs prefill batches alone (stalling
//     decodes) with chunked_prefill_size 8192 below 160 GiB of GPU memory
//     and 16384 above, except where InferenceX's launch script for the
//     run is known (recipe.go: its prefill batch, its
//     --mem-fraction-static for the KV cache, and its
//     --scheduler-recv-interval, which holds new requests back up to 10
//     or 30 decode iterations on B200 and B300); TensorRT-LLM runs whole
//     prompts mixed with decodes within max_num_tokens max(8192, isl),
//     max_batch_size 2048, except where its InferenceX script is known
//     (recipe.go: DeepSeek's and gpt-oss's budget, batch size and
//     free_gpu_memory_fraction, and with attention DP the balancer that
//     holds prompts until every rank has one: DeepSeek's, and gpt-oss's
//     on B200 with its batching wait). Tried on
//     the data (median per-cell TTFT / TPOT MAPE over the engine's 14
//     cells, in-sample after a refit, then leave one GPU out): vLLM 8192
//     15.9% / 11.1%, 27.2% / 17.9%; max(8192, 2·isl) 15.7% / 10.4%,
//     27.6% / 17.1% (kept: the recipe's, TPOT better both ways, within
//     the fit's noise of about a point). SGLang 32768 (an InferenceX
//     recipe's) 30.6% / 16.6%, 50.9% / 19.6% against the memory rule's
//     29.6% / 14.8%, 46.8% / 19.6%; 8192 on every GPU better in-sample
//     (29.1% / 13.7% against 31.9% / 15.4%) but worse held out (56.4% /
//     17.0% against 52.1% / 17.1%; measured with the disaggregated burst
//     term below), so the memory rule stays.
//   - Attention DP d: each rank is an analytic model with Config.DP = d,
//     whose architecture view (analytic.DPView) makes the MoE layers touch
//     the experts all d ranks' tokens touch and read 1/d of their bytes
//     (EP over TP × d GPUs); the all-to-all is not costed. The ranks
//     run in lockstep: the group is scheduled as one engine with d times
//     the clients, budget and running limit, and each iteration lasts as
//     long as its busiest rank's share (rankShare).
//   - KV cache fp8 when the weights are fp8/fp4, else bf16, unless the
//     run's script left the engine's default (the checkpoint's bf16,
//     recipe.go: bf16KV); weights at the experts' precision for MoE models
//     (gemm precision otherwise; nvfp4 0.5625 bytes per value with
//     scales), multiplied in bf16 on a GPU without tensor cores for their
//     format (hw.GPU.Tensor).
//   - Disaggregated rows: a steady-state fixed point at the benchmark's
//     mean lengths (decode ranks hold the decoding share of the clients,
//     at most their recipe's slots, disaggRecipe; prefill ranks serve
//     batches, of up to the recipe's limits for TensorRT-LLM, running
//     what waits, batchedWait; TTFT = one prompt + KV transfer + M/D/1
//     queueing or the prefill pool's capacity bound, or the wait for a
//     decode slot where the clients outnumber the slots: the cycle is at
//     least clients × a request's decode / slots), plus the burst: every
//     client's first request reaches the prefill pool at once and waits
//     on average half the pool's time for all of them, so the mean TTFT
//     gains c/(2μ) over the ten requests of a client (μ the pool's
//     prompts per second). Only rows that give the worker counts are
//     predicted.
//   - Unpredictable (ErrUnpredictable, listed in Report.Unpredicted):
//     models without an architecture, disagg rows without worker
//     counts, layouts spanning more than one 8-GPU node of H100/H200/
//     B200/B300 (tp_size × attention_dp or moe_tp × moe_ep > 8), prefill
//     layouts whose weights do not fit, rows without a concurrency; in
//     validation and the fit, runs whose measured TPOT beats the spec
//     sheet's roofline of the batches their clients keep running
//     (measuredPhysical: they ran fewer requests at once than their
//     clients, under a limit the row does not record), and runs whose
//     clients sent prompts faster than the GPU prefills them, more than
//     PrefillAllowance × the kernel layer's prefill of one prompt with
//     nothing else to do (measuredPhysical: a prefix cache served part
//     of their prompts, which the row does not record).
//   - Serving latency: TTFT = Serving.RequestOverheadS +
//     Serving.WaitIterations × TPOT + Serving.ClientOverheadS × the
//     rank's clients + Serving.PromptTokenS × the mean prompt length +
//     the simulated prompt iterations. The KV cache
//     (analytic.KVCapacityTokens) bounds the requests running at once
//     (at the mean lengths). WaitIterations is bounded to [0, 3]: a
//     request waits out the running iteration and, with an asynchronous
//     front end, about one more; unbounded, the fit took 12–31, standing
//     in for queueing the schedule does not have. ClientOverheadS is
//     bounded to 1 ms a client and PromptTokenS to 10 µs a token, what a
//     front end's work can cost (termBounds).
//   - MoE models: each row's routed experts run in its engine's measured
//     MoE kernel, with that kernel's fixed time per layer for vLLM and
//     SGLang (kernel.EnginePath: ExpertKernel, ExpertCompute,
//     ExpertFixedS; recipe.moePath, with the launch script's
//     kernel.Switches: VLLM_MXFP4_USE_MARLIN, vllmMarlinMXFP4, and
//     TensorRT-LLM's CUTLASS backend, dsr1CutlassMoE).
//   - The fit (Calibrate): the iteration time is the analytic model's
//     with the physics held at Physics: the kernel layer (package
//     kernel, fitted on the H100 kernel measurements and carried to
//     every GPU by its spec sheet) and all-reduces at a fixed fraction
//     of the link, never fitted on serving rows. Per engine, one shared entry (GPU "*") fits the engine
//     terms (EngineTerms: OverheadS per iteration, LayerOverheadS per
//     layer, PromptOverheadS per iteration carrying prompt tokens,
//     SequenceOverheadS per sequence) and the three serving terms on all
//     the engine's rows, every GPU together; one host-speed factor per
//     GPU generation (HostSpeed: ampere, hopper, blackwell, ...; hopper
//     the reference, 1) multiplies every host-side time (the engine
//     terms, RequestOverheadS, ClientOverheadS) of that generation's
//     machines, held near 1 by a ridge (0.05 × ln² factor) and shared by
//     the engines. Engines and factors are fitted in turn, twice. The
//     engine terms enter each iteration additively, so with the physics
//     fixed a row's simulated TTFT and TPOT are linear in them
//     (linearTime): the schedule is timed once at Physics and each loss
//     evaluation costs a few multiplications per agg row (a
//     disaggregated row re-runs its steady state). The loss is half the
//     absolute relative error plus half the absolute log error of TTFT
//     plus TPOT (fitErr: the first is the MAPE quoted and caps what an
//     under-predicted row the model cannot follow costs; the second keeps
//     the fit from leaning low), each row weighted 1/√(its cell's rows),
//     since the figure quoted is the median over cells; Nelder–Mead,
//     restarted once
//     (1,500 evaluations per engine, 60 per factor). The context is
//     checked in every Nelder–Mead iteration and every 4,096 scheduler
//     steps, so a signal stops a fit within milliseconds. A GPU whose
//     rows were fitted is "calibrated"; any other takes its engine's
//     entry and its generation's factor (1 for a generation without
//     rows) as "spec-only".
//
// Accuracy (54 cells, 2,402 predictable rows, 2,348 unpredictable of
// which 793 repeat a run already counted, sameRun, and 86 ran with
// speculative decoding, speculativeRuns and disaggRecipes; perf validate
// --measured serving_benchmarks.csv [--cross-validate gpu|model]; median
// per cell of the per-cell MAPE, then pooled over rows; engine terms on
// the kernel layer, fitted on relative plus log error): in-sample TTFT
// 27.9% / 31.1%, TPOT 14.7% / 17.6%; leave one GPU out TTFT 28.6% /
// 33.8%, TPOT 15.1% / 18.6%; leave one model out TTFT 32.4% / 38.6%,
// TPOT 15.3% / 18.6% — short of the targets (20% / 12% per cell, 30% /
// 18% pooled); docs/model.md has the current figures and the history of
// the structure. Earlier, before the kernel layer's expert-parallel term
// and the attention projections held whole on every GPU, fitted on the
// absolute log error alone the same folds gave 44.1% / 45.3%, 16.6% /
// 21.1% in-sample, 44.4% / 46.3%, 17.0% / 21.9% leave one GPU out and
// 46.9% / 52.9%, 17.4% / 23.8% leave one model out: the log error
// weighed the rows the schedule cannot follow (TTFTs 10× the prediction)
// as heavily as a 10× over-prediction and pulled every cell's serving
// terms up; the relative error alone gave 39.5% / 43.5%, 16.9% / 22.6%
// leave one GPU out but predicted TTFTs too fast on 74–78% of an
// engine's rows (fitErr). The two-parameter roofline fitted on the same
// folds and loss (fitBaseline) scores, leave one GPU out, 59.7% / 62.3%
// TTFT and 40.0% / 67.1% TPOT.
// No engine is biased one way on more than 63% of its rows held out
// (TensorRT-LLM's TPOTs too slow). Each cell fitting its own engine
// terms on its own rows (TestModelClassBound) reaches only 18.9% TTFT,
// 8.5% TPOT in-sample, and the best factor per (cell, concurrency) on the held-out
// predictions 15.8% / 6.9%: the TTFT target needs more within-cell
// structure than engine terms on this schedule model give (docs/model.md,
// "What bounds the serving targets"). Tried and dropped (leave one GPU
// out, against the log-error fit's 44.4% / 17.0%): SGLang with
// mixed chunks (prefill chunks riding with decodes), TensorRT-LLM
// running one request fewer than its clients, and any one further TTFT
// term per engine (clients, clients × prompt, output × TPOT / clients,
// ...): none improved the held-out figures. Other structures, leave one
// GPU out (TTFT / TPOT, median per cell, log error): engine terms on frozen
// physics 47.8% / 17.5%; with the 38 attention-DP rows read 48.2% /
// 17.2%; WaitIterations bounded to 3 49.6% / 17.5% (pooled TTFT 51.7% →
// 49.2%); the disaggregated burst 44.5% / 16.9%; at most 30 µs per layer
// and 5 ms per prompt iteration (termBounds: unbounded they took 80–100
// µs and 15 ms, the frozen physics' error) 48.2% / 16.9%. Tried and
// dropped before: a front-end cost per prompt token (fitted to its 1 ns
// floor by every engine); SGLang reserving the whole output's KV (no
// change: the cache does not bind); the roofline baseline as a ×
// roofline time + b per iteration, or fitted per (model, engine, mode)
// (both worse held out). The cross-validation runs in about 10 s on two
// cores (the per-pair fits re-time cached, timing-free schedules).
//
// What the rows do not record (docs/model.md gives the figures): 735
// rows are AIConfigurator's own aiperf runs with fixed lengths (38 of them
// its sflow workflow's, twenty requests a client behind a max_batch_size
// cap), not InferenceX's; simulating their fixed lengths put the simulated
// clients in lockstep, which the measurements do not show, and made the
// held-out figures worse, so every row is simulated with InferenceX's
// client. Speculative decoding (MTP, EAGLE) is not a column, though
// InferenceX runs DeepSeek-R1 with and without it at the same layouts
// (TPOTs of 4.37 and 10.13 ms for one configuration): the runs its launch
// matrix names as MTP runs are left out (speculativeRuns,
// scripts/inferencex_mtp.py), those it cannot tell apart (one image for
// both) are kept; engine versions differ by GPU.
//
// Known weaknesses: TTFT is the weak side. Disaggregated TTFTs of 1–40 s
// are mostly clients waiting for their recipe's decode slots, which the
// model follows; not the GB200 recipes' front ends that route without
// seeing one another (one-slot decode workers wait for each other's
// requests at as many clients as slots: 5–39 s), and SGLang's
// disaggregated runs are predicted short (×0.53–0.84 held out on B200,
// GB200, GB300); measured agg TTFTs
// still grow with the clients faster than the simulated schedule queues at
// 128 and more clients per rank (SGLang's most: 9–90 s on H100 Qwen3-32B),
// and the serving terms (a fixed latency, iterations waited, seconds per
// client) are phenomenological. Engine flags differ per recipe and are not
// in the rows (e.g. an SGLang recipe's max-running-requests 128, stream
// intervals of 20–30 tokens); the defaults above stand for all. The
// biggest held-out TPOT errors are dense models on Hopper (Llama-3.1-8B
// 40–80%, over-predicted) and gpt-oss-120b (30–80%), whose compute and
// per-layer costs the shared, MoE-dominated fits do not carry.
// Attention-DP rows stay under-predicted; costing the MoE all-to-all
// across the DP ranks (its bandwidth, or bandwidth and latency) did not
// improve the fit.
package measured
