#!/usr/bin/env python3
"""Check profile.py's forward passes without a GPU or PyTorch.

A numpy stand-in for the few torch calls Model uses (randn, ones, cat,
reshape/transpose/chunk, rms_norm, silu, scaled_dot_product_attention with
causal masking and GQA) runs prefill, decode and mixed iterations of a tiny
GQA model at tp 1, 2 and 4 and checks the output shapes, that the decode
attention (each KV head's query heads as query rows) equals GQA attention,
that the new K is written at the last cache position, and that the
repeat-KV prefill fallback equals native GQA. It checks shapes and
arithmetic, not speed. Needs numpy only: python3 test_forward_mock.py
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
def t_(a): return a.view(T)
torch = types.SimpleNamespace(bfloat16=np.float32)
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
torch.nn = types.SimpleNamespace(functional=types.SimpleNamespace(rms_norm=rms_norm, silu=silu, scaled_dot_product_attention=sdpa))
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
