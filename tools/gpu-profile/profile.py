#!/usr/bin/env python3
"""Measure engine-level iteration times of a Llama-like model (dense or mixture of experts) on your GPU.

Writes, under --out DIR, the same three files as the project's shared H100
measurement (shared/data/gpu-kernels/h100/): kernels.csv, mixed.csv and
meta.json, with the same columns in the same order, the same `kind` values
(prefill, decode, mixed, gemm, copy, idle) and the same meaning of every
column, measured by the same method (see README.md beside this file):

- one layer = RMSNorm, fused QKV GEMM, attention, O GEMM, residual, RMSNorm,
  fused gate-up GEMM, SiLU*mul, down GEMM, residual; no rotary embedding; the
  LM head for the last token of each sequence after the last layer; bf16,
  random weights, every layer its own weights and its own KV cache;
- a mixture-of-experts layer (all but the model's first dense layers) has,
  in place of the FFN: the router GEMM (hidden x experts, full on every GPU)
  and its top-k, the routed rows (tokens x k) permuted to their experts, two
  grouped GEMMs over the experts (gate-up, down; torch._grouped_mm, or a loop
  of matmuls where it is missing: the note says which) with SiLU*mul between,
  the rows combined back with the routing weights, and the shared experts as
  a dense FFN; the experts are TP-sharded (each expert's FFN width divided by
  tp, no all-to-all); the routing is fixed per shape: every token's k distinct
  experts drawn uniformly at random with the row count as seed (moe_route);
- tensor parallelism tp > 1 is the per-GPU share of a TP-sharded layer (query
  and KV heads, FFN and vocabulary divided by tp), with NO all-reduce;
- prefill: causal flash attention (SDPA, flash backend, GQA native);
  decode: SDPA (flash or memory-efficient backend) with each KV head's query
  heads as query rows over a contiguous cache of exactly
  context_per_request tokens per request, the new token's K and V written
  into the cache; mixed: one prefill chunk (no earlier chunks) plus `batch`
  decodes in one pass (shared GEMMs, separate attention);
- every iteration replayed as a CUDA graph; time = CUDA-event time of `iters`
  replays (at least 0.6 s in all and at least 5, after warm-up) / iters;
- power and SM clock: NVML sampled every 20 ms during the timed window, the
  first quarter of the samples dropped (empty columns without pynvml).

Supported architectures: decoder-only transformers with grouped-query (or
multi-head) attention, RMSNorm and a SiLU-gated FFN (Llama, Mistral without
sliding window, Qwen2, Qwen3 dense) or SiLU-gated routed experts (Mixtral,
Qwen2-MoE, Qwen3-MoE, MiniMax-M2.5), and mixtures of experts with multi-head
latent attention (DeepSeek-V3/R1, Kimi-K2.5: q_a and kv_a whole on every GPU,
q_b, kv_b and O split by heads; prefill decompressed through kv_b into causal
flash attention, V zero-padded to the qk width; decode in the weight-absorbed
form over a cache of the latent + rotary key, whole on every GPU, as two
batched GEMMs with a softmax between). Sliding-window layers (gpt-oss, Mistral
7B v0.1): prompts longer than the window through a kernel that skips the
blocks outside it (flash-attn's window_size, else torch flex_attention
compiled with a sliding-window block mask; with neither the run stops before
measuring, exit 2), decodes over a cache of the last `window` tokens;
attention sinks are left out. Linear attention (Qwen3.5) is refused with a
message: this script has no honest way to measure it yet.

--weights fp8 (dense GQA models): the four projections of every layer (QKV,
O, gate-up, down) hold e4m3 weights and run as torch._scaled_mm with
per-tensor scales, each GEMM's input cast to e4m3 first (a static-scale
quantization, as FP8 checkpoints with calibrated input scales serve it; the
cast is its own kernel, which engines fuse into the norm before it); norms,
attention, the KV cache and the LM head stay bf16. Its iteration rows name
the model with an -fp8 suffix (llama3.1-8b-fp8) and their notes say so.

--dry-run needs neither a GPU nor torch: it prints the planned rows and the
CSV header and measures nothing.
"""

import argparse
import csv
import io
import json
import math
import os
import random
import signal
import sys
import threading
import time

# This file is named profile.py, so run as a script its folder (sys.path[0])
# shadows the standard library's profile module, which torch.compile imports
# (through cProfile): drop the folder, which holds nothing this script imports.
if __name__ == "__main__" and sys.path and os.path.abspath(sys.path[0] or ".") == os.path.dirname(os.path.abspath(__file__)):
    sys.path.pop(0)

# COLUMNS is the header of kernels.csv and mixed.csv, in order.
COLUMNS = [
    "model", "tp", "layers", "kind", "prompts", "tokens_per_prompt", "batch",
    "context_per_request", "m", "n", "k", "time_ms", "iters", "cuda_graph",
    "avg_power_w", "avg_sm_mhz", "note",
]

# META_KEYS are the keys of meta.json, in order.
META_KEYS = [
    "gpu", "sms", "mem_gib", "torch", "cuda", "driver", "power_limit_w",
    "flash", "elapsed_s", "prefill_attention",
]

# KINDS are the values of the kind column.
KINDS = ("prefill", "decode", "mixed", "gemm", "copy", "idle")

MIN_TIMED_S = 0.6      # CUDA-event timed window of graph replays, at least
MIN_ITERS = 5          # and at least this many replays
SAMPLE_S = 0.020       # NVML sampling period
IDLE_MS = 2500         # idle power window
COPY_ELEMS = 1 << 31   # bf16 elements of the device-to-device copy (4 GiB)

HERE = os.path.dirname(os.path.abspath(__file__))
MODELS_CSV = os.path.normpath(os.path.join(HERE, "..", "..", "data", "measured-serving", "models.csv"))

# Built-in shapes not in models.csv (Llama-like ones only).
EXTRA_SHAPES = {
    # meta-llama/Llama-2-70b-hf: 80 layers, hidden 8192, 64 heads, 8 KV heads,
    # SwiGLU FFN 28672, vocabulary 32000 (as arch/builtin.go).
    "llama2-70b": dict(layers=80, hidden=8192, heads=64, kv_heads=8, head_dim=128,
                       intermediate=28672, vocab=32000),
}


class ProfileError(Exception):
    """A user error: printed as one line, exit status 2."""


def short_name(name):
    """The repository's arch.ShortName, ported: 'meta-llama/Llama-3.1-8B-Instruct' -> 'llama3.1-8b'."""
    s = name.strip().lower()
    if "/" in s:
        s = s[s.rindex("/") + 1:]
    s = s.replace("_", "-")
    sufs = ["-fp8", "-nvfp4", "-fp4", "-mxfp4", "-awq", "-gptq", "-int4",
            "-instruct", "-chat", "-hf", "-base", "-v0.1", "-bf16"]
    changed = True
    while changed:
        changed = False
        for suf in sufs:
            if s.endswith(suf) and len(s) > len(suf):
                s = s[: -len(suf)]
                changed = True
    if s.startswith("meta-"):
        s = s[len("meta-"):]
    if s.startswith("llama-") and len(s) > 6 and s[6].isdigit():
        s = "llama" + s[6:]
    return s


# MLA_FIELDS are the latent-attention fields of Shape.mla and their names in
# a Hugging Face config (and data/measured-serving/models.csv).
MLA_FIELDS = dict(kv_lora="kv_lora_rank", q_lora="q_lora_rank", rope="qk_rope_head_dim",
                  nope="qk_nope_head_dim", v="v_head_dim")


class Shape:
    """The per-model shape (whole model, before the TP split).

    A mixture-of-experts model has experts > 0: topk routed experts per token
    out of experts, each a SiLU-gated FFN moe_ffn wide, plus shared_ffn of
    shared-expert width every token goes through (0: none), in every layer
    but the first_dense ones, which have a dense FFN intermediate wide."""

    def __init__(self, name, layers, hidden, heads, kv_heads, head_dim, intermediate, vocab,
                 experts=0, topk=0, moe_ffn=0, shared_ffn=0, first_dense=0, mla=None, window=0, sliding=None):
        self.name, self.layers, self.hidden = name, layers, hidden
        self.heads, self.kv_heads, self.head_dim = heads, kv_heads, head_dim
        self.intermediate, self.vocab = intermediate, vocab
        self.experts, self.topk, self.moe_ffn = experts, topk, moe_ffn
        self.shared_ffn, self.first_dense = shared_ffn, first_dense
        # mla: multi-head latent attention (DeepSeek-V3) as a dict of kv_lora, q_lora (0: a
        # full-rank query), rope, nope, v; None: grouped-query attention
        self.mla = dict(mla) if mla else None
        if self.mla:
            for k in ("kv_lora", "q_lora", "rope", "nope", "v"):
                v = self.mla.get(k)
                if not isinstance(v, int) or v < (0 if k == "q_lora" else 1):
                    want = "a non-negative" if k == "q_lora" else "a positive"
                    raise ProfileError(f"model {name}: latent attention {MLA_FIELDS[k]} = {v!r}, want {want} integer")
            # the query/key head width: head_dim is the non-rotary plus the rotary part
            self.head_dim = head_dim = self.mla["nope"] + self.mla["rope"]
            self.kv_heads = kv_heads = heads
        # window > 0: the layers i with sliding[i] attend to at most the last `window` tokens
        self.window = window or 0
        self.sliding = tuple(bool(x) for x in sliding) if sliding else None
        if self.window or self.sliding:
            if not isinstance(window, int) or window < 1:
                raise ProfileError(f"model {name}: sliding_window = {window!r}, want a positive integer")
            if not self.sliding or len(self.sliding) != layers or not any(self.sliding):
                raise ProfileError(f"model {name}: sliding-window layers {sliding!r}: want one flag per layer "
                                   f"({layers}), at least one set")
            if self.mla:
                raise ProfileError(f"model {name}: sliding-window latent attention is not supported")
        for k in ("layers", "hidden", "heads", "kv_heads", "head_dim", "vocab"):
            v = getattr(self, k)
            if not isinstance(v, int) or v <= 0:
                raise ProfileError(f"model {name}: {k} = {v!r}, want a positive integer")
        for k in ("intermediate", "experts", "topk", "moe_ffn", "shared_ffn", "first_dense"):
            v = getattr(self, k)
            if not isinstance(v, int) or v < 0:
                raise ProfileError(f"model {name}: {k} = {v!r}, want a non-negative integer")
        if heads % kv_heads:
            raise ProfileError(f"model {name}: {heads} heads not a multiple of {kv_heads} KV heads")
        if experts:
            if not 1 <= topk <= experts:
                raise ProfileError(f"model {name}: {topk} experts per token of {experts}: want 1 <= k <= experts")
            if moe_ffn <= 0:
                raise ProfileError(f"model {name}: expert FFN width {moe_ffn}: want a positive integer")
            if first_dense >= layers:
                raise ProfileError(f"model {name}: {first_dense} first dense layers of {layers}: want fewer")
            if first_dense and intermediate <= 0:
                raise ProfileError(f"model {name}: {first_dense} dense layers but no dense FFN width")
        elif intermediate <= 0:
            raise ProfileError(f"model {name}: intermediate = {intermediate!r}, want a positive integer")

    @property
    def moe(self):
        """Whether the model has routed experts."""
        return self.experts > 0

    def latent(self):
        """The values one token adds to one MLA layer's cache (kv_lora_rank + qk_rope_head_dim): 0 for GQA."""
        return self.mla["kv_lora"] + self.mla["rope"] if self.mla else 0

    def window_layers(self):
        """The number of sliding-window layers (0 without a window)."""
        return sum(self.sliding) if self.sliding else 0

    def dense_layers(self):
        """The layers with a dense FFN: all of a dense model, the first_dense of an MoE one."""
        return self.first_dense if self.moe else self.layers

    def moe_layers(self):
        """The layers with routed experts."""
        return self.layers - self.dense_layers()

    def first(self, n):
        """The model's first n layers (all when n is None or at least layers), as the script runs them."""
        if n is None or n >= self.layers:
            return self
        if n < 1 or (self.moe and n <= self.first_dense):
            need = f"{self.first_dense + 1} (one routed-expert layer)" if self.moe else "1"
            raise ProfileError(f"--max-layers {n}: model {self.name} needs at least {need}")
        if self.sliding:
            raise ProfileError(f"--max-layers {n}: model {self.name} has sliding-window layers, whose order "
                               "perf fit --kernels does not know: it reads only whole such models (use a larger --tp)")
        return Shape(self.name, n, self.hidden, self.heads, self.kv_heads, self.head_dim, self.intermediate,
                     self.vocab, self.experts, self.topk, self.moe_ffn, self.shared_ffn, self.first_dense, self.mla)

    def share(self, tp):
        """The per-GPU share at tensor parallelism tp: (heads, kv_heads, ffn, vocab)."""
        if tp < 1:
            raise ProfileError(f"--tp {tp}: want >= 1")
        if self.heads % tp:
            raise ProfileError(f"model {self.name}: {self.heads} heads do not split over --tp {tp}")
        for what, v in (("FFN", self.intermediate), ("expert FFN", self.moe_ffn), ("shared-expert FFN", self.shared_ffn)):
            if v % tp:
                raise ProfileError(f"model {self.name}: {what} {v} does not split over --tp {tp}")
        if self.kv_heads % tp == 0:
            kv = self.kv_heads // tp
        elif tp % self.kv_heads == 0:
            kv = 1  # KV heads replicated: each GPU keeps one
        else:
            raise ProfileError(f"model {self.name}: {self.kv_heads} KV heads do not split over --tp {tp}")
        return self.heads // tp, kv, self.intermediate // tp, -(-self.vocab // tp)

    def moe_share(self, tp):
        """The per-GPU widths of one expert and of the shared experts at tp (TP-sharded experts)."""
        self.share(tp)
        return self.moe_ffn // tp, self.shared_ffn // tp


def _int(row, key, where):
    v = (row.get(key) or "").strip()
    if v == "":
        return None
    try:
        return int(v)
    except ValueError:
        raise ProfileError(f"{where}: {key} = {v!r}, want an integer")


def _refuse_unsupported(name, linear, where):
    if linear:
        raise ProfileError(f"{where}: {name} has linear-attention (Gated DeltaNet) layers; this profiler measures "
                           "full-attention models only (GQA or latent)")


# SLIDING_LAYERS are the built-ins with sliding-window layers, and which of their
# layers have the window (models.csv has the window, not the pattern; the
# config's layer_types has it): gpt-oss alternates, the first layer windowed.
SLIDING_LAYERS = {"gpt-oss-120b": lambda i: i % 2 == 0}

# LINEAR_ATTENTION are the built-ins with linear-attention layers, a fact
# models.csv lacks (arch/internal/genarch adds it from the model's config).
LINEAR_ATTENTION = ("qwen3.5-397b-a17b",)


def builtin_shapes(models_csv=MODELS_CSV):
    """The built-in shapes: data/measured-serving/models.csv (the table arch/ is generated from) + EXTRA_SHAPES.

    Returns {short name: row dict or Shape kwargs}."""
    out = {}
    try:
        f = open(models_csv, newline="")
    except OSError as e:
        raise ProfileError(f"built-in shapes: {e} (use --config config.json)")
    with f:
        for i, row in enumerate(csv.DictReader(f), start=2):
            out[short_name(row["model"])] = (row, f"{models_csv}:{i}")
    for k, v in EXTRA_SHAPES.items():
        out[k] = (v, "profile.py EXTRA_SHAPES")
    return out


def builtin_shape(name, models_csv=MODELS_CSV):
    """The built-in shape called name (short name or Hugging Face path)."""
    table = builtin_shapes(models_csv)
    want = short_name(name)
    if want not in table:
        raise ProfileError(f"--model {name}: unknown; built-in: {', '.join(sorted(table))} "
                           "(or pass --config config.json)")
    row, where = table[want]
    if "layers" in row and isinstance(row["layers"], int):
        return Shape(want, **row)
    _refuse_unsupported(want, want in LINEAR_ATTENTION, where)
    window = _int(row, "sliding_window", where) or 0
    sliding = None
    if window:
        if want not in SLIDING_LAYERS:
            raise ProfileError(f"{where}: {want} has a sliding window but its layer pattern is not known to this "
                               "script (pass its --config config.json with layer_types)")
        sliding = [SLIDING_LAYERS[want](i) for i in range(_int(row, "layers", where) or 0)]
    mla = None
    if _int(row, "kv_lora_rank", where):
        mla = {k: _int(row, col, where) for k, col in MLA_FIELDS.items()}
        mla["q_lora"] = mla["q_lora"] or 0
    heads, hidden = _int(row, "heads", where), _int(row, "hidden", where)
    hd = _int(row, "head_dim", where) or (hidden // heads)
    inter = _int(row, "intermediate", where) or 0
    experts = _int(row, "experts", where) or 0
    moe = {}
    if experts:
        # as arch/internal/genarch reads the table: without moe_intermediate
        # the intermediate column is the expert width and every layer is MoE;
        # shared experts are each an expert wide
        ew = _int(row, "moe_intermediate", where)
        first = _int(row, "first_dense_layers", where) or 0
        if ew is None:
            ew, inter = inter, 0
        if not first:
            inter = 0
        moe = dict(experts=experts, topk=_int(row, "experts_per_token", where) or 0, moe_ffn=ew,
                   shared_ffn=(_int(row, "shared_experts", where) or 0) * ew, first_dense=first)
    return Shape(want, _int(row, "layers", where), hidden, heads, _int(row, "kv_heads", where) or heads, hd,
                 inter, _int(row, "vocab", where), mla=mla, window=window, sliding=sliding, **moe)


SUPPORTED_MODEL_TYPES = ("llama", "mistral", "qwen2", "qwen3")
# SUPPORTED_MOE_TYPES are the mixture-of-experts model types: GQA attention,
# RMSNorm, SiLU-gated experts, a softmax router.
SUPPORTED_MOE_TYPES = ("mixtral", "qwen2_moe", "qwen3_moe", "gpt_oss")
# SUPPORTED_MLA_TYPES are the model types with multi-head latent attention
# (kv_lora_rank and the rest) and SiLU-gated routed and shared experts.
SUPPORTED_MLA_TYPES = ("deepseek_v3", "kimi_k2")


def config_shape(path, name=None):
    """The shape of a Hugging Face config.json (a dense Llama-like model or a GQA mixture of experts)."""
    try:
        with open(path) as f:
            cfg = json.load(f)
    except (OSError, ValueError) as e:
        raise ProfileError(f"--config {path}: {e}")
    if not isinstance(cfg, dict):
        raise ProfileError(f"--config {path}: not a JSON object")
    if isinstance(cfg.get("text_config"), dict):
        cfg = cfg["text_config"]
    mt = cfg.get("model_type", "")
    where = f"--config {path}"
    label = name or short_name(cfg.get("_name_or_path") or os.path.basename(os.path.dirname(os.path.abspath(path))) or mt)
    experts = next((cfg[k] for k in ("num_local_experts", "num_experts", "n_routed_experts") if cfg.get(k)), 0)
    mla = bool(cfg.get("kv_lora_rank"))
    window = cfg.get("sliding_window") if cfg.get("use_sliding_window", True) else None
    types = cfg.get("layer_types") or []
    linear = any("linear" in str(t) for t in types)
    _refuse_unsupported(label, linear, where)
    sliding = None
    if types and any("sliding" in str(t) for t in types):
        sliding = ["sliding" in str(t) for t in types]
    elif window and cfg.get("max_window_layers") is not None and cfg.get("use_sliding_window"):
        raise ProfileError(f"{where}: {label} uses a sliding window on layers from max_window_layers on; "
                           "this profiler reads the window's layers from layer_types only")
    elif window:
        sliding = [True] * (cfg.get("num_hidden_layers") or 0)  # every layer windowed (Mistral 7B v0.1)
    if sliding and not isinstance(window, int):
        raise ProfileError(f"{where}: sliding-window layers but sliding_window = {window!r}, want an integer")
    if not sliding:
        window = 0
    if mla:
        supported = SUPPORTED_MLA_TYPES
        kind = "multi-head latent attention, RMSNorm, SiLU-gated experts"
    elif experts:
        supported = SUPPORTED_MOE_TYPES
        kind = "mixture-of-experts (GQA attention, RMSNorm, SiLU-gated experts)"
    else:
        supported, kind = SUPPORTED_MODEL_TYPES, "dense GQA, RMSNorm, SiLU-gated FFN"
    if mt not in supported:
        raise ProfileError(f"{where}: model_type {mt!r} not supported; supported ({kind}): {', '.join(supported)}")
    act = cfg.get("hidden_act", "silu")
    if act != "silu":
        raise ProfileError(f"{where}: hidden_act {act!r}; only the SiLU-gated FFN is supported")
    need = ["num_hidden_layers", "hidden_size", "num_attention_heads", "intermediate_size", "vocab_size"]
    if experts:
        need.append("num_experts_per_tok")
    if mla:
        need += [col for k, col in MLA_FIELDS.items() if k != "q_lora"]
    miss = [k for k in need if not isinstance(cfg.get(k), int)]
    if miss:
        raise ProfileError(f"{where}: missing or non-integer {', '.join(miss)}")
    if mla and not isinstance(cfg.get("q_lora_rank") or 0, int):
        raise ProfileError(f"{where}: q_lora_rank = {cfg.get('q_lora_rank')!r}, want an integer or null")
    heads = cfg["num_attention_heads"]
    kv = cfg.get("num_key_value_heads") or heads
    hd = cfg.get("head_dim") or cfg["hidden_size"] // heads
    layers, inter = cfg["num_hidden_layers"], cfg["intermediate_size"]
    moe = {}
    if experts:
        if cfg.get("mlp_only_layers") or cfg.get("decoder_sparse_step", 1) != 1 or cfg.get("moe_layer_freq", 1) != 1:
            raise ProfileError(f"{where}: {label} interleaves dense and MoE layers (mlp_only_layers, "
                               "decoder_sparse_step, moe_layer_freq); this profiler runs leading dense layers "
                               "then MoE layers only")
        ew = cfg.get("moe_intermediate_size") or inter  # Mixtral: intermediate_size is the expert width
        shared = (cfg.get("shared_expert_intermediate_size") or 0) + \
            (cfg.get("n_shared_experts") or 0) * ew
        first = cfg.get("first_k_dense_replace") or 0
        moe = dict(experts=experts, topk=cfg["num_experts_per_tok"], moe_ffn=ew, shared_ffn=shared,
                   first_dense=first)
        if not first:
            inter = 0
    if mla:
        mla = {k: cfg.get(col) or 0 for k, col in MLA_FIELDS.items()}
        kv = heads
        hd = mla["nope"] + mla["rope"]
    return Shape(label, layers, cfg["hidden_size"], heads, kv, hd, inter, cfg["vocab_size"], mla=mla or None,
                 window=window, sliding=sliding, **moe)


# ---------------------------------------------------------------- planning

class Row:
    """One planned (then measured) row."""

    def __init__(self, file, tier, **fields):
        self.file, self.tier = file, tier
        self.f = {c: "" for c in COLUMNS}
        self.f.update(fields)
        self.shape = None
        self.tp = None
        self.est_s = 0.0
        self.mem_bytes = 0
        self.weights = "bf16"

    def values(self):
        return [self.f[c] for c in COLUMNS]


def attention_gemms(shape, tp):
    """One layer's attention projections on one GPU at tp, as (name, n, k) GEMMs of K = k inputs, N = n outputs.

    GQA: the fused QKV and the O projection, heads split over tp. MLA (as
    vLLM and SGLang shard it): the query down-projection q_a (hidden ->
    q_lora_rank) and the KV down-projection kv_a (hidden -> kv_lora_rank +
    qk_rope_head_dim) whole on every GPU, the up-projections q_b (q_lora_rank
    -> heads x (nope + rope); without a query rank one hidden -> heads x
    (nope + rope) GEMM q) and kv_b (kv_lora_rank -> heads x (nope + v)) and
    the output projection o (heads x v -> hidden) split by heads."""
    h, kv, _, _ = shape.share(tp)
    H, d, m = shape.hidden, shape.head_dim, shape.mla
    if not m:
        return [("qkv", (h + 2 * kv) * d, H), ("o", H, h * d)]
    qk = m["nope"] + m["rope"]
    q = [("q_a", m["q_lora"], H), ("q_b", h * qk, m["q_lora"])] if m["q_lora"] else [("q", h * qk, H)]
    return q + [("kv_a", m["kv_lora"] + m["rope"], H), ("kv_b", h * (m["nope"] + m["v"]), m["kv_lora"]),
                ("o", H, h * m["v"])]


def weight_bytes(shape, tp, routed=None, fp8=False):
    """bytes of the weights one GPU holds at tp; routed: count that many experts per MoE layer (default all);
    fp8: the layers' projections at one byte (--weights fp8: dense models), the LM head at two.

    An MLA layer also keeps kv_b's two halves as the absorbed decode's
    per-head W_UK and W_UV (as engines do)."""
    h, kv, ffn, vocab = shape.share(tp)
    attn = sum(n * k for _, n, k in attention_gemms(shape, tp))
    if shape.mla:
        attn += h * (shape.mla["nope"] + shape.mla["v"]) * shape.mla["kv_lora"]
    dense = shape.dense_layers() * (attn + 3 * shape.hidden * ffn)
    moe = 0
    if shape.moe:
        fe, fs = shape.moe_share(tp)
        e = shape.experts if routed is None else routed
        moe = shape.moe_layers() * (attn + shape.hidden * shape.experts + 3 * shape.hidden * (e * fe + fs))
    return (1 if fp8 else 2) * (dense + moe) + 2 * shape.hidden * vocab


def kv_bytes(shape, tp, batch, context):
    """bf16 bytes of the KV cache one GPU holds: K and V of its KV heads, or the whole MLA latent
    (kv_lora_rank + qk_rope_head_dim per token and layer, the same on every GPU, as engines keep it)."""
    _, kv, _, _ = shape.share(tp)
    if shape.mla:
        return 2 * shape.layers * batch * context * shape.latent()
    # a sliding-window layer keeps the last `window` tokens only
    tokens = (shape.layers - shape.window_layers()) * context + shape.window_layers() * min(context, shape.window)
    return 2 * 2 * batch * kv * tokens * shape.head_dim


def prefill_attn_flops(shape, tp, prompts, tokens):
    """Causal attention FLOPs of prompts x tokens on one GPU (half the square; MLA: V padded to the qk width;
    a sliding-window layer's queries attend to at most `window` keys)."""
    h, _, _, _ = shape.share(tp)
    w = min(tokens, shape.window) if shape.window else tokens
    pairs = (shape.layers - shape.window_layers()) * tokens * tokens / 2 + \
        shape.window_layers() * (tokens * w - w * w / 2)
    return round(4 * prompts * pairs * h * shape.head_dim)


def decode_attn_flops(shape, tp, batch, context):
    """Decode attention FLOPs on one GPU: GQA 4 x heads x head_dim per context token; MLA's absorbed form
    2 x heads x (2 kv_lora_rank + qk_rope_head_dim) (scores over the latent + rope, values over the latent)."""
    h, _, _, _ = shape.share(tp)
    per = 2 * h * (shape.latent() + shape.mla["kv_lora"]) if shape.mla else 4 * h * shape.head_dim
    w = min(context, shape.window) if shape.window else context
    return batch * per * ((shape.layers - shape.window_layers()) * context + shape.window_layers() * w)


def act_bytes(shape, tp, tokens):
    """Activation working set of one iteration over `tokens` rows (generous: 12 live tensors of the widest row)."""
    h, kv, ffn, vocab = shape.share(tp)
    widest = max(shape.hidden, (h + 2 * kv) * shape.head_dim, 2 * ffn)
    if shape.mla:
        # the query, K and padded V at the qk width, kv_b's output, the absorbed query
        widest = max(widest, 3 * h * shape.head_dim, h * (shape.mla["nope"] + shape.mla["v"]), h * shape.latent())
    if shape.moe:
        fe, fs = shape.moe_share(tp)
        # the routed rows (tokens x topk) through the experts, the router's logits
        widest = max(widest, shape.topk * max(shape.hidden, 2 * fe), 2 * fs, shape.experts)
    return 2 * tokens * widest * 12 + 2 * min(tokens, 4096) * vocab


def iter_estimate_s(shape, tp, tokens, kv_read, attn_flops):
    """A rough roofline estimate of one iteration (for the time budget only: 300 TFLOP/s, 2 TB/s)."""
    flops = 2 * tokens * weight_bytes(shape, tp, routed=shape.topk if shape.moe else None) / 2 + attn_flops
    return max(flops / 300e12, (weight_bytes(shape, tp) + kv_read) / 2e12) + 2e-5 * shape.layers


def row_cost_s(it_s):
    """Wall time a row costs: warm-up and capture (about 6 iterations), the timed window, overhead."""
    timed = max(MIN_TIMED_S, MIN_ITERS * it_s)
    return 0.4 + 6 * it_s + timed


# MOE_BACKEND is the grouped-GEMM backend a plan's MoE notes name; a real run
# writes the one it used (grouped_mm, or matmul-loop where this PyTorch or GPU
# has no torch._grouped_mm for bf16).
MOE_BACKEND = "grouped_mm"

# FP8_NOTE is the note of --weights fp8 iteration rows; a real run adds
# "m padded to 16" where this PyTorch's torch._scaled_mm refused fewer rows.
FP8_NOTE = "weights=fp8 e4m3 per-tensor (torch._scaled_mm), inputs cast to e4m3 before each GEMM, lm head bf16"


def moe_note(shape, tp):
    """The note of an MoE model's iteration rows: the routing and the expert GEMMs' backend."""
    fe, fs = shape.moe_share(tp)
    n = f"moe: {shape.experts} experts top-{shape.topk}, TP-sharded experts ({fe} wide per GPU)"
    if fs:
        n += f", shared experts {fs} wide per GPU"
    if shape.first_dense:
        n += f", first {shape.first_dense} layers dense"
    return n + f"; routing=uniform-random fixed per shape (seed = tokens); experts={MOE_BACKEND}"


def mla_note(shape, tp, kind):
    """The note of an MLA model's iteration rows of kind: what its attention runs."""
    m, (h, _, _, _) = shape.mla, shape.share(tp)
    qk = m["nope"] + m["rope"]
    pad = f" (V padded to {qk})" if m["v"] < qk else ""
    parts = []
    if kind != "decode":
        parts.append(f"prefill: kv_b up-projection, causal flash qk {qk} v {m['v']}{pad}")
    if kind != "prefill":
        parts.append(f"decode: absorbed W_UK/W_UV, the heads over the {m['kv_lora']}+{m['rope']} latent as one "
                     f"KV head ({MLA_DECODE})")
    return f"mla {h} of {shape.heads} heads per GPU, latent whole on every GPU; " + "; ".join(parts)


# MLA_DECODE is the decode attention of MLA rows (Model._mla_decode): two
# batched GEMMs with a float32 softmax between, the keys the cached latent +
# rope (576 wide for DeepSeek-V3) and the values its first kv_lora_rank
# columns, a view of the same cache.
MLA_DECODE = "bmm-softmax-bmm"


# WINDOW_KERNEL is the sliding-window prefill kernel a plan's notes name; a
# real run writes the one it found (window_kernel): flash-attn (window_size),
# else flex (torch flex_attention, compiled, a sliding-window block mask).
WINDOW_KERNEL = "flash-attn"


def window_note(shape, kind):
    """The note of a sliding-window model's iteration rows: which layers have the window, what runs."""
    n = f"window {shape.window} on {shape.window_layers()} of {shape.layers} layers"
    if kind != "decode":
        n += f" (prompts over {shape.window} tokens: window-kernel={WINDOW_KERNEL})"
    if kind != "prefill":
        n += f" (decodes read the last {shape.window} cached tokens)"
    return n + "; no attention sinks"


PREFILL_SINGLE = [(1, 64, 2), (1, 128, 0), (1, 256, 2), (1, 512, 0), (1, 1024, 1), (1, 2048, 0),
                  (1, 4096, 1), (1, 8192, 0), (1, 16384, 1)]
PREFILL_BATCHED = [(4, 1024, 2), (16, 256, 2), (8, 1024, 2), (2, 4096, 2), (64, 64, 2)]
DECODE_CONTEXTS = [(128, 1), (512, 0), (2048, 0), (8192, 0), (32768, 1)]
DECODE_BATCHES = [(1, 0), (2, 2), (4, 1), (8, 0), (16, 1), (32, 1), (64, 0), (128, 1), (256, 0), (512, 1)]
GEMM_M = [(1, 0), (8, 1), (32, 1), (64, 0), (128, 1), (256, 1), (512, 0), (1024, 1), (2048, 1),
          (4096, 0), (8192, 2), (16384, 2)]
GEMM_M_FP8 = [(16, 0)] + [mt for mt in GEMM_M if mt[0] >= 32]  # torch._scaled_mm: M a multiple of 16
MIXED_CHUNKS = [(128, 1), (512, 1), (1024, 2), (2048, 1)]
MIXED_BATCHES = [16, 64]
MIXED_CONTEXT = 2048


def plan(shapes_tps, mem_bytes, budget_s, fp8=True, weights="bf16"):
    """The rows to measure: the full grid, thinned by tier to fit budget_s.

    weights: "bf16", or "fp8" (dense models only: their projections as e4m3
    GEMMs; the iteration rows' model is the name with an -fp8 suffix).

    shapes_tps: [(Shape, tp)]. mem_bytes: GPU memory (rows whose weights + KV +
    activations exceed 90% of it are left out). Returns (rows, estimated seconds)."""
    rows = []
    cap = 0.9 * mem_bytes
    wfp8 = weights == "fp8"
    rows.append(Row("mixed.csv", 0, model="idle", kind="idle", time_ms=IDLE_MS, note="no kernel running, after 1 s rest"))
    for shape, tp in shapes_tps:
        h, kv, ffn, vocab = shape.share(tp)
        if wfp8 and (shape.moe or shape.mla):
            raise ProfileError(f"--weights fp8: model {shape.name} has "
                               f"{'latent attention' if shape.mla else 'routed experts'}; fp8 weights are measured "
                               "for dense models only (run it without --weights fp8)")
        wb = weight_bytes(shape, tp, fp8=wfp8)
        if wb > cap:
            print(f"note: {shape.name} at tp {tp} needs {wb / 1e9:.1f} GB of weights per GPU, more than 90% of "
                  f"{mem_bytes / 1e9:.1f} GB: skipped (try a larger --tp"
                  f"{')' if shape.sliding else ', or --max-layers)'}", file=sys.stderr)
            continue
        base = dict(model=shape.name + ("-fp8" if wfp8 else ""), tp=tp, layers=shape.layers, cuda_graph="True")

        def add(file, tier, tokens, kvb, attn, **f):
            if shape.mla:
                f["note"] = f"{f['note']}; {mla_note(shape, tp, f['kind'])}"
            if shape.window:
                f["note"] = f"{f['note']}; {window_note(shape, f['kind'])}"
            if shape.moe:
                f["note"] = f"{f['note']}; {moe_note(shape, tp)}"
            if wfp8:
                f["note"] = f"{f['note']}; {FP8_NOTE}"
            r = Row(file, tier, **base, **f)
            r.shape, r.tp = shape, tp
            r.mem_bytes = wb + kvb + act_bytes(shape, tp, tokens)
            if shape.mla and f.get("batch"):
                # the absorbed decode's heads x context scores: bf16, their float32 softmax, bf16 again
                r.mem_bytes += 8 * f["batch"] * h * f["context_per_request"]
            if r.mem_bytes > cap:
                return
            r.est_s = row_cost_s(iter_estimate_s(shape, tp, tokens, kvb, attn))
            r.weights = weights
            rows.append(r)

        for p, t, tier in PREFILL_SINGLE + PREFILL_BATCHED:
            add("kernels.csv", tier, p * t, 0, prefill_attn_flops(shape, tp, p, t),
                kind="prefill", prompts=p, tokens_per_prompt=t, note="attention=mla" if shape.mla else "attention=flash+gqa")
        for c, ct in DECODE_CONTEXTS:
            for b, bt in DECODE_BATCHES:
                kvb = kv_bytes(shape, tp, b, c)
                add("kernels.csv", max(ct, bt), b, kvb, decode_attn_flops(shape, tp, b, c),
                    kind="decode", batch=b, context_per_request=c, note=f"kv {kvb / 1e9:.1f} GB")
        for b in MIXED_BATCHES:
            kvb = kv_bytes(shape, tp, b, MIXED_CONTEXT)
            add("mixed.csv", 1, b, kvb, decode_attn_flops(shape, tp, b, MIXED_CONTEXT),
                kind="decode", batch=b, context_per_request=MIXED_CONTEXT, note="mixed-pass reference")
            for t, tier in MIXED_CHUNKS:
                if b == MIXED_BATCHES[0]:
                    add("mixed.csv", tier, t, 0, prefill_attn_flops(shape, tp, 1, t),
                        kind="prefill", prompts=1, tokens_per_prompt=t, note="mixed-pass reference")
                add("mixed.csv", tier, t + b, kvb,
                    prefill_attn_flops(shape, tp, 1, t) + decode_attn_flops(shape, tp, b, MIXED_CONTEXT),
                    kind="mixed", prompts=1, tokens_per_prompt=t, batch=b, context_per_request=MIXED_CONTEXT,
                    note="prefill chunk (no prior-chunk context) + decodes")
    for shape, tp in shapes_tps:
        h, kv, ffn, vocab = shape.share(tp)
        tag = short_name(shape.name).split("-")[-1] + (f"/tp{tp}" if tp > 1 else "")
        gemms = attention_gemms(shape, tp)
        if shape.dense_layers():
            gemms += [("gate_up", 2 * ffn, shape.hidden), ("down", shape.hidden, ffn)]
        if shape.moe:
            # one expert's matrices as plain GEMMs (the dense GEMM physics at the expert shapes)
            fe, _ = shape.moe_share(tp)
            gemms += [("expert_gate_up", 2 * fe, shape.hidden), ("expert_down", shape.hidden, fe)]
        for prec, file in (("bf16", "kernels.csv"), ("fp8", "mixed.csv")):
            if prec == "fp8" and not fp8:
                continue
            for gname, n, k in gemms:
                for m, tier in (GEMM_M_FP8 if prec == "fp8" else GEMM_M):
                    r = Row(file, tier + (1 if prec == "fp8" else 0),
                            model="gemm" if prec == "bf16" else "gemm-fp8", kind="gemm", m=m, n=n, k=k,
                            cuda_graph="True", note=f"{tag} {gname}")
                    it = max(2 * m * n * k / (600e12 if prec == "fp8" else 300e12),
                             (m * k + k * n + m * n) * 2 / 2e12) + 5e-6
                    r.est_s = row_cost_s(it)
                    r.mem_bytes = 2 * (m * k + k * n + m * n)
                    rows.append(r)
    rows.append(Row("kernels.csv", 0, model="copy", kind="copy", m=COPY_ELEMS, cuda_graph="True",
                    note="read+write"))
    rows[-1].est_s = row_cost_s(2 * 2 * COPY_ELEMS / 2e12)
    rows.append(Row("mixed.csv", 0, model="idle", kind="idle", time_ms=IDLE_MS, note="no kernel running, after 1 s rest"))
    for r in rows:
        if r.f["kind"] == "idle":
            r.est_s = 1.0 + IDLE_MS / 1000
    setup = 8.0 * len(shapes_tps)  # random weights, allocation
    keep = set()
    total = setup
    for tier in (0, 1, 2, 3):
        add_s = sum(r.est_s for r in rows if r.tier == tier)
        if tier > 0 and total + add_s > budget_s:
            # the first tier that does not fit: its rows in plan order while they fit
            for r in rows:
                if r.tier == tier and total + r.est_s <= budget_s:
                    total += r.est_s
                    keep.add(id(r))
            break
        total += add_s
        keep.update(id(r) for r in rows if r.tier == tier)
    if total > budget_s:
        print(f"note: the coarsest grid alone takes about {total:.0f} s, more than the {budget_s:.0f} s budget; "
              "measuring it anyway", file=sys.stderr)
    return [r for r in rows if id(r) in keep], total


# ---------------------------------------------------------------- measuring

class Sampler:
    """NVML board power and SM clock, sampled every 20 ms on a thread."""

    def __init__(self, index):
        self.nvml = None
        try:
            import pynvml
            pynvml.nvmlInit()
            self.nvml = pynvml
            self.h = pynvml.nvmlDeviceGetHandleByIndex(index)
        except Exception as e:  # pynvml is optional
            print(f"note: no NVML ({e}); power and SM clock columns stay empty", file=sys.stderr)
            self.nvml = None

    def driver(self):
        if not self.nvml:
            return ""
        v = self.nvml.nvmlSystemGetDriverVersion()
        return v.decode() if isinstance(v, bytes) else v

    def power_limit_w(self):
        if not self.nvml:
            return None
        return round(self.nvml.nvmlDeviceGetEnforcedPowerLimit(self.h) / 1000.0, 1)

    def __enter__(self):
        self.samples = []
        self.stop = threading.Event()
        if self.nvml:
            self.t = threading.Thread(target=self._run, daemon=True)
            self.t.start()
        return self

    def _run(self):
        n = self.nvml
        nxt = time.perf_counter()
        while not self.stop.is_set():
            self.samples.append((n.nvmlDeviceGetPowerUsage(self.h) / 1000.0,
                                 n.nvmlDeviceGetClockInfo(self.h, n.NVML_CLOCK_SM)))
            nxt += SAMPLE_S
            time.sleep(max(0.0, nxt - time.perf_counter()))

    def __exit__(self, *exc):
        self.stop.set()
        if self.nvml:
            self.t.join()

    def averages(self):
        """(power W, SM MHz) over the samples after the first quarter, or ('', '')."""
        s = self.samples[len(self.samples) // 4:]
        if not s:
            return "", ""
        return (f"{sum(p for p, _ in s) / len(s):.1f}", str(round(sum(c for _, c in s) / len(s))))


def sliding_mask(window):
    """flex_attention's mask_mod of a causal sliding window: query i sees keys i - window + 1 .. i."""
    def mask(b, h, qi, ki):
        return (qi >= ki) & (qi - ki < window)
    return mask


def _check_window_kernel(torch, dev, fn):
    """Run fn on one 512-token prompt (8 query heads, 1 KV head, window 128) and compare it with masked
    dense attention in float32: a kernel that does not compute the window is not used."""
    F, t, W = torch.nn.functional, 512, 128
    q = torch.randn(1, t, 8, 64, device=dev, dtype=torch.bfloat16)
    k = torch.randn(1, t, 1, 64, device=dev, dtype=torch.bfloat16)
    v = torch.randn(1, t, 1, 64, device=dev, dtype=torch.bfloat16)
    o = fn(q, k, v, W).float()
    i = torch.arange(t, device=dev)
    allowed = sliding_mask(W)(None, None, i[:, None], i[None, :])
    ref = F.scaled_dot_product_attention(q.transpose(1, 2).float(), k.transpose(1, 2).float().expand(1, 8, t, 64),
                                         v.transpose(1, 2).float().expand(1, 8, t, 64), attn_mask=allowed)
    err = (o - ref.transpose(1, 2)).abs().max().item()
    if not err < 0.05:
        raise RuntimeError(f"differs from masked attention by {err:.3g}")


def find_window_kernel(torch, dev):
    """The sliding-window prefill kernel this PyTorch and GPU have, one that skips the blocks outside the
    window as engines' do: flash-attn's flash_attn_func(window_size=(window - 1, 0)) where that package
    imports and works, else torch's flex_attention, compiled, with a sliding-window block mask (one per
    prompt length). Returns (name, fn, "") or (None, None, why neither works)."""
    why = []
    try:
        from flash_attn import flash_attn_func

        def fa(q, k, v, window):
            return flash_attn_func(q, k, v, causal=True, window_size=(window - 1, 0))
        _check_window_kernel(torch, dev, fa)
        return "flash-attn", fa, ""
    except Exception as e:  # ImportError, or a build without this GPU
        why.append(f"flash-attn: {(str(e).splitlines() or [type(e).__name__])[0][:120]}")
    try:
        from torch.nn.attention.flex_attention import create_block_mask, flex_attention
        import torch._dynamo
        # one compiled kernel per prompt shape: never the recompile limit's eager fallback,
        # which would write out the whole score matrix
        for k in ("cache_size_limit", "recompile_limit", "accumulated_cache_size_limit"):
            if hasattr(torch._dynamo.config, k):
                setattr(torch._dynamo.config, k, 4096)
        flex = torch.compile(flex_attention, dynamic=False, fullgraph=True)
        masks = {}

        def fx(q, k, v, window):
            t = q.shape[1]
            if (t, window) not in masks:  # made in the warm-up, outside the CUDA graph's capture
                masks[(t, window)] = create_block_mask(sliding_mask(window), None, None, t, t, device=q.device)
            o = flex(q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2), block_mask=masks[(t, window)],
                     enable_gqa=True)
            return o.transpose(1, 2)
        _check_window_kernel(torch, dev, fx)
        return "flex", fx, ""
    except Exception as e:
        why.append(f"flex_attention: {(str(e).splitlines() or [type(e).__name__])[0][:120]}")
    return None, None, "; ".join(why)


def moe_route(tokens, experts, topk):
    """The fixed routing of an iteration of `tokens` rows through an MoE layer.

    Each token's topk distinct experts are drawn uniformly at random by
    random.Random(tokens): the same shape always routes the same way (a CUDA
    graph replays it), on every PyTorch. Returns (ex, order, inv, counts):
    ex[s] the expert of slot s = token*topk + j, order the slots grouped by
    expert (token order within an expert), inv its inverse permutation,
    counts[e] the rows routed to expert e."""
    rng = random.Random(tokens)
    ex = []
    for _ in range(tokens):
        ex.extend(rng.sample(range(experts), topk))
    order = sorted(range(len(ex)), key=ex.__getitem__)
    inv = [0] * len(order)
    for r, slot in enumerate(order):
        inv[slot] = r
    counts = [0] * experts
    for e in ex:
        counts[e] += 1
    return ex, order, inv, counts


class Model:
    """Random weights (bf16; the projections e4m3 with weights="fp8") and the forward passes of one (shape, tp)."""

    def __init__(self, torch, shape, tp, dev, weights="bf16"):
        self.torch, self.shape, self.tp, self.dev = torch, shape, tp, dev
        self.fp8 = weights == "fp8"
        self.pad16 = False  # --weights fp8: pad a GEMM's rows to a multiple of 16 (probe_fp8)
        self.h, self.kv, self.ffn, self.vocab = shape.share(tp)
        d, H = shape.head_dim, shape.hidden
        g = torch.Generator(device=dev)
        g.manual_seed(0)

        def w(*s):
            return (torch.randn(*s, device=dev, dtype=torch.bfloat16, generator=g) * (s[0] ** -0.5))

        def experts(e, k, n):
            # stored as engines store expert weights, [experts, out, in], and used as the
            # [experts, in, out] view (column-major per expert), the layout torch._grouped_mm expects
            return (torch.randn(e, n, k, device=dev, dtype=torch.bfloat16, generator=g) * (k ** -0.5)).transpose(-2, -1)

        self.routes = {}
        self.backend = MOE_BACKEND
        # the sliding-window prefill kernel, fn(q [p,t,h,d], k, v [p,t,kv,d], window) -> [p,t,h,d]:
        # set by measure() from find_window_kernel for a model with a window
        self.window_kernel, self.window_fn = None, None
        if shape.moe:
            self.fe, self.fs = shape.moe_share(tp)
            # torch._grouped_mm (bf16, one CUTLASS kernel over every expert) where this
            # PyTorch has it; probe_grouped() falls back to a loop of matmuls if it fails
            if not hasattr(torch, "_grouped_mm"):
                self.backend = "matmul-loop"
        self.layers = []
        for i in range(shape.layers):
            L = dict(n1=torch.ones(H, device=dev, dtype=torch.bfloat16),
                     n2=torch.ones(H, device=dev, dtype=torch.bfloat16))
            if shape.mla:
                L.update(self._mla_weights(w))
            else:
                L.update(qkv=self._lin(w(H, (self.h + 2 * self.kv) * d)), o=self._lin(w(self.h * d, H)))
            if i < shape.dense_layers():
                L.update(gu=self._lin(w(H, 2 * self.ffn)), down=self._lin(w(self.ffn, H)))
            else:
                E = shape.experts
                L.update(router=w(H, E), egu=experts(E, H, 2 * self.fe), edown=experts(E, self.fe, H))
                if self.fs:
                    L.update(sgu=w(H, 2 * self.fs), sdown=w(self.fs, H))
            self.layers.append(L)
        self.nf = torch.ones(H, device=dev, dtype=torch.bfloat16)
        self.lm = w(H, self.vocab)
        if self.fp8:
            self.one = torch.ones((), device=dev, dtype=torch.float32)

    def _lin(self, W):
        """A projection's weights as the GEMMs take them: W itself (bf16), or with --weights fp8 its e4m3
        copy in column-major order (the layout torch._scaled_mm wants for its second operand)."""
        if not self.fp8:
            return W
        return W.t().contiguous().to(self.torch.float8_e4m3fn).t()

    def probe_fp8(self):
        """--weights fp8: whether torch._scaled_mm takes a GEMM of one row; if not, mm pads rows to 16."""
        if not self.fp8:
            return
        W = self.layers[0]["o"]
        a = self.torch.ones(1, W.shape[0], device=self.dev, dtype=self.torch.bfloat16)
        try:
            self.torch._scaled_mm(self._scaled(a), W, scale_a=self.one, scale_b=self.one, out_dtype=self.torch.bfloat16)
        except (RuntimeError, TypeError, ValueError) as e:
            print(f"note: torch._scaled_mm refused a 1-row GEMM ({str(e).splitlines()[0][:120]}): "
                  "fp8 GEMMs pad their rows to a multiple of 16", file=sys.stderr)
            self.pad16 = True

    def _scaled(self, x):
        return x.to(self.torch.float8_e4m3fn)

    def mm(self, x, W):
        """x @ W: a bf16 matmul, or with fp8 weights x cast to e4m3 (one kernel: a static per-tensor scale of
        1) and torch._scaled_mm with per-tensor scales, bf16 out."""
        if not self.fp8:
            return x @ W
        m = x.shape[0]
        if self.pad16 and m % 16:
            x = self.torch.cat([x, x.new_zeros((16 - m % 16, x.shape[1]))])
        y = self.torch._scaled_mm(self._scaled(x), W, scale_a=self.one, scale_b=self.one, out_dtype=self.torch.bfloat16)
        return y[:m]  # the rows padded, if any, dropped

    def _mla_weights(self, w):
        """One MLA layer's weights at this GPU's share (attention_gemms), plus the absorbed decode's
        per-head W_UK [heads, nope, kv_lora] and W_UV [heads, kv_lora, v], kv_b's halves kept
        contiguous beside it as engines keep them."""
        t, m, h, H = self.torch, self.shape.mla, self.h, self.shape.hidden
        r, nope, rope, vd = m["kv_lora"], m["nope"], m["rope"], m["v"]
        A = {}
        if m["q_lora"]:
            A.update(qa=w(H, m["q_lora"]), qn=t.ones(m["q_lora"], device=self.dev, dtype=t.bfloat16),
                     qb=w(m["q_lora"], h * (nope + rope)))
        else:
            A.update(q=w(H, h * (nope + rope)))
        A.update(kva=w(H, r + rope), kvn=t.ones(r, device=self.dev, dtype=t.bfloat16),
                 kvb=w(r, h * (nope + vd)), o=w(h * vd, H))
        kvb = A["kvb"].reshape(r, h, nope + vd)
        A["uk"] = kvb[:, :, :nope].permute(1, 2, 0).contiguous()
        A["uv"] = kvb[:, :, nope:].permute(1, 0, 2).contiguous()
        return A

    def probe_grouped(self):
        """Use torch._grouped_mm if one call on this GPU works, else the matmul loop (self.backend says which)."""
        if self.backend != "grouped_mm":
            return
        L = next(L for L in self.layers if "router" in L)
        R = self.route(16)
        a = self.torch.ones(16 * self.shape.topk, self.shape.hidden, device=self.dev, dtype=self.torch.bfloat16)
        try:
            self.torch._grouped_mm(a, L["egu"], offs=R["offs"])
        except (RuntimeError, TypeError, NotImplementedError, ValueError) as e:
            print(f"note: torch._grouped_mm unavailable here ({str(e).splitlines()[0][:120]}): "
                  "experts run as a loop of matmuls", file=sys.stderr)
            self.backend = "matmul-loop"

    def route(self, tokens):
        """The fixed routing of `tokens` rows (moe_route) as device tensors, made once per shape."""
        if tokens not in self.routes:
            t, k = self.torch, self.shape.topk
            _, order, inv, counts = moe_route(tokens, self.shape.experts, k)
            offs, spans, s = [], [], 0
            for e, c in enumerate(counts):
                if c:
                    spans.append((e, s, s + c))
                s += c
                offs.append(s)
            self.routes[tokens] = dict(
                tok=t.tensor([slot // k for slot in order], device=self.dev, dtype=t.int64),
                inv=t.tensor(inv, device=self.dev, dtype=t.int64),
                offs=t.tensor(offs, device=self.dev, dtype=t.int32), spans=spans, touched=len(spans))
        return self.routes[tokens]

    def _grouped(self, a, W, R):
        """Rows a (grouped by expert as R says) times their experts' W[e]: one grouped GEMM."""
        if self.backend == "grouped_mm":
            return self.torch._grouped_mm(a, W, offs=R["offs"])
        return self.torch.cat([a[s:e] @ W[i] for i, s, e in R["spans"]])

    def _moe(self, L, x):
        """An MoE FFN: router GEMM and top-k, the routed rows permuted to their experts, two grouped
        GEMMs (gate-up, down) with SiLU*mul between, combined back by the routing weights; shared experts."""
        torch, F = self.torch, self.torch.nn.functional
        T, H, k = x.shape[0], self.shape.hidden, self.shape.topk
        y = F.rms_norm(x, (H,), L["n2"])
        R = self.route(T)
        # the router (full on every GPU) and its top-k: its cost is measured; its expert choice is
        # replaced by the fixed routing R (random weights route arbitrarily; a graph needs fixed splits)
        top = (y @ L["router"]).topk(k, dim=-1)
        wts = F.softmax(top[0], dim=-1)
        g, u = self._grouped(y[R["tok"]], L["egu"], R).chunk(2, dim=-1)
        o = self._grouped(F.silu(g) * u, L["edown"], R)
        o = (o[R["inv"]].reshape(T, k, H) * wts.reshape(T, k, 1)).sum(1)
        if self.fs:
            gs, us = (y @ L["sgu"]).chunk(2, dim=-1)
            o = o + (F.silu(gs) * us) @ L["sdown"]
        return x + o

    def _split(self, qkv, rows):
        d = self.shape.head_dim
        q = qkv[:, : self.h * d]
        k = qkv[:, self.h * d: (self.h + self.kv) * d]
        v = qkv[:, (self.h + self.kv) * d:]
        return q, k, v

    def _ffn(self, L, x):
        F = self.torch.nn.functional
        y = F.rms_norm(x, (self.shape.hidden,), L["n2"])
        g, u = self.mm(y, L["gu"]).chunk(2, dim=-1)
        return x + self.mm(F.silu(g) * u, L["down"])

    def _prefill_attn(self, q, k, v, p, t, window=0):
        F, d = self.torch.nn.functional, self.shape.head_dim
        if window and t > window:
            # a sliding-window layer's prompts longer than the window: a kernel that skips the
            # blocks outside the window (below it the window covers the causal triangle)
            if self.window_fn is None:
                raise ProfileError(f"model {self.shape.name}: no sliding-window attention kernel (find_window_kernel)")
            o = self.window_fn(q.reshape(p, t, self.h, d), k.reshape(p, t, self.kv, d),
                               v.reshape(p, t, self.kv, d), window)
            return o.reshape(p * t, self.h * d)
        q = q.reshape(p, t, self.h, d).transpose(1, 2)
        k = k.reshape(p, t, self.kv, d).transpose(1, 2)
        v = v.reshape(p, t, self.kv, d).transpose(1, 2)
        if self.gqa_native:
            o = F.scaled_dot_product_attention(q, k, v, is_causal=True, enable_gqa=True)
        else:
            r = self.h // self.kv
            o = F.scaled_dot_product_attention(q, k.repeat_interleave(r, 1), v.repeat_interleave(r, 1), is_causal=True)
        return o.transpose(1, 2).reshape(p * t, self.h * d)

    def _decode_attn(self, q, k, v, kc, vc, b, c):
        """Decodes over a cache of kc.shape[2] tokens: c, or a sliding-window layer's last min(c, window),
        kept as a ring (the new token's K and V over the oldest; attention does not depend on the order)."""
        F, d = self.torch.nn.functional, self.shape.head_dim
        r = self.h // self.kv
        pos = (c - 1) % kc.shape[2]
        kc[:, :, pos] = k.reshape(b, self.kv, d)
        vc[:, :, pos] = v.reshape(b, self.kv, d)
        q = q.reshape(b, self.kv, r, d)  # each KV head's query heads as query rows
        o = F.scaled_dot_product_attention(q, kc, vc)
        return o.reshape(b, self.h * d)

    def _mla(self, L, y, p, t, b, c, cache):
        """One MLA layer's attention over the normed rows y (p prompts of t tokens, then b decodes at
        context c): the query and KV down-projections (and their norms) over every row, then the
        prompts in the decompressed form and the decodes in the absorbed form. Returns the heads'
        outputs, rows x heads*v, for the O projection."""
        F, m, h = self.torch.nn.functional, self.shape.mla, self.h
        r = m["kv_lora"]
        if "qa" in L:
            q = F.rms_norm(y @ L["qa"], (m["q_lora"],), L["qn"]) @ L["qb"]
        else:
            q = y @ L["q"]
        kva = y @ L["kva"]
        ckv = F.rms_norm(kva[:, :r], (r,), L["kvn"])  # the latent
        kpe = kva[:, r:]  # the rotary key, shared by every head
        npre, outs = p * t, []
        if npre:
            outs.append(self._mla_prefill(L, q[:npre], ckv[:npre], kpe[:npre], p, t))
        if b:
            outs.append(self._mla_decode(L, q[npre:], ckv[npre:], kpe[npre:], cache, b, c))
        return outs[0] if len(outs) == 1 else self.torch.cat(outs)

    def _mla_prefill(self, L, q, ckv, kpe, p, t):
        """Prompts' MLA: kv_b decompresses the latent to each head's K (nope) and V, the rotary key is
        broadcast to every head, causal flash attention at the qk width (V zero-padded to it when
        narrower, as the flash kernel needs equal widths; the padding's output columns dropped)."""
        torch, F, m, h = self.torch, self.torch.nn.functional, self.shape.mla, self.h
        nope, rope, vd = m["nope"], m["rope"], m["v"]
        qk = nope + rope
        kv = (ckv @ L["kvb"]).reshape(p, t, h, nope + vd).transpose(1, 2)
        k = torch.cat([kv[..., :nope], kpe.reshape(p, 1, t, rope).expand(p, h, t, rope)], dim=-1)
        v = kv[..., nope:]
        if vd < qk:
            v = F.pad(v, (0, qk - vd))
        q = q.reshape(p, t, h, qk).transpose(1, 2)
        o = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        return o[..., :vd].transpose(1, 2).reshape(p * t, h * vd)

    def _mla_decode(self, L, q, ckv, kpe, cache, b, c):
        """Decodes' MLA in the weight-absorbed form engines use: q_nope x W_UK takes each head's query
        into the latent space; the new token's latent and rotary key are written at position c-1 of
        the cache (b x c x (kv_lora + rope)); all the heads attend, as the query rows of one KV head,
        over the cache as keys and its first kv_lora columns (a view) as values; x W_UV per head.

        The attention is DeepSeek-V3's reference "absorb" mode: two batched GEMMs (cuBLAS, any
        context split over the GPU) with a float32 softmax of the heads x context scores between,
        because SDPA has no kernel for it that engines would recognise: its flash backend takes no
        head width above 256, and its memory-efficient one runs a request's query rows (the heads of
        its one KV head) in one thread block, one block per request over the whole context."""
        torch, F, m, h = self.torch, self.torch.nn.functional, self.shape.mla, self.h
        r, nope, rope = m["kv_lora"], m["nope"], m["rope"]
        q = q.reshape(b, h, nope + rope)
        ql = torch.bmm(q[..., :nope].transpose(0, 1), L["uk"]).transpose(0, 1)  # b x h x kv_lora
        qa = torch.cat([ql, q[..., nope:]], dim=-1) * (nope + rope) ** -0.5  # the softmax scale folded in
        cache[:, c - 1] = torch.cat([ckv, kpe], dim=-1)
        s = torch.bmm(qa, cache.transpose(1, 2))  # b x h x c
        pr = F.softmax(s, dim=-1, dtype=torch.float32).to(qa.dtype)
        o = torch.bmm(pr, cache[..., :r])  # b x h x kv_lora
        o = torch.bmm(o.transpose(0, 1), L["uv"]).transpose(0, 1)  # b x h x v
        return o.reshape(b, h * m["v"])

    def kv_cache(self, b, c):
        """Every layer's cache of b requests at context c: (K, V) of this GPU's KV heads, or an MLA
        layer's latent + rotary key (b x c x (kv_lora + rope), whole on every GPU)."""
        t, d = self.torch, self.shape.head_dim
        if self.shape.mla:
            return [t.randn(b, c, self.shape.latent(), device=self.dev, dtype=t.bfloat16) for _ in self.layers]
        sl = self.shape.sliding or [False] * len(self.layers)
        n = [min(c, self.shape.window) if w else c for w in sl]
        return [(t.randn(b, self.kv, n[i], d, device=self.dev, dtype=t.bfloat16),
                 t.randn(b, self.kv, n[i], d, device=self.dev, dtype=t.bfloat16)) for i in range(len(self.layers))]

    def forward(self, x, p=0, t=0, b=0, c=0, cache=None):
        """One iteration over x: p prompts of t tokens (prefill rows first), then b decodes at context c."""
        F = self.torch.nn.functional
        npre = p * t
        for i, L in enumerate(self.layers):
            y = F.rms_norm(x, (self.shape.hidden,), L["n1"])
            if self.shape.mla:
                a = self._mla(L, y, p, t, b, c, cache[i] if b else None)
            else:
                q, k, v = self._split(self.mm(y, L["qkv"]), x.shape[0])
                outs = []
                if npre:
                    w = self.shape.window if self.shape.sliding and self.shape.sliding[i] else 0
                    outs.append(self._prefill_attn(q[:npre], k[:npre], v[:npre], p, t, w))
                if b:
                    kc, vc = cache[i]
                    outs.append(self._decode_attn(q[npre:], k[npre:], v[npre:], kc, vc, b, c))
                a = outs[0] if len(outs) == 1 else self.torch.cat(outs)
            x = x + self.mm(a, L["o"])
            x = self._moe(L, x) if "router" in L else self._ffn(L, x)
        x = F.rms_norm(x, (self.shape.hidden,), self.nf)
        last = []
        if npre:
            last.append(x[:npre].reshape(p, t, -1)[:, -1])
        if b:
            last.append(x[npre:])
        h = last[0] if len(last) == 1 else self.torch.cat(last)
        return h @ self.lm


def time_graph(torch, fn, sampler):
    """CUDA-graph one call of fn, replay it >= MIN_TIMED_S and >= MIN_ITERS times: (ms per replay, iters, power, MHz)."""
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        for _ in range(3):
            fn()
    torch.cuda.current_stream().wait_stream(s)
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        fn()
    e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    e0.record()
    for _ in range(3):
        g.replay()
    e1.record()
    torch.cuda.synchronize()
    est = e0.elapsed_time(e1) / 3
    iters = max(MIN_ITERS, math.ceil(MIN_TIMED_S * 1000 / max(est, 1e-4)))
    with sampler:
        e0.record()
        for _ in range(iters):
            g.replay()
        e1.record()
        torch.cuda.synchronize()
    del g
    pw, mhz = sampler.averages()
    return e0.elapsed_time(e1) / iters, iters, pw, mhz


def measure(args, rows, shapes_tps):
    import torch
    if not torch.cuda.is_available():
        raise ProfileError("no CUDA GPU visible to PyTorch (use --dry-run to see the plan)")
    dev = torch.device("cuda", args.device)
    torch.cuda.set_device(dev)
    sampler = Sampler(args.device)
    props = torch.cuda.get_device_properties(dev)
    t0 = time.time()
    torch.manual_seed(0)
    from torch.nn.attention import SDPBackend, sdpa_kernel

    gqa_native = True
    models = {}
    out_rows = []
    window_kernel = window_fn = None
    windowed = sorted({s.name for s, _ in shapes_tps if s.window})
    if windowed:
        window_kernel, window_fn, why = find_window_kernel(torch, dev)
        if window_kernel is None:
            raise ProfileError(f"model {', '.join(windowed)}: sliding-window attention needs a kernel that skips the "
                               f"blocks outside the window (flash-attn's window_size: pip install flash-attn; or "
                               f"torch flex_attention with torch.compile), and none works here ({why}); a masked "
                               "dense attention would measure the wrong work, so nothing was measured")
        print(f"note: sliding-window prefill kernel: {window_kernel}", file=sys.stderr)
    interrupted = False
    try:
        for r in rows:
            kind = r.f["kind"]
            if kind in ("idle", "copy", "gemm") and models:
                models.clear()  # free the model's weights before the stand-alone rows
                torch.cuda.empty_cache()
            if kind == "idle":
                torch.cuda.synchronize()
                time.sleep(1.0)
                with sampler:
                    time.sleep(IDLE_MS / 1000)
                r.f["avg_power_w"], r.f["avg_sm_mhz"] = sampler.averages()
                out_rows.append(r)
                continue
            if kind == "copy":
                a = torch.empty(COPY_ELEMS, device=dev, dtype=torch.bfloat16)
                b = torch.empty_like(a)
                ms, it, pw, mhz = time_graph(torch, lambda: b.copy_(a), sampler)
                del a, b
                r.f.update(time_ms=f"{ms:.5g}", iters=it, avg_power_w=pw, avg_sm_mhz=mhz,
                           note=f"{2 * 2 * COPY_ELEMS / (ms * 1e-3) / 1e12:.2f} TB/s read+write")
                out_rows.append(r)
                continue
            if kind == "gemm":
                m, n, k = r.f["m"], r.f["n"], r.f["k"]
                A = torch.randn(m, k, device=dev, dtype=torch.bfloat16)
                B = torch.randn(k, n, device=dev, dtype=torch.bfloat16) * k ** -0.5
                if r.f["model"] == "gemm-fp8":
                    if not hasattr(torch, "_scaled_mm") or torch.cuda.get_device_capability(dev) < (8, 9):
                        print("note: fp8 GEMMs need torch._scaled_mm and compute capability >= 8.9: skipped",
                              file=sys.stderr)
                        continue
                    A8 = A.to(torch.float8_e4m3fn)
                    B8 = B.t().contiguous().to(torch.float8_e4m3fn).t()  # column-major, as cuBLASLt wants
                    one = torch.ones((), device=dev, dtype=torch.float32)
                    fn = lambda: torch._scaled_mm(A8, B8, scale_a=one, scale_b=one, out_dtype=torch.bfloat16)
                    eb = 1
                else:
                    fn = lambda: A @ B
                    eb = 2
                ms, it, pw, mhz = time_graph(torch, fn, sampler)
                tf = 2 * m * n * k / (ms * 1e-3) / 1e12
                gbs = (eb * (m * k + k * n) + 2 * m * n) / (ms * 1e-3) / 1e9
                r.f.update(time_ms=f"{ms:.5g}", iters=it, avg_power_w=pw, avg_sm_mhz=mhz,
                           note=f"{r.f['note']}; {tf:.1f} TFLOP/s; {gbs:.0f} GB/s")
                out_rows.append(r)
                continue
            key = (r.shape.name, r.tp, r.weights)
            if key not in models:
                models.clear()
                torch.cuda.empty_cache()
                if r.weights == "fp8" and (not hasattr(torch, "_scaled_mm") or
                                           torch.cuda.get_device_capability(dev) < (8, 9)):
                    raise ProfileError("--weights fp8 needs torch._scaled_mm and a GPU of compute capability 8.9 "
                                       "or more (fp8 tensor cores); nothing was measured for it")
                models[key] = Model(torch, r.shape, r.tp, dev, r.weights)
                models[key].probe_fp8()
                models[key].gqa_native = gqa_native
                models[key].window_kernel, models[key].window_fn = window_kernel, window_fn
                if r.shape.moe:
                    models[key].probe_grouped()
            M = models[key]
            p = int(r.f["prompts"] or 0) if kind != "decode" else 0
            t = int(r.f["tokens_per_prompt"] or 0) if kind != "decode" else 0
            b = int(r.f["batch"] or 0) if kind != "prefill" else 0
            c = int(r.f["context_per_request"] or 0) if kind != "prefill" else 0
            x = torch.randn(p * t + b, r.shape.hidden, device=dev, dtype=torch.bfloat16)
            cache = M.kv_cache(b, c) if b else None
            backends = [SDPBackend.FLASH_ATTENTION] if kind == "prefill" else \
                [SDPBackend.FLASH_ATTENTION, SDPBackend.EFFICIENT_ATTENTION]

            def fn():
                with sdpa_kernel(backends):
                    return M.forward(x, p, t, b, c, cache)

            try:
                ms, it, pw, mhz = time_graph(torch, fn, sampler)
            except RuntimeError as e:
                if r.shape.window and p and t > r.shape.window and not any(
                        m in str(e) for m in ("out of memory", "enable_gqa", "No available kernel")):
                    raise ProfileError(f"model {r.shape.name}: the sliding-window prefill ({window_kernel}) failed "
                                       f"under CUDA-graph capture: {str(e).splitlines()[0][:160]}")
                if r.shape.mla and "No available kernel" in str(e):
                    # no fallback that does the same work: a math-backend SDPA would write the scores out
                    raise ProfileError(f"model {r.shape.name}: this PyTorch/GPU has no SDPA flash kernel at its latent "
                                       f"attention's prefill head width {r.shape.head_dim}: {str(e).splitlines()[0][:160]}")
                if M.gqa_native and p and ("enable_gqa" in str(e) or "No available kernel" in str(e)):
                    # this torch's flash kernel has no native GQA: repeat K/V heads and say so
                    gqa_native = M.gqa_native = False
                    ms, it, pw, mhz = time_graph(torch, fn, sampler)
                elif r.shape.moe and M.backend == "grouped_mm" and "out of memory" not in str(e):
                    # torch._grouped_mm passed the probe but failed here (e.g. under graph capture):
                    # this row and the model's next ones run the matmul loop, and their notes say so
                    print(f"note: grouped-GEMM iteration failed ({str(e).splitlines()[0][:120]}): "
                          "experts run as a loop of matmuls from here", file=sys.stderr)
                    M.backend = "matmul-loop"
                    ms, it, pw, mhz = time_graph(torch, fn, sampler)
                elif "out of memory" in str(e):
                    print(f"note: out of memory: {r.values()[:8]} skipped", file=sys.stderr)
                    del x, cache
                    torch.cuda.empty_cache()
                    continue
                else:
                    raise
            att = "flash+gqa" if gqa_native else "flash+repeat-kv"
            note = r.f["note"].replace("attention=flash+gqa", f"attention={att}")
            if r.shape.window:
                note = note.replace(f"window-kernel={WINDOW_KERNEL}", f"window-kernel={window_kernel}")
            if M.pad16:
                note += "; m padded to 16"
            if r.shape.moe:
                note = note.replace(f"experts={MOE_BACKEND}", f"experts={M.backend}") + \
                    f"; {M.route(p * t + b)['touched']} of {r.shape.experts} experts touched"
            r.f.update(time_ms=f"{ms:.5g}", iters=it, avg_power_w=pw, avg_sm_mhz=mhz, note=note)
            out_rows.append(r)
            del x, cache
            print(f"{r.f['model']} tp{r.tp} {kind} p={p} t={t} b={b} c={c}: {ms:.3f} ms", file=sys.stderr)
    except KeyboardInterrupt:
        # Ctrl-C, or the SIGTERM main() turns into one: keep what was measured
        interrupted = True
        print(f"note: interrupted after {len(out_rows)} of {len(rows)} planned rows: writing the rows measured",
              file=sys.stderr)
    meta = {
        "gpu": props.name, "sms": props.multi_processor_count,
        "mem_gib": round(props.total_memory / 2 ** 30, 1), "torch": torch.__version__,
        "cuda": torch.version.cuda or "", "driver": sampler.driver(),
        "power_limit_w": sampler.power_limit_w(),
        "flash": bool(torch.backends.cuda.is_flash_attention_available()),
        "elapsed_s": round(time.time() - t0, 1),
        "prefill_attention": "flash+gqa" if gqa_native else "flash+repeat-kv",
    }
    return out_rows, meta, interrupted


def write_csv(path, rows):
    with open(path, "w", newline="") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(COLUMNS)
        for r in rows:
            w.writerow(r.values())


def _interrupt(signum, frame):
    raise KeyboardInterrupt


def write_run(out, measured, meta, interrupted, planned):
    """Writes a run's kernels.csv, mixed.csv and meta.json into out; returns the exit status:
    0, or 130 when the run was interrupted (the files then hold the rows measured before)."""
    for fname in ("kernels.csv", "mixed.csv"):
        write_csv(os.path.join(out, fname), [r for r in measured if r.file == fname])
    with open(os.path.join(out, "meta.json"), "w") as f:
        json.dump({k: meta[k] for k in META_KEYS}, f, indent=1)
    if interrupted:
        print(f"wrote {out}/kernels.csv, mixed.csv, meta.json: INTERRUPTED, {len(measured)} of {planned} planned rows "
              f"({meta['elapsed_s']} s)", file=sys.stderr)
        return 130
    print(f"wrote {out}/kernels.csv, mixed.csv, meta.json ({len(measured)} rows, {meta['elapsed_s']} s)",
          file=sys.stderr)
    return 0


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--model", action="append", default=[],
                    help="built-in model (short name or Hugging Face path from data/measured-serving/models.csv: "
                         "dense or mixture-of-experts with GQA attention, or DeepSeek/Kimi latent attention); "
                         "repeatable; default llama3.1-8b")
    ap.add_argument("--config", action="append", default=[],
                    help="a Hugging Face config.json of a dense Llama-like model, a GQA mixture of experts "
                         "(mixtral, qwen2_moe, qwen3_moe) or a latent-attention one (deepseek_v3, kimi_k2); repeatable")
    ap.add_argument("--tp", default="1", help="comma-separated tensor-parallel shares to measure, e.g. 1 or 8,4")
    ap.add_argument("--max-layers", type=int,
                    help="run only each model's first N layers (default all; an MoE model needs one routed-expert "
                         "layer): for models whose weights do not fit one GPU at the --tp share")
    ap.add_argument("--budget-minutes", type=float, default=5.0,
                    help="time budget: the grid is thinned (coarse points first) to fit it (default 5)")
    ap.add_argument("--no-fp8", action="store_true", help="skip the fp8 GEMMs")
    ap.add_argument("--weights", choices=("bf16", "fp8"), default="bf16",
                    help="the layers' projection weights: bf16 (default), or fp8 (e4m3 through torch._scaled_mm, "
                         "dense models only; the rows' model gets an -fp8 suffix)")
    ap.add_argument("--out", help="output directory for kernels.csv, mixed.csv, meta.json")
    ap.add_argument("--device", type=int, default=0, help="CUDA device index (default 0)")
    ap.add_argument("--gpu-mem-gib", type=float,
                    help="GPU memory for planning (default: the GPU's; 80 in --dry-run)")
    ap.add_argument("--dry-run", action="store_true",
                    help="print the planned rows and the CSV header; no GPU, no torch, nothing measured")
    ap.add_argument("--models-csv", default=MODELS_CSV, help=argparse.SUPPRESS)
    a = ap.parse_args(argv)
    try:
        if a.budget_minutes <= 0:
            raise ProfileError(f"--budget-minutes {a.budget_minutes}: want > 0")
        try:
            tps = [int(s) for s in a.tp.split(",") if s.strip()]
        except ValueError:
            raise ProfileError(f"--tp {a.tp!r}: want comma-separated integers")
        if not tps or any(t < 1 for t in tps):
            raise ProfileError(f"--tp {a.tp!r}: want integers >= 1")
        shapes = [builtin_shape(m, a.models_csv) for m in a.model] + [config_shape(c) for c in a.config]
        if not shapes:
            shapes = [builtin_shape("llama3.1-8b", a.models_csv)]
        if a.max_layers is not None:
            shapes = [s.first(a.max_layers) for s in shapes]
        shapes_tps = []
        for s in shapes:
            for t in tps:
                s.share(t)  # validates the split
                shapes_tps.append((s, t))
        if not a.dry_run and not a.out:
            raise ProfileError("--out DIR is required (or --dry-run)")
        if a.dry_run:
            mem = (a.gpu_mem_gib or 80.0) * 2 ** 30
        elif a.gpu_mem_gib:
            mem = a.gpu_mem_gib * 2 ** 30
        else:
            import torch
            if not torch.cuda.is_available():
                raise ProfileError("no CUDA GPU visible to PyTorch (use --dry-run to see the plan)")
            mem = torch.cuda.get_device_properties(a.device).total_memory
        rows, est = plan(shapes_tps, mem, a.budget_minutes * 60, fp8=not a.no_fp8, weights=a.weights)
        if a.dry_run:
            out = io.StringIO()
            out.write("# splitplan gpu-profile dry run: nothing measured; time_ms, iters, avg_power_w and "
                      "avg_sm_mhz are filled in by a real run\n")
            out.write(f"# estimated time: {est:.0f} s of a {a.budget_minutes * 60:.0f} s budget, {len(rows)} rows\n")
            out.write("# meta keys: " + ",".join(META_KEYS) + "\n")
            for fname in ("kernels.csv", "mixed.csv"):
                out.write(f"== {fname}\n")
                w = csv.writer(out, lineterminator="\n")
                w.writerow(COLUMNS)
                for r in rows:
                    if r.file == fname:
                        w.writerow(r.values())
            sys.stdout.write(out.getvalue())
            return 0
        os.makedirs(a.out, exist_ok=True)
        # a SIGTERM (a job's time limit, `timeout`) stops the run as Ctrl-C does:
        # the rows measured so far are written
        signal.signal(signal.SIGTERM, _interrupt)
        measured, meta, interrupted = measure(a, rows, shapes_tps)
        return write_run(a.out, measured, meta, interrupted, len(rows))
    except ProfileError as e:
        print(f"profile.py: {e}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
