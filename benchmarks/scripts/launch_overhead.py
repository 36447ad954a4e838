"""Host-side cost of one zoo op call on a GPU, piece by piece (why a 1.5 ms memory-bound op timed by the
harness's host clock can lose to eager while its kernel alone does not).

    PYTHONPATH=packages/harness/src:packages/kernelzoo/src python3 benchmarks/scripts/launch_overhead.py
"""

from __future__ import annotations

import time

import torch

from cudal1.kernelzoo import arch
from cudal1.kernelzoo.ops import relu as relu_mod


def host_us(fn, x, n=2000):
    for _ in range(50):
        fn(x)
    torch.cuda.synchronize()
    t = time.perf_counter()
    for _ in range(n):
        fn(x)
    torch.cuda.synchronize()
    return (time.perf_counter() - t) / n * 1e6


def synced_ms(fn, x, n=30):
    """Median of sync -> call -> sync host times, as the harness's timer does."""
    ts = []
    for _ in range(n):
        torch.cuda.synchronize()
        t = time.perf_counter()
        out = fn(x)
        torch.cuda.synchronize()
        ts.append((time.perf_counter() - t) * 1e3)
        del out
    ts.sort()
    return ts[len(ts) // 2]


def main() -> None:
    small = torch.randn(1024, device="cuda")
    big = torch.randn(16384, 32768, device="cuda")
    cfg = relu_mod.CONFIGS["sm90"] if hasattr(relu_mod, "CONFIGS") else None
    cases = {
        "torch.relu": torch.relu,
        "zoo relu (public)": relu_mod.relu,
        "torch.ops.cudal1.relu": torch.ops.cudal1.relu,
        "relu_launch (pick config)": relu_mod.relu_launch,
        "relu_launch (fixed config)": lambda x: relu_mod.relu_launch(x, cfg),
        "arch.pick only": lambda x: arch.pick(relu_mod.CONFIGS, x.device),
        "torch.empty_like": torch.empty_like,
    }
    print(f"{'case':<30} {'host us/call (1 Ki elems, pipelined)':>38} {'synced ms (2 GiB)':>18}")
    for name, fn in cases.items():
        print(f"{name:<30} {host_us(fn, small):38.1f} {synced_ms(fn, big):18.3f}", flush=True)


if __name__ == "__main__":
    main()
