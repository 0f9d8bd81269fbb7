#!/usr/bin/env python3
"""Check profile.py's forward passes without a GPU or PyTorch.

A numpy stand-in for the few torch calls Model uses (randn, ones, cat,
reshape/transpose/chunk, rms_norm, silu, scaled_dot_product_attention with
causal masking and GQA) runs prefill, decode and mixed iterations of a tiny
GQA model at tp 1, 2 and 4 and checks the output shapes, that the decode
attention (each KV head's query heads as query rows) equals GQA attention,
that the new K is written at the last cache position, and that the
repeat-KV prefill fallback equals native GQA. For a tiny mixture of
experts (a first dense layer, routed and shared experts) it checks the
same shapes, the fixed routing (distinct experts per token, rows grouped
by expert, the same for the same shape, touching about the
E(1 - (1 - k/E)^T) experts the kernel layer prices), and that the MoE layer, with
torch._grouped_mm and with the matmul loop, equals a dense per-token
reference: each token through its own experts, weighted by the softmax of
its router top-k. For a tiny multi-head latent attention (MLA) mixture of
experts, with and without a query rank, it checks the shapes and the
weights' TP shares (down-projections whole, up-projections and O split by
heads), that the prefill (decompressed K and V, V zero-padded to the qk
width) equals unpadded causal attention, that the absorbed decode
(q_nope x W_UK, the heads' scores over the cached latent + rope, softmax,
values over the latent, x W_UV: four batched GEMMs)
equals naive attention over the decompressed cache, that the new latent is
written at the last cache position, that a mixed iteration's attention is
its prefill and decode parts', and that the planner's KV bytes follow the
latent. For a tiny sliding-window model it checks the flex_attention mask,
that prompts within the window run causal attention (which then equals the
windowed one) and longer ones the window kernel, that a windowed layer's
decode cache holds min(context, window) tokens written as a ring, that the
planner's KV bytes are the caches', and the window layers of gpt-oss-120b
and of config.json files. It checks shapes and arithmetic, not speed. Needs numpy only:
python3 test_forward_mock.py
"""
import os, sys, types
import numpy as np
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
class T(np.ndarray):
    def transpose(self, a, b):
        ax = list(range(self.ndim)); ax[a], ax[b] = ax[b], ax[a]
        return np.ndarray.transpose(self, ax).view(T)
    def chunk(self, n, dim=-1):
        return [x.view(T) for x in np.split(self, n, axis=dim)]
    def repeat_interleave(self, r, dim): return np.repeat(self, r, dim).view(T)
    def reshape(self, *s):
        return np.ndarray.reshape(self, s).view(T)
    def permute(self, *ax): return np.ndarray.transpose(self, ax).view(T)
    def contiguous(self): return np.ascontiguousarray(self).view(T)
    def expand(self, *s): return np.broadcast_to(self, s).view(T)
    def to(self, dtype): return self.astype(dtype).view(T)
    def t(self): return self.transpose(0, 1)
    def new_zeros(self, s): return np.zeros(s, self.dtype).view(T)
    def topk(self, k, dim=-1):
        assert dim == -1
        idx = np.argsort(-np.asarray(self), axis=-1, kind="stable")[..., :k]
        return (np.take_along_axis(np.asarray(self), idx, -1).view(T), idx)
def t_(a): return a.view(T)
torch = types.SimpleNamespace(bfloat16=np.float32, float32=np.float32, int64=np.int64, int32=np.int32)
torch.tensor = lambda data, device=None, dtype=None: np.array(data, dtype=dtype)
grouped_calls = []
def grouped_mm(a, W, offs=None):
    # torch._grouped_mm's 2D x 3D case: rows offs[e-1]:offs[e] of a times W[e]
    grouped_calls.append((a.shape, W.shape))
    assert offs.dtype == np.int32 and len(offs) == W.shape[0] and offs[-1] == a.shape[0]
    out, s = np.zeros((a.shape[0], W.shape[2]), np.float32), 0
    for e, end in enumerate(offs):
        out[s:end] = np.asarray(a[s:end]) @ np.asarray(W[e]); s = end
    return t_(out)
torch._grouped_mm = grouped_mm
class G:
    def manual_seed(self, s): pass
torch.Generator = lambda device=None: G()
rng = np.random.default_rng(0)
torch.randn = lambda *s, device=None, dtype=None, generator=None: t_(rng.standard_normal(s).astype(np.float32))
torch.ones = lambda *s, device=None, dtype=None: t_(np.ones(s[0] if len(s) == 1 and isinstance(s[0], tuple) else s, np.float32))
torch.float8_e4m3fn = np.float32  # the stand-in keeps fp8 weights' values (it checks the arithmetic, not the rounding)
scaled_calls = []
def scaled_mm(a, b, scale_a=None, scale_b=None, out_dtype=None):
    # torch._scaled_mm: e4m3 a [M, K] times e4m3 b [K, N] (column-major), per-tensor scales, bf16 out
    assert a.ndim == 2 and b.ndim == 2 and a.shape[1] == b.shape[0], (a.shape, b.shape)
    assert np.ndim(scale_a) == 0 and np.ndim(scale_b) == 0 and out_dtype is torch.bfloat16
    assert b.flags["F_CONTIGUOUS"], "the second operand must be column-major"
    scaled_calls.append(a.shape[0])
    return t_((np.asarray(a) @ np.asarray(b)) * float(scale_a) * float(scale_b))
torch._scaled_mm = scaled_mm
torch.cat = lambda xs, dim=0: t_(np.concatenate(xs, axis=dim))
bmm_calls = []
torch.bmm = lambda a, b: (assert_3d(a, b), bmm_calls.append((a.shape, b.shape)), t_(np.matmul(a, b)))[2]
def assert_3d(a, b):
    assert a.ndim == 3 and b.ndim == 3 and a.shape[0] == b.shape[0] and a.shape[2] == b.shape[1], (a.shape, b.shape)
def rms_norm(x, shape, w): return t_(x / np.sqrt((x * x).mean(-1, keepdims=True) + 1e-6) * w)
def silu(x): return t_(x / (1 + np.exp(-x)))
calls = []
def sdpa(q, k, v, is_causal=False, enable_gqa=False, scale=None):
    calls.append((q.shape, k.shape, is_causal, enable_gqa, v.shape))
    B, Hq, L, D = q.shape; Hk = k.shape[1]
    assert k.shape[-1] == D and k.shape[:-1] == v.shape[:-1]
    if Hq != Hk:
        assert enable_gqa and Hq % Hk == 0
        k = np.repeat(k, Hq // Hk, 1); v = np.repeat(v, Hq // Hk, 1)
    s = q @ np.swapaxes(k, -1, -2) * (D ** -0.5 if scale is None else scale)
    if is_causal:
        S = k.shape[2]; s = s + np.triu(np.full((L, S), -1e9), 1)
    p = np.exp(s - s.max(-1, keepdims=True)); p /= p.sum(-1, keepdims=True)
    return t_(p @ v)
def softmax(x, dim=-1, dtype=None):
    e = np.exp(x - x.max(dim, keepdims=True)); return t_(e / e.sum(dim, keepdims=True))
def pad(x, p):
    assert len(p) == 2
    return t_(np.pad(x, [(0, 0)] * (x.ndim - 1) + [tuple(p)]))
torch.nn = types.SimpleNamespace(functional=types.SimpleNamespace(rms_norm=rms_norm, silu=silu, scaled_dot_product_attention=sdpa, softmax=softmax, pad=pad))
import profile as P
sh = P.Shape("tiny", 2, 64, 8, 2, 8, 96, 100)
for tp in (1, 2, 4):
    M = P.Model(torch, sh, tp, None); M.gqa_native = True
    # prefill 2 prompts x 5
    x = torch.randn(10, 64); out = M.forward(x, 2, 5); assert out.shape == (2, M.vocab), out.shape
    # decode 3 at context 7
    cache = M.kv_cache(3, 7); x = torch.randn(3, 64); out = M.forward(x, 0, 0, 3, 7, cache); assert out.shape == (3, M.vocab)
    # the new K was written at position c-1 of layer 0's cache
    # mixed
    cache = M.kv_cache(3, 7); x = torch.randn(1*6 + 3, 64); out = M.forward(x, 1, 6, 3, 7, cache); assert out.shape == (4, M.vocab)
    x = torch.randn(10, 64)
    native = M.forward(x, 2, 5)
    M.gqa_native = False
    out = M.forward(x, 2, 5)
    assert out.shape == (2, M.vocab) and np.allclose(out, native, atol=1e-4), "repeat-KV prefill differs from GQA"
    print("tp", tp, "ok", M.h, M.kv, M.ffn, M.vocab)
# decode correctness: query rows grouped by KV head equal the GQA reference
M = P.Model(torch, sh, 1, None); M.gqa_native = True
b, c, d = 2, 5, 8
q = torch.randn(b, M.h * d); k = torch.randn(b, M.kv * d); v = torch.randn(b, M.kv * d)
kc, vc = torch.randn(b, M.kv, c, d), torch.randn(b, M.kv, c, d)
o = M._decode_attn(q, k, v, kc, vc, b, c)
ref = sdpa(q.reshape(b, M.h, 1, d), kc, vc, enable_gqa=True).reshape(b, M.h * d)
assert np.allclose(o, ref, atol=1e-5), "decode grouping differs from GQA reference"
assert np.allclose(kc[:, :, c - 1], k.reshape(b, M.kv, d))
assert calls[0][2] and not calls[2][2], "prefill must be causal, decode not"
print("forward passes ok")

# ---- fp8 weights (--weights fp8): the same arithmetic as bf16 through torch._scaled_mm, four GEMMs a layer,
# rows padded to 16 where the probe says so
M8 = P.Model(torch, sh, 2, None, "fp8"); M8.gqa_native = True
assert M8.fp8 and all(L["qkv"].flags["F_CONTIGUOUS"] and L["down"].flags["F_CONTIGUOUS"] for L in M8.layers)
for p_, t_len, b, c in ((2, 5, 0, 0), (0, 0, 3, 7), (1, 6, 3, 7)):
    x = torch.randn(p_ * t_len + b, 64)
    outs = []
    cache = M8.kv_cache(b, c) if b else None  # one cache for the three (each pass writes the same new K and V)
    for fp8, pad16 in ((True, False), (True, True), (False, False)):
        M8.fp8, M8.pad16 = fp8, pad16
        scaled_calls.clear()
        outs.append(M8.forward(x, p_, t_len, b, c, cache))
        if fp8:
            assert len(scaled_calls) == 4 * sh.layers, scaled_calls
            assert all(m % 16 == 0 for m in scaled_calls) if pad16 else set(scaled_calls) == {x.shape[0]}, scaled_calls
        else:
            assert not scaled_calls
    assert all(np.allclose(o, outs[-1], atol=1e-4) for o in outs[:2]), "fp8 path differs from the matmul"
M8.fp8 = True
planned, _ = P.plan([(sh, 2)], 80 * 2 ** 30, 60, weights="fp8")
it = [r for r in planned if r.f["kind"] in ("prefill", "decode", "mixed")]
assert it and all(r.f["model"] == "tiny-fp8" and r.weights == "fp8" and P.FP8_NOTE in r.f["note"] for r in it)
assert P.weight_bytes(sh, 2, fp8=True) < P.weight_bytes(sh, 2)
for bad in (moe_shape := P.Shape("m8", 2, 64, 8, 2, 8, 96, 100, experts=4, topk=2, moe_ffn=32, first_dense=1),):
    try:
        P.plan([(bad, 1)], 80 * 2 ** 30, 60, weights="fp8"); raise AssertionError("fp8 MoE was planned")
    except P.ProfileError as e:
        assert "routed experts" in str(e), e
print("fp8 weights ok")

# ---- mixture of experts
# fixed routing: k distinct experts per token, rows grouped by expert, the same for the same shape
for tokens, E, k in ((1, 6, 2), (10, 6, 2), (33, 8, 8), (200, 128, 8)):
    ex, order, inv, counts = P.moe_route(tokens, E, k)
    assert len(ex) == tokens * k and sum(counts) == tokens * k
    assert all(len(set(ex[i * k:(i + 1) * k])) == k for i in range(tokens)), "a token routed twice to one expert"
    assert [ex[s] for s in order] == sorted(ex), "rows not grouped by expert"
    assert all(order[inv[s]] == s for s in range(len(ex)))
    assert (ex, order) == P.moe_route(tokens, E, k)[:2], "routing not fixed per shape"
# the experts a fixed routing touches are what the kernel layer prices: E(1 - (1 - k/E)^T) on average
# (uniform routing), within 4 binomial standard deviations for one draw
for E, k in ((128, 8), (256, 8), (8, 2)):
    for tokens in (1, 2, 8, 32, 128):
        touched = sum(1 for c in P.moe_route(tokens, E, k)[3] if c)
        p = 1 - (1 - k / E) ** tokens
        assert abs(touched - E * p) <= 4 * (E * p * (1 - p)) ** 0.5 + 1e-9, (E, k, tokens, touched, E * p)
moe = P.Shape("tinymoe", 3, 64, 8, 2, 8, 96, 100, experts=6, topk=2, moe_ffn=32, shared_ffn=16, first_dense=1)
assert moe.dense_layers() == 1 and moe.moe_layers() == 2 and moe.first(2).layers == 2
for bad in (0, 1):
    try:
        moe.first(bad); raise AssertionError(f"first({bad}) runs no MoE layer")
    except P.ProfileError:
        pass

def ref_moe(M, L, x):
    """Each token through its own experts (the routing's), weighted by the softmax of its router top-k."""
    x = np.asarray(x); k, fe = M.shape.topk, M.fe
    ex = P.moe_route(x.shape[0], M.shape.experts, k)[0]
    y = np.asarray(rms_norm(x, None, L["n2"]))
    out = x.copy()
    for t in range(x.shape[0]):
        logits = y[t] @ L["router"]
        top = np.sort(logits)[::-1][:k]
        w = np.exp(top - top.max()); w /= w.sum()
        for j in range(k):
            e = ex[t * k + j]
            h = y[t] @ L["egu"][e]
            out[t] += w[j] * ((h[:fe] / (1 + np.exp(-h[:fe]))) * h[fe:]) @ L["edown"][e]
        if M.fs:
            h = y[t] @ L["sgu"]
            out[t] += ((h[:M.fs] / (1 + np.exp(-h[:M.fs]))) * h[M.fs:]) @ L["sdown"]
    return out

for tp in (1, 2):
    M = P.Model(torch, moe, tp, None); M.gqa_native = True
    assert "router" not in M.layers[0] and all("router" in L for L in M.layers[1:])
    assert M.layers[1]["egu"].shape == (6, 64, 2 * 32 // tp) and M.layers[1]["edown"].shape == (6, 32 // tp, 64)
    assert M.layers[1]["router"].shape == (64, 6), "the router is full on every GPU"
    x = torch.randn(10, 64); assert M.forward(x, 2, 5).shape == (2, M.vocab)
    cache = M.kv_cache(3, 7); x = torch.randn(3, 64); assert M.forward(x, 0, 0, 3, 7, cache).shape == (3, M.vocab)
    cache = M.kv_cache(3, 7); x = torch.randn(9, 64); assert M.forward(x, 1, 6, 3, 7, cache).shape == (4, M.vocab)
    L = M.layers[1]
    for T_ in (1, 3, 10, 40):
        x = torch.randn(T_, 64)
        want = ref_moe(M, L, x)
        M.backend = "grouped_mm"; n = len(grouped_calls)
        got = M._moe(L, x)
        assert len(grouped_calls) == n + 2, "grouped_mm not used"
        assert got.shape == (T_, 64) and np.allclose(got, want, atol=1e-4), f"grouped MoE differs from the per-token reference (T={T_})"
        M.backend = "matmul-loop"; n = len(grouped_calls)
        got = M._moe(L, x)
        assert len(grouped_calls) == n and np.allclose(got, want, atol=1e-4), f"matmul-loop MoE differs (T={T_})"
    print("moe tp", tp, "ok", M.fe, M.fs, M.routes[10]["touched"], "of", moe.experts, "experts touched at 10 tokens")
print("moe forward ok")

# ---- multi-head latent attention (DeepSeek-V3's MLA), here with an MoE FFN
def att_ref(q, k, v, causal, scale):
    """Plain softmax attention, q [.., L, dq], k [.., S, dq], v [.., S, dv]."""
    s = np.asarray(q) @ np.swapaxes(np.asarray(k), -1, -2) * scale
    if causal:
        s = s + np.triu(np.full(s.shape[-2:], -1e9), 1)
    p = np.exp(s - s.max(-1, keepdims=True)); p /= p.sum(-1, keepdims=True)
    return p @ np.asarray(v)

for q_lora in (24, 0):
    mla = dict(kv_lora=16, q_lora=q_lora, rope=4, nope=8, v=6)
    sh = P.Shape("tinymla", 3, 64, 8, 8, 99, 96, 100, experts=6, topk=2, moe_ffn=32, shared_ffn=32, first_dense=1, mla=mla)
    r, nope, rope, vd, qk = 16, 8, 4, 6, 12
    assert sh.head_dim == qk and sh.latent() == r + rope and sh.first(2).mla == mla
    for tp in (1, 2, 4):
        M = P.Model(torch, sh, tp, None); M.gqa_native = True
        h = M.h
        L = M.layers[0]
        assert "qkv" not in L and L["kva"].shape == (64, r + rope), "kv_a is whole on every GPU"
        if q_lora:
            assert L["qa"].shape == (64, q_lora) and L["qb"].shape == (q_lora, h * qk), "q_a whole, q_b split by heads"
        else:
            assert "qa" not in L and L["q"].shape == (64, h * qk)
        assert L["kvb"].shape == (r, h * (nope + vd)) and L["o"].shape == (h * vd, 64)
        assert L["uk"].shape == (h, nope, r) and L["uv"].shape == (h, r, vd)
        names = [g[0] for g in P.attention_gemms(sh, tp)]
        assert names == (["q_a", "q_b"] if q_lora else ["q"]) + ["kv_a", "kv_b", "o"], names
        # the planner's weights are the model's: every layer's tensors, the LM head
        held = sum(np.asarray(v).size for Lx in M.layers for k, v in Lx.items() if k not in ("n1", "n2", "qn", "kvn")) + M.lm.size
        assert P.weight_bytes(sh, tp) == 2 * held, (P.weight_bytes(sh, tp), 2 * held)
        # shapes of prefill, decode and mixed iterations; the cache is the latent, whole on every GPU
        x = torch.randn(10, 64); assert M.forward(x, 2, 5).shape == (2, M.vocab)
        cache = M.kv_cache(3, 7)
        assert len(cache) == 3 and cache[0].shape == (3, 7, r + rope)
        assert P.kv_bytes(sh, tp, 3, 7) == 2 * sum(c.size for c in cache), "planned KV bytes are not the latent's"
        x = torch.randn(3, 64); assert M.forward(x, 0, 0, 3, 7, cache).shape == (3, M.vocab)
        cache = M.kv_cache(3, 7); x = torch.randn(9, 64); assert M.forward(x, 1, 6, 3, 7, cache).shape == (4, M.vocab)

        # prefill: decompressed K and V, V zero-padded to the qk width, equals unpadded causal attention
        p, t = 2, 5
        q, ckv, kpe = torch.randn(p * t, h * qk), torch.randn(p * t, r), torch.randn(p * t, rope)
        n = len(calls)
        got = M._mla_prefill(L, q, ckv, kpe, p, t)
        assert calls[n][4][-1] == qk and calls[n][2], "prefill: causal, V padded to the qk width"
        kv = (np.asarray(ckv) @ np.asarray(L["kvb"])).reshape(p, t, h, nope + vd)
        qh = np.asarray(q).reshape(p, t, h, qk).transpose(0, 2, 1, 3)
        kh = np.concatenate([kv[..., :nope], np.broadcast_to(np.asarray(kpe).reshape(p, t, 1, rope), (p, t, h, rope))], -1).transpose(0, 2, 1, 3)
        want = att_ref(qh, kh, kv[..., nope:].transpose(0, 2, 1, 3), True, qk ** -0.5).transpose(0, 2, 1, 3).reshape(p * t, h * vd)
        assert got.shape == (p * t, h * vd) and np.allclose(got, want, atol=1e-4), "MLA prefill differs from unpadded attention"

        # decode: the absorbed form equals naive attention over the decompressed cache
        b, c = 3, 7
        cache = M.kv_cache(b, c)[0]
        q, ckv, kpe = torch.randn(b, h * qk), torch.randn(b, r), torch.randn(b, rope)
        n = len(bmm_calls)
        got = M._mla_decode(L, q, ckv, kpe, cache, b, c)
        assert bmm_calls[n:] == [((h, b, nope), (h, nope, r)), ((b, h, r + rope), (b, r + rope, c)), ((b, h, c), (b, c, r)),
                                 ((h, b, r), (h, r, vd))], ("decode: W_UK, scores over the latent + rope, values over "
                                                            "the latent, W_UV", bmm_calls[n:])
        assert np.allclose(cache[:, c - 1], np.concatenate([ckv, kpe], -1)), "the new latent not at position c-1"
        lat = np.asarray(cache)  # b x c x (r + rope)
        kv = (lat[..., :r] @ np.asarray(L["kvb"])).reshape(b, c, h, nope + vd)
        K = np.concatenate([kv[..., :nope], np.broadcast_to(lat[:, :, None, r:], (b, c, h, rope))], -1).transpose(0, 2, 1, 3)
        V = kv[..., nope:].transpose(0, 2, 1, 3)
        qh = np.asarray(q).reshape(b, h, 1, qk)
        want = att_ref(qh, K, V, False, qk ** -0.5).reshape(b, h * vd)
        assert got.shape == (b, h * vd) and np.allclose(got, want, atol=1e-4), "absorbed decode differs from naive MLA"

        # mixed: one pass's attention is its prefill part's and its decode part's
        y = torch.randn(6 + b, 64)
        c1 = M.kv_cache(b, c)[0]; c2 = c1.copy().view(T)
        got = M._mla(L, y, 1, 6, b, c, c1)
        want = np.concatenate([M._mla(L, y[:6], 1, 6, 0, 0, None), M._mla(L, y[6:], 0, 0, b, c, c2)])
        assert np.allclose(got, want, atol=1e-5) and np.allclose(c1, c2), "mixed MLA differs from its parts"
        print("mla q_lora", q_lora, "tp", tp, "ok", h, "heads per GPU")
# the built-ins: the planner's KV bytes per token are arch.KVBytesPerTokenPerGPU's (bf16, the latent on every
# GPU): DeepSeek-R1 61 x (512 + 64) x 2 = 70272 at every tp; its weights at tp 1 are arch's TotalParams
# (671,025,397,760) less the input embedding (926,679,040: the script feeds random hidden states) plus the
# absorbed W_UK/W_UV copies (61 x 128 x (128 + 128) x 512 = 1,023,410,176)
ds = P.builtin_shape("deepseek-r1")
assert ds.mla == dict(kv_lora=512, q_lora=1536, rope=64, nope=128, v=128) and ds.head_dim == 192
assert all(P.kv_bytes(ds, tp, 1, 1) == 70272 for tp in (1, 8, 16))
assert P.weight_bytes(ds, 1) == 2 * (671025397760 - 926679040 + 1023410176), P.weight_bytes(ds, 1)
km = P.builtin_shape("kimi-k2.5")
assert km.mla["kv_lora"] == 512 and km.heads == 64 and km.first_dense == 1 and km.share(8)[0] == 8
print("mla forward ok")

# ---- sliding-window attention (gpt-oss)
W = 4
i = np.arange(12)
allowed = P.sliding_mask(W)(None, None, i[:, None], i[None, :])
assert (allowed == np.array([[j <= q and q - j < W for j in range(12)] for q in range(12)])).all(), "sliding mask"
win_calls = []
def window_fn(q, k, v, window):
    """Stand-in for flash-attn / flex: masked attention over [p, t, h, d] (the layout both take), GQA."""
    win_calls.append((q.shape, k.shape, window))
    p_, n_, h_, d_ = q.shape
    r_ = h_ // k.shape[2]
    kk = np.repeat(np.asarray(k), r_, 2).transpose(0, 2, 1, 3); vv = np.repeat(np.asarray(v), r_, 2).transpose(0, 2, 1, 3)
    j = np.arange(n_)
    s_ = np.asarray(q).transpose(0, 2, 1, 3) @ kk.swapaxes(-1, -2) / np.sqrt(d_)
    s_ = np.where(P.sliding_mask(window)(None, None, j[:, None], j[None, :]), s_, -1e9)
    e_ = np.exp(s_ - s_.max(-1, keepdims=True)); e_ /= e_.sum(-1, keepdims=True)
    return t_(e_ @ vv).transpose(1, 2)
sw = P.Shape("tinywin", 4, 64, 8, 2, 8, 0, 100, experts=6, topk=2, moe_ffn=32, window=W, sliding=[1, 0, 1, 0])
assert sw.window_layers() == 2
try:
    sw.first(2); raise AssertionError("--max-layers accepted for a sliding-window model")
except P.ProfileError as e:
    assert "sliding-window" in str(e)
for tp in (1, 2):
    M = P.Model(torch, sw, tp, None); M.gqa_native = True
    try:
        M.forward(torch.randn(18, 64), 2, 9); raise AssertionError("a windowed prefill ran without a window kernel")
    except P.ProfileError:
        pass
    M.window_kernel, M.window_fn = "mock", window_fn
    # prompts within the window: causal attention (no window kernel), equal to the windowed one
    n = len(win_calls)
    q, k, v = torch.randn(2 * W, M.h * 8), torch.randn(2 * W, M.kv * 8), torch.randn(2 * W, M.kv * 8)
    got = M._prefill_attn(q, k, v, 2, W, W)
    assert len(win_calls) == n and calls[-1][2], "prompts within the window: causal SDPA"
    want = window_fn(q.reshape(2, W, M.h, 8), k.reshape(2, W, M.kv, 8), v.reshape(2, W, M.kv, 8), W).reshape(2 * W, M.h * 8)
    assert np.allclose(got, want, atol=1e-5)
    # longer prompts: the window kernel, on the windowed layers only
    n = len(win_calls)
    assert M.forward(torch.randn(18, 64), 2, 9).shape == (2, M.vocab)
    assert win_calls[n:] == [((2, 9, M.h, 8), (2, 9, M.kv, 8), W)] * 2, win_calls[n:]
    # decode past the window: windowed layers keep the last W tokens, as a ring
    b, c = 3, 11
    cache = M.kv_cache(b, c)
    assert [kc.shape[2] for kc, _ in cache] == [W, c, W, c]
    assert P.kv_bytes(sw, tp, b, c) == 2 * sum(kc.size + vc.size for kc, vc in cache), "planned KV bytes are not the caches'"
    assert M.forward(torch.randn(b, 64), 0, 0, b, c, cache).shape == (b, M.vocab)
    kc, vc = cache[0]
    q, k, v = torch.randn(b, M.h * 8), torch.randn(b, M.kv * 8), torch.randn(b, M.kv * 8)
    o = M._decode_attn(q, k, v, kc, vc, b, c)
    assert np.allclose(kc[:, :, (c - 1) % W], k.reshape(b, M.kv, 8)), "the new K not at the ring position"
    assert calls[-1][1] == (b, M.kv, W, 8), "a windowed decode reads the last W tokens"
    cache = M.kv_cache(b, 3)
    assert [kc.shape[2] for kc, _ in cache] == [3, 3, 3, 3], "below the window the cache is the context"
    cache = M.kv_cache(b, c)
    assert M.forward(torch.randn(9 + b, 64), 1, 9, b, c, cache).shape == (1 + b, M.vocab)
    print("window tp", tp, "ok")
# gpt-oss-120b: the window on every other layer from the first (18 of 36, as arch's SlidingWindowLayers)
go = P.builtin_shape("gpt-oss-120b")
assert go.window == 128 and go.window_layers() == 18 and go.sliding[:3] == (True, False, True) and go.moe
import json, tempfile
with tempfile.TemporaryDirectory() as d:
    cfg = dict(model_type="gpt_oss", num_hidden_layers=4, hidden_size=64, num_attention_heads=8, num_key_value_heads=2,
               head_dim=8, intermediate_size=32, vocab_size=100, num_local_experts=6, num_experts_per_tok=2,
               sliding_window=4, layer_types=["sliding_attention", "full_attention"] * 2)
    path = os.path.join(d, "config.json")
    json.dump(cfg, open(path, "w"))
    c = P.config_shape(path, "tinyoss")
    assert c.window == 4 and c.sliding == (True, False, True, False) and c.moe
    json.dump(dict(cfg, model_type="mistral", layer_types=None, num_local_experts=None, intermediate_size=96), open(path, "w"))
    c = P.config_shape(path, "tinymistral")
    assert c.window == 4 and c.sliding == (True,) * 4 and not c.moe
    json.dump(dict(cfg, model_type="qwen2", layer_types=None, num_local_experts=None, use_sliding_window=False), open(path, "w"))
    assert P.config_shape(path, "q").window == 0
print("window forward ok")
# without flash-attn and torch's flex_attention no window kernel is found, and the reason names both
name, fn, why = P.find_window_kernel(torch, None)
assert name is None and fn is None and "flash-attn" in why and "flex_attention" in why, why
print("no window kernel here:", why)
# Run as a script, profile.py must not shadow the standard library's profile
# module, which torch.compile imports (flex_attention failed on the H200 with
# "module 'profile' has no attribute 'run'" before the script dropped its folder
# from sys.path).
import subprocess, signal, csv
here = os.path.dirname(os.path.abspath(__file__))
probe = ("import runpy, sys\n"
         f"sys.path.insert(0, {here!r}); sys.argv = ['profile.py', '--dry-run']\n"
         "try:\n    runpy.run_path(sys.path[0] + '/profile.py', run_name='__main__')\n"
         "except SystemExit:\n    pass\n"
         "sys.modules.pop('profile', None)\nimport profile\n"
         "assert hasattr(profile, 'run'), 'the script shadows the stdlib profile module: ' + profile.__file__\n")
res = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, cwd=os.path.dirname(here))
assert res.returncode == 0, res.stderr
print("no stdlib shadowing ok")
# An interrupted run (Ctrl-C, or SIGTERM turned into one) writes the rows measured so
# far and exits 130; a whole run exits 0.
try:
    P._interrupt(signal.SIGTERM, None)
    raise AssertionError("_interrupt did not raise KeyboardInterrupt")
except KeyboardInterrupt:
    pass
planned, _ = P.plan([(P.builtin_shape("llama3.1-8b"), 1)], 80 * 2 ** 30, 60)
measured = [r for r in planned if r.f["kind"] in ("prefill", "gemm")][:3]
meta = {k: 0 for k in P.META_KEYS}
with tempfile.TemporaryDirectory() as d:
    assert P.write_run(d, measured, meta, True, len(planned)) == 130
    got = list(csv.reader(open(os.path.join(d, "kernels.csv"))))
    assert got[0] == P.COLUMNS and len(got) == 1 + sum(r.file == "kernels.csv" for r in measured), got
    assert sorted(json.load(open(os.path.join(d, "meta.json")))) == sorted(P.META_KEYS)
    assert P.write_run(d, measured, meta, False, len(planned)) == 0
print("interrupted run ok")
