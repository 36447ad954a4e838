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
    import os

    from cudal1.kernelzoo import autotune, cuda_jit
    from cudal1.kernelzoo.ops import _elementwise

    small = torch.randn(1024, device="cuda")
    big = torch.randn(16384, 32768, device="cuda")
    dev = big.device
    cfg = relu_mod.CONFIGS["sm90"] if hasattr(relu_mod, "CONFIGS") else None
    run = relu_mod.relu_launch

    def public_no_memo(x):
        _elementwise._CONFIG_MEMO.clear()
        return relu_mod.relu(x)

    def config_no_memo(x):
        _elementwise._CONFIG_MEMO.clear()
        return _elementwise.elementwise_config("relu", x, relu_mod.CONFIGS, run, has_cuda=True)

    cases = {
        "torch.relu": torch.relu,
        "zoo relu (public)": relu_mod.relu,
        "zoo relu (public, config memo cleared each call)": public_no_memo,
        "torch.ops.cudal1.relu": torch.ops.cudal1.relu,
        "relu_launch (pick config)": relu_mod.relu_launch,
        "relu_launch (fixed config)": lambda x: relu_mod.relu_launch(x, cfg),
        "elementwise_config (memo hit)": lambda x: _elementwise.elementwise_config(
            "relu", x, relu_mod.CONFIGS, run, has_cuda=True),
        "elementwise_config (memo cleared)": config_no_memo,
        "torch.cuda.get_device_name": lambda x: torch.cuda.get_device_name(dev),
        "torch.cuda.get_device_properties": lambda x: torch.cuda.get_device_properties(dev),
        "autotune.tuned (device name cached)": lambda x: autotune.tuned(
            "relu", ("float32", 1024, True), _elementwise.TRITON_CANDIDATES, run, cfg, dev),
        "autotune.cache_path": lambda x: autotune.cache_path(),
        "cuda_jit.choose_backend": lambda x: cuda_jit.choose_backend(relu_mod.CONFIGS, dev, has_cuda=True),
        "os.environ.get x5": lambda x: [os.environ.get(k) for k in ("A", "B", "C", "D", "E")],
        "arch.pick only": lambda x: arch.pick(relu_mod.CONFIGS, x.device),
        "torch.empty_like": torch.empty_like,
    }
    print(f"{'case':<50} {'host us/call (1 Ki elems, pipelined)':>38} {'synced ms (2 GiB)':>18}")
    for name, fn in cases.items():
        print(f"{name:<50} {host_us(fn, small):38.1f} {synced_ms(fn, big):18.3f}", flush=True)


if __name__ == "__main__":
    main()
