# ruff: noqa: B023  (each lambda is called at once, inside its loop iteration)
"""Launch paths and configs of ``blocks.pool_cuda`` / ``blocks.streaming_cuda`` at KernelBench level 1's exact
sizes: 43_Max_Pooling_3D (direct and plane kernels), 42_Max_Pooling_2D, 45_Average_Pooling_2D, 37_FrobeniusNorm_.
GPU only (about a minute on an H100):

    PYTHONPATH=packages/harness/src:packages/kernelzoo/src python3 benchmarks/probes/probe_streaming_pool.py [--out F]

Per task: the eager expression and each variant, timed as the harness does (``cudal1.harness.timer.Timer``:
256 MB L2 flush, synchronise, host clock, call, synchronise; the CUDA-event time beside it), ``--rounds`` rounds
each timing every variant once in a shuffled order; medians. Every variant's output is checked against eager
with the harness's comparison after warm-up and after timing. Variants: the driver launch
(``cuda_jit.DirectKernel``, the blocks' default) and CuPy's launch path (``$CUDAL1_CUDA_LAUNCH=cupy``, set around
the call: its cost of ~1 us is inside that variant's time) for the default config, then the other configs with
the driver launch. A tiny Frobenius normalisation (4096 values, two launches) shows the launch paths' host cost.
The first version of this probe (2026-11-27 call 1, log in benchmarks/results/2026-11-27-kernelbench-v0-level1-h100/)
also timed a split-row GEMV (4_Matrix_vector) and a scale kernel (5_Matrix_scalar), which lost and were removed.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import time
from collections.abc import Callable

import torch
import torch.nn as nn

from cudal1.harness.compare import compare_outputs
from cudal1.harness.timer import Timer
from cudal1.kernelzoo import cuda_jit
from cudal1.kernelzoo.blocks import pool_cuda, streaming_cuda

T0 = time.perf_counter()


def log(msg: str) -> None:
    print(f"[{time.perf_counter() - T0:6.1f}s] {msg}", flush=True)


def via_cupy(fn: Callable[[], torch.Tensor]) -> Callable[[], torch.Tensor]:
    def call() -> torch.Tensor:
        os.environ[cuda_jit.LAUNCH_ENV] = "cupy"
        try:
            return fn()
        finally:
            del os.environ[cuda_jit.LAUNCH_ENV]
    return call


def run_task(task: str, variants: dict[str, Callable[[], torch.Tensor]], timer: Timer, rounds: int) -> list[dict]:
    eager = variants["eager"]()
    rows: dict[str, dict] = {}
    for name, fn in variants.items():
        t = time.perf_counter()
        try:
            for _ in range(3):
                out = fn()
            torch.cuda.synchronize()
        except Exception as e:  # noqa: BLE001  (a variant that fails is a result; the rest runs)
            log(f"{task} {name}: failed: {type(e).__name__}: {str(e)[:300]}")
            rows[name] = {"task": task, "variant": name, "error": f"{type(e).__name__}: {str(e)[:300]}"}
            continue
        cmp = compare_outputs(out, eager)
        exact = bool(torch.equal(out, eager))
        rows[name] = {"task": task, "variant": name, "harness_ok": cmp.ok, "reason": cmp.reason, "exact": exact,
                      "host_ms": [], "event_ms": []}
        log(f"{task} {name}: warm-up {time.perf_counter() - t:.1f}s, check {'ok' if cmp.ok else cmp.reason}, "
            f"{'bitwise equal' if exact else 'not bitwise equal'}")
        del out
    live = [n for n in variants if "error" not in rows[n]]
    rng = random.Random(0)
    for _ in range(rounds):
        order = live[:]
        rng.shuffle(order)
        for name in order:
            host, event, out = timer.time_call_detailed(variants[name], ())
            rows[name]["host_ms"].append(host)
            rows[name]["event_ms"].append(event)
            del out
    for name in live:
        cmp = compare_outputs(variants[name](), eager)
        r = rows[name]
        r["harness_ok"] = r["harness_ok"] and cmp.ok
        r["reason"] = r["reason"] or cmp.reason
        r["host_ms_median"] = statistics.median(r.pop("host_ms"))
        r["event_ms_median"] = statistics.median(r.pop("event_ms"))
    base = rows["eager"].get("host_ms_median")
    for name in live:
        rows[name]["speedup_vs_eager"] = base / rows[name]["host_ms_median"] if base else None
    del eager
    torch.cuda.empty_cache()
    return list(rows.values())


def report(rows: list[dict], out: str | None, device: str, rounds: int, widths: tuple[int, int] = (32, 18)) -> None:
    """Print the rows of :func:`run_task` as a table and, with ``out``, write them as JSON."""
    tw, vw = widths
    print()
    print(f"{'task':<{tw}} {'variant':<{vw}} {'host ms':>8} {'event ms':>9} {'x eager':>8}  check")
    for r in rows:
        if "error" in r:
            print(f"{r['task']:<{tw}} {r['variant']:<{vw}} failed: {r['error'][:80]}")
            continue
        print(f"{r['task']:<{tw}} {r['variant']:<{vw}} {r['host_ms_median']:8.4f} {r['event_ms_median']:9.4f} "
              f"{r['speedup_vs_eager']:8.3f}  {'ok' if r['harness_ok'] else 'FAILED ' + r['reason'][:40]}"
              f"{' exact' if r['exact'] else ''}")
    if out:
        with open(out, "w", encoding="utf-8") as f:
            json.dump({"device": device, "torch": torch.__version__, "rounds": rounds, "rows": rows}, f, indent=1)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rounds", type=int, default=40)
    ap.add_argument("--out", default=None)
    opts = ap.parse_args()
    if not torch.cuda.is_available():
        raise SystemExit("probe_streaming_pool times CUDA kernels: no CUDA device is available")
    dev = torch.device("cuda")
    timer = Timer(dev, l2_flush_bytes=256 << 20)
    g = torch.Generator(device=dev).manual_seed(0)
    log(f"{torch.cuda.get_device_name(dev)}, torch {torch.__version__}, {opts.rounds} rounds")
    rows: list[dict] = []

    tiny = torch.randn(4096, device=dev, generator=g)
    rows += run_task("launch cost: frobenius, 4096 values", {
        "eager": lambda: tiny / torch.norm(tiny, p="fro"),
        "direct": lambda: streaming_cuda.frobenius_normalize(tiny),
        "cupy": via_cupy(lambda: streaming_cuda.frobenius_normalize(tiny))}, timer, opts.rounds)

    x3 = torch.randn(16, 32, 64, 64, 64, device=dev, generator=g)
    m = nn.MaxPool3d(3, stride=2, padding=1, dilation=3)
    rows += run_task("43_Max_Pooling_3D", {
        "eager": lambda: m(x3),
        "direct": lambda: pool_cuda.max_pool(x3, 3, 2, 1, 3),
        "planes": lambda: pool_cuda.max_pool(x3, 3, 2, 1, 3, method="planes"),
        "cupy": via_cupy(lambda: pool_cuda.max_pool(x3, 3, 2, 1, 3))}, timer, opts.rounds)

    x2 = torch.randn(16, 32, 128, 128, device=dev, generator=g)
    m2 = nn.MaxPool2d(2, stride=2, padding=1, dilation=3)
    rows += run_task("42_Max_Pooling_2D", {
        "eager": lambda: m2(x2),
        "direct": lambda: pool_cuda.max_pool(x2, 2, 2, 1, 3),
        "cupy": via_cupy(lambda: pool_cuda.max_pool(x2, 2, 2, 1, 3))}, timer, opts.rounds)

    x = torch.randn(16, 64, 256, 256, device=dev, generator=g)
    a2 = nn.AvgPool2d(3)
    rows += run_task("45_Average_Pooling_2D", {
        "eager": lambda: a2(x),
        "direct": lambda: pool_cuda.avg_pool(x, 3),
        "cupy": via_cupy(lambda: pool_cuda.avg_pool(x, 3))}, timer, opts.rounds)

    norm_variants: dict[str, Callable[[], torch.Tensor]] = {
        "eager": lambda: x / torch.norm(x, p="fro"),
        "direct u4 b1056": lambda: streaming_cuda.frobenius_normalize(x),
        "cupy u4 b1056": via_cupy(lambda: streaming_cuda.frobenius_normalize(x))}
    for u in (2, 4, 8):
        for b in (528, 1056, 2112, 4224):
            if (u, b) != (4, 1056):
                norm_variants[f"direct u{u} b{b}"] = (lambda u=u, b=b: streaming_cuda.frobenius_normalize(x, u, b))
    rows += run_task("37_FrobeniusNorm_", norm_variants, timer, opts.rounds)

    report(rows, opts.out, torch.cuda.get_device_name(dev), opts.rounds, widths=(32, 18))
    log("done")

if __name__ == "__main__":
    main()
