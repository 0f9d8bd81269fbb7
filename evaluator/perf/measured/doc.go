// Package measured reads the measured serving benchmarks (vLLM, SGLang and
// TensorRT-LLM on H100 to GB300), predicts each benchmark by simulating its
// closed loop of clients on a roofline iteration-time model, and fits that
// model's efficiencies per serving engine (shared by every GPU, carried
// to a GPU by its spec sheet) and per GPU and engine on them. Validate gives in-sample
// errors; CrossValidate gives held-out errors (leave one GPU or one model
// out), the figures to quote.
//
// Modelling choices (each a simplification, stated so it can be checked):
//
//   - Iterations are timed by package analytic's model (analytic.New,
//     BatchTime), the one iteration model of the project: a Calibration
//     entry holds an analytic.Efficiency, so a fitted entry means the same
//     thing in the simulator. GPU spec sheets come from package hw.
//   - Reading of the rows: batch_size is the clients of one engine rank
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
//     max_num_seqs 1024; SGLang runs prefill batches alone (stalling
//     decodes) with chunked_prefill_size 8192 below 160 GiB of GPU memory
//     and 16384 above; TensorRT-LLM runs whole prompts mixed with decodes
//     within max_num_tokens max(8192, isl), max_batch_size 2048. Tried on
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
//   - KV cache fp8 when the weights are fp8/fp4, else bf16; weights at the
//     experts' precision for MoE models (gemm precision otherwise; nvfp4
//     0.5625 bytes per value with scales).
//   - Disaggregated rows: a steady-state fixed point at the benchmark's
//     mean lengths (decode ranks hold the decoding share of the clients;
//     prefill ranks serve batches; TTFT = one prompt + KV transfer +
//     M/D/1 queueing or the prefill pool's capacity bound). The burst
//     (every client's first prompt at the prefill pool at once) is not
//     modelled: see the accuracy paragraph. Only rows that give the
//     worker counts are predicted.
//   - Unpredictable (ErrUnpredictable, listed in Report.Unpredicted):
//     models without an architecture (GLM-5), disagg rows without worker
//     counts, layouts spanning more than one 8-GPU node of H100/H200/
//     B200/B300 (tp_size × attention_dp or moe_tp × moe_ep > 8), prefill
//     layouts whose weights do not fit, rows without a concurrency.
//   - Serving latency: TTFT = Serving.RequestOverheadS +
//     Serving.WaitIterations × TPOT + Serving.ClientOverheadS × the
//     rank's clients + the simulated prompt iterations. The KV cache
//     (analytic.KVCapacityTokens) bounds the requests running at once
//     (at the mean lengths).
//     Without it the fit inflated prompt time through Compute (0.02, its
//     floor, on most pairs) and so ruined TPOT; measured TTFTs run at
//     7–10 decode iterations across concurrencies, which the engine
//     iterations alone do not explain.
//   - The fit has two levels. Per engine, a shared entry (GPU "*") is
//     fitted on all that engine's rows together, on every GPU: eleven
//     parameters (Compute, ExpertCompute, Memory, Comm, FlatLatency,
//     OverheadS, LayerOverheadS, SequenceOverheadS of analytic.Efficiency;
//     the three Serving terms) plus two spec exponents that carry the
//     efficiencies to another spec sheet (Entry.ComputeExponent,
//     MemoryExponent: a GPU of peak F and bandwidth B gets Compute ×
//     (F_H100/F)^c and Memory × (B_H100/B)^m). Then each (GPU, engine)
//     pair is fitted on its own rows from the shared entry's values for
//     its GPU, held near them by a ridge. Lookup gives a GPU without an
//     entry of its own its engine's shared entry scaled to its sheet (the
//     nearest-relative rule remains for an engine without a shared
//     entry). Both minimise the mean absolute log error of TTFT plus TPOT
//     (robust to the rows the model cannot follow) by Nelder–Mead,
//     restarted once (2,700 loss evaluations for a shared fit, 900 for a
//     pair), on a subsample balanced over the cells (300 and 150 rows;
//     fitSubsample), each row weighted 1/√(its cell's rows), since the
//     figure quoted is the median over cells.
//
// Accuracy (median over the 52 cells of the per-cell MAPE, 2,856
// predictable rows, 1,894 unpredictable): in-sample TTFT 27.0%, TPOT
// 13.8%; held out, leave one GPU out TTFT 39.1%, TPOT 19.3%; leave one
// model out TTFT 39.4%, TPOT 19.5% — still short of the 20% / 10% targets.
// Simulating the benchmark as run (the burst, ten measured requests per
// client, random lengths) moved them from 33.1% / 13.7% in-sample, 44.5% /
// 17.4% leave one GPU out and 42.1% / 20.2% leave one model out: TTFT
// better (cells within 20%: 12 → 19 in-sample, 5 → 7 held out; the median
// predicted/measured agg TTFT at 256 and more clients per rank went from
// 0.53 to 0.68, at 8192-token prompts from 0.82 to 0.94, and the fitted
// iterations waited, Serving.WaitIterations, fell from 8–22 to 3–12), TPOT
// worse held out and in the tails (cells within 10% in-sample 20 → 13;
// predicted TPOT rises less with the clients than measured). Leave one
// model out also gained from a fix: a pair fit starting from an efficiency
// clamped at 1 (a shared entry scaled to a faster GPU) began at an
// infinite coordinate and ended at the zero vector (every efficiency 0.51,
// 200 ms per iteration), which in the DeepSeek-V3 fold ruined its SGLang
// cells (41.6% / 21.1% with that bug). Before the shared fit (one entry
// per pair, a left-out GPU predicted with its nearest relative's) they
// were 32.3% / 14.5% in-sample, 55.2% / 28.1% leave one GPU out and
// 44.7% / 22.5% leave one model out. Steps, each measured leave one GPU out
// (TTFT / TPOT): the shared per-engine fit 51.9% / 18.1%; with spec
// exponents 50.1% / 18.8%; with ExpertCompute 44.2% / 20.5% (43.3% / 20.5%
// with the restarted Nelder–Mead); with LayerOverheadS 44.5% / 17.4%; the
// benchmark as run 39.1% / 19.3%. Those structural choices were made
// looking at the held-out figures, so the final ones are somewhat
// optimistic. Tried and dropped: padding each touched expert's GEMM to
// half a 128-row tile (TPOT 20.9%); the spec exponents without
// ExpertCompute and LayerOverheadS left out (47.0% / 19.7%); 500 rows per
// shared fit (40.3% / 18.2%, 1.7× slower); for disaggregated rows, the
// burst at the prefill pool (the first request of each client waiting half
// the pool's time for all the clients' prompts): leave one GPU out 35.3% /
// 17.2% (disaggregated cells' TTFT 55% → 45%), in-sample 28.1% / 14.5%,
// but the refit put vLLM's Compute at its bound 1.0, unphysical, which
// also breaks package power's physical tests (power draw falling with
// prompt tokens), so it waits for a better prefill-pool model.
//
// What the rows do not record (docs/model.md gives the figures): 735
// rows are AIConfigurator's own aiperf runs with fixed lengths (38 of them
// its sflow workflow's, twenty requests a client behind a max_batch_size
// cap), not InferenceX's; simulating their fixed lengths put the simulated
// clients in lockstep, which the measurements do not show, and made the
// held-out figures worse, so every row is simulated with InferenceX's
// client. Speculative decoding (MTP, EAGLE) is not a column, though
// InferenceX runs DeepSeek-R1 with and without it at the same layouts
// (TPOTs of 4.37 and 10.13 ms for one configuration); engine versions
// differ by GPU.
//
// Known weaknesses: TTFT is the weak side. Disaggregated TTFTs are
// dominated by queueing the steady-state model does not follow (TTFTs of
// 0.2–40 s at concurrencies the decode pool holds, growing with the output
// length at a fixed prompt), and are under-predicted on the DeepSeek
// trtllm disagg cells (median predicted/measured 0.26–0.66 per GPU
// in-sample, 0.47–0.86 before the benchmark as run); measured agg TTFTs
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
