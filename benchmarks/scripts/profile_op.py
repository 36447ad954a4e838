"""Where the time of one zoo op's forward+backward goes: torch.profiler's table (CUDA kernels and host ops) of a
few steps, beside the same for eager PyTorch, to tell kernel time from host time.

    python3 benchmarks/scripts/profile_op.py layer_norm --shape 8192,4096 --dtype bf16 [--steps 5]

Takes the row ops with a (N,) weight and optional (N,) bias after ``x`` (layer_norm, rms_norm); prints the two
tables sorted by total CUDA time, then the wall time per step measured around them (CUDA-synchronised).
"""

from __future__ import annotations

import argparse
import time

import torch
from torch.profiler import ProfilerActivity, profile

import cudal1.kernelzoo  # noqa: F401
from cudal1.kernelzoo import registry

_EPS = {"layer_norm": 1e-5, "rms_norm": 1e-6}
_DT = {"bf16": torch.bfloat16, "fp16": torch.float16, "fp32": torch.float32}


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("op", choices=sorted(_EPS))
    ap.add_argument("--shape", default="8192,4096")
    ap.add_argument("--dtype", default="bf16", choices=sorted(_DT))
    ap.add_argument("--steps", type=int, default=5)
    a = ap.parse_args()
    rows, n = (int(s) for s in a.shape.split(","))
    dt = _DT[a.dtype]
    x = torch.randn(rows, n, device="cuda", dtype=dt, requires_grad=True)
    w = torch.randn(n, device="cuda", dtype=dt, requires_grad=True)
    b = torch.randn(n, device="cuda", dtype=dt, requires_grad=True)
    params = (x, w, b) if a.op == "layer_norm" else (x, w)
    dy = torch.randn(rows, n, device="cuda", dtype=dt)
    impls = {"zoo": lambda: registry.call(a.op, *params, _EPS[a.op]),
             "eager": lambda: registry.reference(a.op)(*params, _EPS[a.op])}
    for label, fn in impls.items():
        for _ in range(3):
            torch.autograd.grad(fn(), params, dy)
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
            for _ in range(a.steps):
                torch.autograd.grad(fn(), params, dy)
            torch.cuda.synchronize()
        wall = (time.perf_counter() - t0) / a.steps * 1e3
        print(f"===== {label} {a.op} {a.shape} {a.dtype}: {wall:.3f} ms per step (profiled)")
        print(prof.key_averages().table(sort_by="cuda_time_total", row_limit=14, max_name_column_width=60))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
