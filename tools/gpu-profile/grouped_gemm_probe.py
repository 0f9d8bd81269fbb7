"""Grouped-GEMM probe: torch._grouped_mm's time against the rows each expert gets.

Prints CSV (shape,experts,n,k,touched,rows_per_expert,ms,tflops,gbs) for four
expert shapes of the built-in MoE models (Qwen3-30B-A3B's gate-up and down at
TP 1, Mixtral-8x7B's gate-up at TP 2, gpt-oss-120b's gate-up at TP 8): every
expert given the same rows (1 to 2,048), and a few with only some experts
touched. Each time is one grouped GEMM replayed in a CUDA graph (CUDA-event
time over about 0.15 s). The GB/s figure counts the touched experts' weights
and the activations once. What it showed on an H100 and an H200
(data/gpu-runs/*/grouped-gemm.csv): docs/model.md, "The profiler's MoE paths
on real GPUs". Needs a CUDA GPU and PyTorch with torch._grouped_mm:

    python3 tools/gpu-profile/grouped_gemm_probe.py > grouped-gemm.csv
"""
import torch, time, sys
dev = 'cuda'
torch.manual_seed(0)
def bench(fn):
    fn(); torch.cuda.synchronize()
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        fn()
    for _ in range(3):
        g.replay()
    torch.cuda.synchronize()
    t0 = time.time(); n = 0
    while time.time() - t0 < 0.03:
        g.replay(); n += 1
    torch.cuda.synchronize()
    n = max(5, int(n * 0.15 / max(time.time() - t0, 1e-6)))
    e0 = torch.cuda.Event(enable_timing=True); e1 = torch.cuda.Event(enable_timing=True)
    e0.record()
    for _ in range(n):
        g.replay()
    e1.record(); torch.cuda.synchronize()
    return e0.elapsed_time(e1) / n
print("shape,experts,n,k,touched,rows_per_expert,ms,tflops,gbs", flush=True)
shapes = [("qwen3-30b-a3b-gateup", 128, 1536, 2048), ("qwen3-30b-a3b-down", 128, 2048, 768),
          ("mixtral-tp2-gateup", 8, 14336, 4096), ("gptoss-tp8-gateup", 128, 720, 2880)]
for name, E, N, K in shapes:
    W = (torch.randn(E, N, K, device=dev, dtype=torch.bfloat16) * K ** -0.5).transpose(-2, -1)
    cases = [(E, r) for r in [1, 2, 4, 8, 16, 24, 32, 48, 64, 80, 96, 128, 160, 192, 256, 384, 512, 1024, 2048]]
    cases += [(m, 1) for m in [1, 8, 32, 64]] + [(m, 16) for m in [8, 32, 64]]
    for m, r in cases:
        if m > E or m * r * max(N, K) * 2 > 4e9:
            continue
        a = torch.randn(m * r, K, device=dev, dtype=torch.bfloat16)
        cnt = torch.zeros(E, dtype=torch.int32)
        cnt[:m] = r
        offs = torch.cumsum(cnt, 0).to(torch.int32).to(dev)
        try:
            ms = bench(lambda: torch._grouped_mm(a, W, offs=offs))
        except Exception as e:
            print(f"# {name} m={m} r={r}: {str(e).splitlines()[0][:100]}", flush=True)
            continue
        flops = 2 * m * r * N * K
        byts = m * N * K * 2 + m * r * (N + K) * 2
        print(f"{name},{E},{N},{K},{m},{r},{ms:.5f},{flops / ms / 1e9:.1f},{byts / ms / 1e6:.1f}", flush=True)
