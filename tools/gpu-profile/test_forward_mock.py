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
its router top-k. It checks shapes and arithmetic, not speed. Needs numpy
only: python3 test_forward_mock.py
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
    def topk(self, k, dim=-1):
        assert dim == -1
        idx = np.argsort(-np.asarray(self), axis=-1, kind="stable")[..., :k]
        return (np.take_along_axis(np.asarray(self), idx, -1).view(T), idx)
def t_(a): return a.view(T)
torch = types.SimpleNamespace(bfloat16=np.float32, int64=np.int64, int32=np.int32)
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
torch.ones = lambda *s, device=None, dtype=None: t_(np.ones(s, np.float32))
torch.cat = lambda xs: t_(np.concatenate(xs))
def rms_norm(x, shape, w): return t_(x / np.sqrt((x * x).mean(-1, keepdims=True) + 1e-6) * w)
def silu(x): return t_(x / (1 + np.exp(-x)))
calls = []
def sdpa(q, k, v, is_causal=False, enable_gqa=False):
    calls.append((q.shape, k.shape, is_causal, enable_gqa))
    B, Hq, L, D = q.shape; Hk = k.shape[1]
    if Hq != Hk:
        assert enable_gqa and Hq % Hk == 0
        k = np.repeat(k, Hq // Hk, 1); v = np.repeat(v, Hq // Hk, 1)
    s = q @ np.swapaxes(k, -1, -2) / np.sqrt(D)
    if is_causal:
        S = k.shape[2]; s = s + np.triu(np.full((L, S), -1e9), 1)
    p = np.exp(s - s.max(-1, keepdims=True)); p /= p.sum(-1, keepdims=True)
    return t_(p @ v)
def softmax(x, dim=-1):
    e = np.exp(x - x.max(dim, keepdims=True)); return t_(e / e.sum(dim, keepdims=True))
torch.nn = types.SimpleNamespace(functional=types.SimpleNamespace(rms_norm=rms_norm, silu=silu, scaled_dot_product_attention=sdpa, softmax=softmax))
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
