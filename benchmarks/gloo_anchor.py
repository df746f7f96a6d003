#!/usr/bin/env python3
"""benchmarks/gloo_anchor.py - PyTorch's Gloo allreduce over loopback TCP,
the anchor anchors.py --gloo sets beside collbench's tcp.

  benchmarks/gloo_anchor.py [--np 2] [--min 1M] [--max 64M] [--step 4] [--iters 20]

NP local processes (torch.multiprocessing), the gloo backend, float32 sum,
out of place in the sense that each call reduces a fresh copy of one input
(the copy is outside the time). For each size: one checked call, 3 warm-up
calls, then --iters timed ones; each rank's time per call, the mean over
ranks. CSV on stdout: np,bytes,avg_us,busbw_gbps (busbw = 2(n-1)/n x
bytes / time, nccl-tests' allreduce factor).

Needs PyTorch: Debian 12 has it as python3-torch (1.13, a large package:
`apt-get install python3-torch`). This script does not install it: without
it, it says so on one line and exits 77 (skipped).
"""
import argparse
import os
import socket
import sys
import time


def parse_size(s):
    mult = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}
    return int(s[:-1]) * mult[s[-1].upper()] if s[-1].upper() in mult else int(s)


def rank_main(rank, n, port, sizes, iters, q):
    import torch
    import torch.distributed as dist
    dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{port}", rank=rank, world_size=n)
    rows = []
    for b in sizes:
        x = torch.full((b // 4,), float(rank + 1))
        y = x.clone()
        dist.all_reduce(y)
        if not torch.all(y == n * (n + 1) / 2):
            rows.append((b, -1.0))
            continue
        for _ in range(3):
            y.copy_(x)
            dist.all_reduce(y)
        total = 0.0
        for _ in range(iters):
            y.copy_(x)
            t0 = time.perf_counter()
            dist.all_reduce(y)
            total += time.perf_counter() - t0
        t = torch.tensor([total / iters * 1e6], dtype=torch.float64)
        dist.all_reduce(t)
        rows.append((b, t.item() / n))
    dist.destroy_process_group()
    if rank == 0:
        q.put(rows)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--np", type=int, default=2)
    ap.add_argument("--min", default="1M")
    ap.add_argument("--max", default="64M")
    ap.add_argument("--step", type=int, default=4)
    ap.add_argument("--iters", type=int, default=20)
    a = ap.parse_args()
    try:
        import torch.multiprocessing as mp
    except ImportError:
        print("gloo_anchor.py: needs PyTorch (Debian: apt-get install python3-torch); skipped",
              file=sys.stderr)
        sys.exit(77)
    lo, hi = parse_size(a.min), parse_size(a.max)
    if a.np < 2 or lo < 4 or lo > hi or a.step < 2:
        sys.exit("gloo_anchor.py: need --np >= 2, 4 <= --min <= --max, --step >= 2")
    sizes, b = [], lo
    while b <= hi:
        sizes.append(b - b % 4)
        b *= a.step
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    ctx = mp.get_context("spawn")
    q = ctx.Queue()
    procs = [ctx.Process(target=rank_main, args=(r, a.np, port, sizes, a.iters, q)) for r in range(a.np)]
    for p in procs:
        p.start()
    rows = q.get(timeout=900)
    for p in procs:
        p.join(60)
    print("np,bytes,avg_us,busbw_gbps")
    for b, us in rows:
        if us < 0:
            sys.exit(f"gloo_anchor.py: wrong result at {b} bytes")
        print(f"{a.np},{b},{us:.2f},{b / (us * 1e3) * 2 * (a.np - 1) / a.np:.4f}")


if __name__ == "__main__":
    main()
