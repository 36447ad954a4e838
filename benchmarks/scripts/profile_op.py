"""Where the time of zoo ops' forward+backward goes: torch.profiler's table (CUDA kernels and host ops) of a few
steps of each op at its benchmark size (bench_backward.SIZES), beside the same for eager PyTorch, to tell kernel
time from host time.

    python3 benchmarks/scripts/profile_op.py sum_dim softmax --dtype bf16 [--steps 5]

Prints per op and implementation the wall time per step (CUDA-synchronised, profiler on) and the profiler's
table sorted by self CPU time (host) and then by CUDA time.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import torch
from torch.profiler import ProfilerActivity, profile

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_backward import DTYPES, SIZES, _leaves, _step  # noqa: E402

from cudal1.kernelzoo import registry  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("ops", nargs="+", choices=sorted(SIZES))
    ap.add_argument("--dtype", default="bf16", choices=sorted(DTYPES))
    ap.add_argument("--steps", type=int, default=5)
    a = ap.parse_args()
    for name in a.ops:
        base = SIZES[name]()
        impls = {"zoo": lambda *x, name=name: registry.call(name, *x), "eager": registry.reference(name)}
        for label, fn in impls.items():
            args, wrt = _leaves(name, base, DTYPES[a.dtype])
            _, ups, _ = _step(fn, args, wrt, None)
            for _ in range(3):
                _step(fn, args, wrt, ups)
            torch.cuda.synchronize()
            t0 = time.perf_counter()
            with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
                for _ in range(a.steps):
                    _step(fn, args, wrt, ups)
                torch.cuda.synchronize()
            wall = (time.perf_counter() - t0) / a.steps * 1e3
            print(f"===== {label} {name} {a.dtype}: {wall:.3f} ms per step (profiled)")
            table = prof.key_averages()
            print(table.table(sort_by="self_cpu_time_total", row_limit=12, max_name_column_width=70))
            print(table.table(sort_by="cuda_time_total", row_limit=6, max_name_column_width=70))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
