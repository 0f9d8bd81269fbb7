#!/usr/bin/env python3
"""Measure what one GPU really takes for LLM iterations, with no serving engine.

Writes the table of ../shared/data/gpu-kernels (kernels.csv, mixed.csv,
meta.json) for the GPU this runs on, for a built-in model shape or a Hugging
Face config.json, so that `splitplan perf fit --kernels DIR/kernels.csv`
can fit the kernel layer of that GPU (README.md beside this file).

Method (the same as the shared H100 measurement):
  * one layer = RMSNorm, fused QKV GEMM, attention, O GEMM, residual,
    RMSNorm, fused gate-up GEMM, SiLU*mul, down GEMM, residual; no rotary
    embedding; the LM head for the last token of each sequence; every layer
    has its own weights and its own KV cache; bf16, random weights;
  * tp > 1 is the per-GPU share of a TP-sharded layer (heads, FFN and
    vocabulary divided by tp); no all-reduce;
  * prefill attention: causal SDPA (flash backend where available, GQA
    native); decode: SDPA of each KV head's query heads over a contiguous
    cache of exactly `context_per_request` tokens per request, the new
    token's K and V written into the cache;
  * every iteration is captured once as a CUDA graph and replayed; time =
    CUDA-event time of `iters` replays (at least 0.6 s in all, after
    warm-up) divided by `iters`;
  * board power (NVML, optional) and SM clock sampled every 20 ms during
    the timed window, the first quarter of the samples dropped.

Only dense, GQA (or MHA) Llama-like decoder models are supported: MoE,
multi-head latent attention, sliding windows and linear attention are
refused with a message, because their kernels are not what this measures.

--dry-run needs neither a GPU nor PyTorch: it prints the CSV header and the
rows it would measure, so the plan and the file contract can be checked
anywhere.
"""

import argparse
import json
import math
import os
import sys
import threading
import time


def fail(msg):
    """Prints msg on standard error and exits 2 (bad input)."""
    print(msg, file=sys.stderr)
    sys.exit(2)

# The columns of kernels.csv and mixed.csv, in order (the Go reader of
# `splitplan perf fit --kernels` and `perf validate --kernels` checks them).
COLUMNS = [
    "model", "tp", "layers", "kind", "prompts", "tokens_per_prompt", "batch",
    "context_per_request", "m", "n", "k", "time_ms", "iters", "cuda_graph",
    "avg_power_w", "avg_sm_mhz", "note",
]

# The keys of meta.json, in order.
META_KEYS = [
    "gpu", "sms", "mem_gib", "torch", "cuda", "driver", "power_limit_w",
    "flash", "elapsed_s", "prefill_attention",
]

# The kinds of row.
KINDS = ["prefill", "decode", "mixed", "gemm", "copy", "idle"]

# Built-in dense shapes (transcribed from their config.json files; the Go
# test checks them against splitplan's own catalog, package arch).
BUILTIN = {
    "llama3.1-8b": dict(layers=32, hidden=4096, heads=32, kv_heads=8, head_dim=128, ffn=14336, vocab=128256),
    "llama3.1-70b": dict(layers=80, hidden=8192, heads=64, kv_heads=8, head_dim=128, ffn=28672, vocab=128256),
    "llama3.1-405b": dict(layers=126, hidden=16384, heads=128, kv_heads=8, head_dim=128, ffn=53248, vocab=128256),
    "llama2-70b": dict(layers=80, hidden=8192, heads=64, kv_heads=8, head_dim=128, ffn=28672, vocab=32000),
    "qwen3-32b": dict(layers=64, hidden=5120, heads=64, kv_heads=8, head_dim=128, ffn=25600, vocab=151936),
}

MIN_TIMED_S = 0.6
POWER_PERIOD_S = 0.02


def shape_from_config(path):
    """Returns the dense shape of a Hugging Face config.json, or exits 2."""
    try:
        with open(path) as f:
            c = json.load(f)
    except (OSError, ValueError) as e:
        fail(f"profile.py: --config {path}: {e}")
    for key in ("num_experts", "n_routed_experts", "num_local_experts", "kv_lora_rank"):
        if c.get(key):
            fail(f"profile.py: --config {path}: {key} = {c[key]}: mixture-of-experts and latent-attention models "
                     "are not supported (dense GQA Llama-like models only)")
    if c.get("sliding_window") and c.get("use_sliding_window", True) and c.get("layer_types"):
        fail(f"profile.py: --config {path}: sliding-window layers are not supported")
    try:
        heads = int(c["num_attention_heads"])
        hidden = int(c["hidden_size"])
        return dict(
            layers=int(c["num_hidden_layers"]), hidden=hidden, heads=heads,
            kv_heads=int(c.get("num_key_value_heads", heads)),
            head_dim=int(c.get("head_dim") or hidden // heads),
            ffn=int(c["intermediate_size"]), vocab=int(c["vocab_size"]))
    except (KeyError, TypeError, ValueError) as e:
        fail(f"profile.py: --config {path}: missing or bad field {e}: expected a Llama-like config.json")


def share(shape, tp):
    """The per-GPU share of a TP-sharded layer, or exits 2 if tp does not divide it."""
    for what in ("heads", "kv_heads", "ffn"):
        if shape[what] % tp:
            fail(f"profile.py: --tp {tp} does not divide the model's {what} ({shape[what]})")
    s = dict(shape)
    s["heads"] //= tp
    s["kv_heads"] //= tp
    s["ffn"] //= tp
    s["vocab"] = -(-shape["vocab"] // tp)
    return s


def weight_bytes(s):
    """bf16 bytes of the per-GPU share's weights (all layers and the head)."""
    h, d = s["hidden"], s["head_dim"]
    qkv = h * (s["heads"] + 2 * s["kv_heads"]) * d
    o = s["heads"] * d * h
    ffn = 3 * h * s["ffn"]
    return 2 * (s["layers"] * (qkv + o + ffn + 2 * h) + s["vocab"] * h + h)


def kv_bytes_per_token(s):
    return 2 * 2 * s["layers"] * s["kv_heads"] * s["head_dim"]


def plan(name, s, tp, mem_bytes, budget_s):
    """The rows to measure for one (model, tp): dicts with the key columns and
    an estimated cost in seconds, trimmed to the budget (largest first)."""
    free = mem_bytes * 0.9 - weight_bytes(s)
    rows = []
    base = dict(model=name, tp=tp, layers=s["layers"])
    for t in [64, 128, 256, 512, 1024, 2048, 4096, 8192, 16384]:
        rows.append(dict(base, kind="prefill", prompts=1, tokens_per_prompt=t, cost=1.5 + t / 4096))
    for p, t in [(4, 1024), (16, 256), (8, 1024), (2, 4096), (64, 64)]:
        rows.append(dict(base, kind="prefill", prompts=p, tokens_per_prompt=t, cost=2.5))
    for ctx in [128, 512, 2048, 8192, 32768]:
        for b in [1, 2, 4, 8, 16, 32, 64, 128, 256, 512]:
            if b * ctx * kv_bytes_per_token(s) > free * 0.8:
                continue
            rows.append(dict(base, kind="decode", batch=b, context_per_request=ctx, cost=1.2 + b * ctx / 2e6))
    for b in [16, 64]:
        for t in [128, 512, 1024, 2048]:
            if b * 2048 * kv_bytes_per_token(s) > free * 0.8:
                continue
            rows.append(dict(base, kind="mixed", prompts=1, tokens_per_prompt=t, batch=b, context_per_request=2048,
                             cost=1.5, file="mixed"))
    h, d = s["hidden"], s["head_dim"]
    gemms = [("qkv", (s["heads"] + 2 * s["kv_heads"]) * d, h), ("o", h, s["heads"] * d),
             ("gate_up", 2 * s["ffn"], h), ("down", h, s["ffn"])]
    for label, n, k in gemms:
        for m in [1, 8, 32, 64, 128, 256, 512, 1024, 2048, 4096, 8192, 16384]:
            rows.append(dict(model="gemm", kind="gemm", m=m, n=n, k=k, note=f"{name} tp{tp} {label}", cost=0.8))
        for m in [16, 32, 64, 128, 512, 2048, 8192]:
            rows.append(dict(model="gemm-fp8", kind="gemm", m=m, n=n, k=k, note=f"{name} tp{tp} {label}", cost=0.8,
                             file="mixed"))
    # Trim to the budget: drop rows of the least needed kinds first (fp8
    # GEMMs, bf16 GEMMs, decodes, mixed, then prefills), the most expensive
    # of a kind first, never below three rows of a kind.
    priority = {"gemm-fp8": 0, "gemm": 1, "decode": 2, "mixed": 3, "prefill": 4}
    total = sum(r["cost"] for r in rows)
    left = {}
    for r in rows:
        key = r["model"] if r["kind"] == "gemm" else r["kind"]
        r["_key"] = key
        left[key] = left.get(key, 0) + 1
    order = sorted(range(len(rows)), key=lambda i: (priority[rows[i]["_key"]], -rows[i]["cost"], i))
    drop = set()
    for i in order:
        if total <= budget_s:
            break
        if left[rows[i]["_key"]] <= 3:
            continue
        left[rows[i]["_key"]] -= 1
        drop.add(i)
        total -= rows[i]["cost"]
    rows = [r for i, r in enumerate(rows) if i not in drop]
    return rows


def fmt(row):
    out = []
    for c in COLUMNS:
        v = row.get(c, "")
        out.append(f'"{v}"' if isinstance(v, str) and ("," in v or '"' in v) else str(v))
    return ",".join(out)


class Sampler:
    """Samples board power and SM clock every 20 ms while running."""

    def __init__(self, handle):
        self.handle, self.samples, self.stop = handle, [], threading.Event()

    def __enter__(self):
        if self.handle is not None:
            self.thread = threading.Thread(target=self.run, daemon=True)
            self.thread.start()
        return self

    def run(self):
        import pynvml
        while not self.stop.is_set():
            try:
                p = pynvml.nvmlDeviceGetPowerUsage(self.handle) / 1000.0
                c = pynvml.nvmlDeviceGetClockInfo(self.handle, pynvml.NVML_CLOCK_SM)
                self.samples.append((p, c))
            except pynvml.NVMLError:
                pass
            time.sleep(POWER_PERIOD_S)

    def __exit__(self, *exc):
        self.stop.set()
        if self.handle is not None:
            self.thread.join()

    def averages(self):
        kept = self.samples[len(self.samples) // 4:]
        if not kept:
            return "", ""
        return (round(sum(p for p, _ in kept) / len(kept), 1), round(sum(c for _, c in kept) / len(kept)))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    src = ap.add_mutually_exclusive_group()
    src.add_argument("--model", default="llama3.1-8b", help="built-in shape: " + ", ".join(sorted(BUILTIN)))
    src.add_argument("--config", help="a Hugging Face config.json of a dense Llama-like model")
    ap.add_argument("--tp", default="1", help="comma-separated tensor-parallel shares to measure (default 1)")
    ap.add_argument("--out", help="output directory (kernels.csv, mixed.csv, meta.json)")
    ap.add_argument("--budget-minutes", type=float, default=5.0, help="time budget for the measurement (default 5)")
    ap.add_argument("--memory-gib", type=float, default=80.0, help="with --dry-run: the GPU memory to plan for")
    ap.add_argument("--dry-run", action="store_true", help="print the header and planned rows; needs no GPU")
    args = ap.parse_args()

    if args.config:
        shape, name = shape_from_config(args.config), os.path.basename(os.path.dirname(os.path.abspath(args.config))) or "custom"
    else:
        if args.model not in BUILTIN:
            fail(f"profile.py: --model {args.model}: unknown; built-in: {', '.join(sorted(BUILTIN))} (or --config)")
        shape, name = BUILTIN[args.model], args.model
    try:
        tps = [int(t) for t in args.tp.split(",")]
    except ValueError:
        fail(f"profile.py: --tp {args.tp}: expected comma-separated integers")
    if any(t < 1 for t in tps):
        fail(f"profile.py: --tp {args.tp}: expected positive integers")
    if not (args.budget_minutes > 0):
        fail("profile.py: --budget-minutes: expected a positive number")
    budget = args.budget_minutes * 60 / len(tps)

    if args.dry_run:
        print(",".join(COLUMNS))
        for tp in tps:
            for r in plan(name, share(shape, tp), tp, args.memory_gib * 2**30, budget):
                print(fmt(r))
        return
    if not args.out:
        fail("profile.py: --out DIR is required (or --dry-run)")
    measure(args, name, shape, tps, budget)


def measure(args, name, shape, tps, budget):
    import torch
    import torch.nn.functional as F

    if not torch.cuda.is_available():
        fail("profile.py: no CUDA GPU visible to PyTorch")
    dev = torch.device("cuda")
    props = torch.cuda.get_device_properties(dev)
    handle = None
    try:
        import pynvml
        pynvml.nvmlInit()
        handle = pynvml.nvmlDeviceGetHandleByIndex(torch.cuda.current_device())
        power_limit = pynvml.nvmlDeviceGetEnforcedPowerLimit(handle) / 1000.0
        driver = pynvml.nvmlSystemGetDriverVersion()
        driver = driver.decode() if isinstance(driver, bytes) else driver
    except Exception as e:  # pynvml absent or no NVML: no power columns
        print(f"profile.py: no NVML ({e}): power and clock columns left empty", file=sys.stderr)
        power_limit, driver = "", ""
    start = time.time()
    bf16 = torch.bfloat16
    flash = hasattr(torch.nn.attention, "SDPBackend")

    def timed(fn):
        """Captures fn as a CUDA graph, replays it >= 0.6 s; returns (ms, iters, power, mhz)."""
        s = torch.cuda.Stream()
        s.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(s):
            for _ in range(3):
                fn()
        torch.cuda.current_stream().wait_stream(s)
        g = torch.cuda.CUDAGraph()
        with torch.cuda.graph(g):
            fn()
        g.replay()
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        g.replay()
        torch.cuda.synchronize()
        one = max(time.perf_counter() - t0, 1e-6)
        iters = max(5, math.ceil(MIN_TIMED_S / one))
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        with Sampler(handle) as smp:
            a.record()
            for _ in range(iters):
                g.replay()
            b.record()
            torch.cuda.synchronize()
        del g
        p, c = smp.averages()
        return round(a.elapsed_time(b) / iters, 4), iters, p, c

    kernels, mixed = [], []
    for tp in tps:
        s = share(shape, tp)
        rows = plan(name, s, tp, props.total_memory, budget)
        h, d, L = s["hidden"], s["head_dim"], s["layers"]
        hq, hk = s["heads"], s["kv_heads"]
        layers = []
        for _ in range(L):
            layers.append(dict(
                qkv=torch.randn(h, (hq + 2 * hk) * d, device=dev, dtype=bf16) * 0.02,
                o=torch.randn(hq * d, h, device=dev, dtype=bf16) * 0.02,
                gu=torch.randn(h, 2 * s["ffn"], device=dev, dtype=bf16) * 0.02,
                down=torch.randn(s["ffn"], h, device=dev, dtype=bf16) * 0.02,
                n1=torch.ones(h, device=dev, dtype=bf16), n2=torch.ones(h, device=dev, dtype=bf16)))
        head = torch.randn(h, s["vocab"], device=dev, dtype=bf16) * 0.02

        def ffn(x, w):
            y = F.rms_norm(x, (h,), w["n2"])
            gu = y @ w["gu"]
            g, u = gu.chunk(2, dim=-1)
            return x + (F.silu(g) * u) @ w["down"]

        def prefill_fn(prompts, t):
            x = torch.randn(prompts, t, h, device=dev, dtype=bf16)

            def run():
                y = x
                for w in layers:
                    z = F.rms_norm(y, (h,), w["n1"]) @ w["qkv"]
                    q, k, v = z.split([hq * d, hk * d, hk * d], dim=-1)
                    q = q.view(prompts, t, hq, d).transpose(1, 2)
                    k = k.view(prompts, t, hk, d).transpose(1, 2)
                    v = v.view(prompts, t, hk, d).transpose(1, 2)
                    a = F.scaled_dot_product_attention(q, k, v, is_causal=True, enable_gqa=True)
                    y = ffn(y + a.transpose(1, 2).reshape(prompts, t, hq * d) @ w["o"], w)
                return y[:, -1] @ head
            return run

        def decode_fn(b, ctx, chunk=0):
            """b decodes at ctx tokens each (the new token is the last of the
            ctx cached ones), plus, when chunk > 0, one prefill chunk of chunk
            tokens that does not attend to earlier chunks: their GEMMs run
            over the b + chunk token rows together, as in a mixed batch."""
            caches = [(torch.randn(b, hk, ctx, d, device=dev, dtype=bf16),
                       torch.randn(b, hk, ctx, d, device=dev, dtype=bf16)) for _ in range(L)]
            x = torch.randn(b + chunk, h, device=dev, dtype=bf16)
            g = hq // hk

            def run():
                y = x
                for w, (kc, vc) in zip(layers, caches):
                    z = F.rms_norm(y, (h,), w["n1"]) @ w["qkv"]
                    q, k, v = z.split([hq * d, hk * d, hk * d], dim=-1)
                    kc[:, :, ctx - 1] = k[:b].view(b, hk, d)
                    vc[:, :, ctx - 1] = v[:b].view(b, hk, d)
                    # each KV head's query heads as query rows
                    a = F.scaled_dot_product_attention(q[:b].view(b, hk, g, d), kc, vc).reshape(b, hq * d)
                    if chunk:
                        ap_ = F.scaled_dot_product_attention(q[b:].view(1, chunk, hq, d).transpose(1, 2),
                                                             k[b:].view(1, chunk, hk, d).transpose(1, 2),
                                                             v[b:].view(1, chunk, hk, d).transpose(1, 2),
                                                             is_causal=True, enable_gqa=True)
                        a = torch.cat([a, ap_.transpose(1, 2).reshape(chunk, hq * d)])
                    y = ffn(y + a @ w["o"], w)
                last = y[:b] if not chunk else torch.cat([y[:b], y[-1:]])
                return last @ head
            return run, caches

        for r in rows:
            if r["kind"] == "gemm":
                dt = bf16
                a = torch.randn(r["m"], r["k"], device=dev, dtype=bf16)
                bm = torch.randn(r["n"], r["k"], device=dev, dtype=bf16)
                if r["model"] == "gemm-fp8":
                    if not hasattr(torch, "float8_e4m3fn") or props.major < 9:
                        continue
                    dt = torch.float8_e4m3fn
                    a8, b8 = a.to(dt), bm.to(dt)
                    one = torch.ones((), device=dev)
                    fn = lambda: torch._scaled_mm(a8, b8.t(), scale_a=one, scale_b=one, out_dtype=bf16)  # noqa: E731
                else:
                    fn = lambda: a @ bm.t()  # noqa: E731
                ms, it, p, c = timed(fn)
                tf = 2 * r["m"] * r["n"] * r["k"] / (ms * 1e-3) / 1e12
                r["note"] = f'{r["note"]}; {tf:.1f} TFLOP/s'
            elif r["kind"] == "prefill":
                ms, it, p, c = timed(prefill_fn(r["prompts"], r["tokens_per_prompt"]))
                r["note"] = "attention=flash+gqa" if flash else "attention=sdpa"
            elif r["kind"] == "decode":
                fn, caches = decode_fn(r["batch"], r["context_per_request"])
                ms, it, p, c = timed(fn)
                kv = sum(k.numel() + v.numel() for k, v in caches) * 2 / 1e9
                r["note"] = f"kv {kv:.1f} GB"
                del caches
            else:  # mixed
                fn, caches = decode_fn(r["batch"], r["context_per_request"], r["tokens_per_prompt"])
                ms, it, p, c = timed(fn)
                r["note"] = "prefill chunk (no prior-chunk context) + decodes"
                del caches
            torch.cuda.empty_cache()
            r.update(time_ms=ms, iters=it, cuda_graph=True, avg_power_w=p, avg_sm_mhz=c)
            (mixed if r.get("file") == "mixed" else kernels).append(r)
            print(f"profile.py: {fmt(r)}", file=sys.stderr)
        del layers, head
        torch.cuda.empty_cache()

    # A 4 GiB device-to-device copy (read + write bandwidth) and idle power.
    n = 2**31
    src, dst = torch.empty(n, dtype=torch.uint8, device=dev), torch.empty(n, dtype=torch.uint8, device=dev)
    ms, it, p, c = timed(lambda: dst.copy_(src))
    kernels.append(dict(model="copy", kind="copy", m=n, time_ms=ms, iters=it, cuda_graph=True, avg_power_w=p,
                        avg_sm_mhz=c, note=f"{2 * n / (ms * 1e-3) / 1e12:.2f} TB/s read+write"))
    del src, dst
    torch.cuda.synchronize()
    time.sleep(1)
    with Sampler(handle) as smp:
        time.sleep(2.5)
    p, c = smp.averages()
    mixed.insert(0, dict(model="idle", kind="idle", time_ms=2500, avg_power_w=p, avg_sm_mhz=c,
                         note="no kernel running, after 1 s rest"))

    os.makedirs(args.out, exist_ok=True)
    for fname, rows in (("kernels.csv", kernels), ("mixed.csv", mixed)):
        tmp = os.path.join(args.out, fname + ".tmp")
        with open(tmp, "w") as f:
            f.write(",".join(COLUMNS) + "\n")
            for r in rows:
                f.write(fmt(r) + "\n")
        os.replace(tmp, os.path.join(args.out, fname))
    meta = dict(gpu=props.name, sms=props.multi_processor_count, mem_gib=round(props.total_memory / 2**30, 1),
                torch=torch.__version__, cuda=torch.version.cuda, driver=driver, power_limit_w=power_limit,
                flash=flash, elapsed_s=round(time.time() - start, 1),
                prefill_attention="flash+gqa" if flash else "sdpa")
    with open(os.path.join(args.out, "meta.json"), "w") as f:
        json.dump({k: meta[k] for k in META_KEYS}, f, indent=1)
    print(f"profile.py: wrote {args.out}/kernels.csv, mixed.csv, meta.json in {time.time() - start:.0f} s",
          file=sys.stderr)


if __name__ == "__main__":
    main()
