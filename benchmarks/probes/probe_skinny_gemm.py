# ruff: noqa: B023  (each lambda is called at once, inside its loop iteration)
"""Which launch configs of ``cudal1.kernelzoo.blocks.skinny_gemm`` win at KernelBench level 1's exact sizes:
7_Matmul_with_small_K_dimension_ ((16384, 32) @ (32, 16384)) and 9_Tall_skinny_matrix_multiplication_
((16384, 16) @ (16, 16384)). GPU only (about 20 s on an H100):

    PYTHONPATH=packages/harness/src:packages/kernelzoo/src python3 benchmarks/probes/probe_skinny_gemm.py [--out F]

Per task: eager ``torch.matmul`` and the kernel under each candidate config, timed as the harness does
(``cudal1.harness.timer.Timer``: 256 MB L2 flush, device synchronise, host clock, call, synchronise; the
CUDA-event time of the same call beside it), in ``--rounds`` rounds that each time every variant once in a
shuffled order; medians reported. Each variant's output is checked against an fp64 product (max |err| /
max |ref|, and the harness's fp32 tolerance against the eager output) after warm-up and again after timing.
TF32 off, as in the harness. Prints one table and the winning config of each task in the form of
``GEMM_CONFIGS``; ``--out`` also writes the rows as JSON.

The candidates explore around the 2026-11-26 winner (64 x 64, 4 warps: 1.167x at K = 32, 1.330x at K = 16;
benchmarks/results/2026-11-26-kernelbench-v0-release-h100/call13-probe-skinny-gemm.txt): smaller tiles with
fewer warps, more and fewer warps on the same tile, and 64 x 128 w4 (1.09x / 1.21x then) as a second control.
All at num_stages 1: at these K the kernel's K steps are unrolled, with no loop to pipeline, and num_stages 2
compiles to the same PTX (checked for sm90 with Triton 3.9); "64x64 w4 s2" is kept once as a control whose
difference from "64x64 w4" is the probe's noise.
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import time
from collections.abc import Callable

import torch
import triton

from cudal1.harness.compare import compare_outputs
from cudal1.harness.timer import Timer
from cudal1.kernelzoo.blocks.skinny_gemm import small_k_matmul_triton

T0 = time.perf_counter()


def _cfg(bm: int, bn: int, warps: int, stages: int = 1) -> dict[str, int]:
    return {"BLOCK_M": bm, "BLOCK_N": bn, "BLOCK_K": 16, "num_warps": warps, "num_stages": stages}


#: small-K GEMM candidates (both K = 32 and K = 16)
GEMM_CANDIDATES: dict[str, dict[str, int]] = {
    "64x64 w4": _cfg(64, 64, 4),  # the 2026-11-26 winner (control)
    "64x64 w4 s2": _cfg(64, 64, 4, 2),  # same PTX as the control: its difference is noise
    "32x64 w2": _cfg(32, 64, 2),
    "64x32 w2": _cfg(64, 32, 2),
    "32x128 w4": _cfg(32, 128, 4),
    "64x128 w4": _cfg(64, 128, 4),  # second on 2026-11-26 (control)
    "64x64 w2": _cfg(64, 64, 2),
    "64x64 w8": _cfg(64, 64, 8),
}


def log(msg: str) -> None:
    print(f"[{time.perf_counter() - T0:6.1f}s] {msg}", flush=True)


def rel_err(out: torch.Tensor, ref64: torch.Tensor) -> float:
    """max |out - ref| / max |ref| against an fp64 product, in row chunks (bounded temporaries)."""
    worst = 0.0
    for i in range(0, out.shape[0], 2048):
        worst = max(worst, (out[i:i + 2048].double() - ref64[i:i + 2048]).abs().max().item())
    return worst / ref64.abs().max().item()


def check(out: torch.Tensor, ref64: torch.Tensor, eager: torch.Tensor) -> tuple[float, bool, str]:
    """(error against fp64, passes the harness's fp32 check against eager, reason if not)."""
    cmp = compare_outputs(out, eager)
    return rel_err(out, ref64), cmp.ok, cmp.reason


def run_task(task: str, args: tuple[torch.Tensor, ...], variants: dict[str, Callable[[], torch.Tensor]],
             configs: dict[str, dict], timer: Timer, rounds: int) -> list[dict]:
    """Warm up and check every variant, time them interleaved, check again; one row per variant."""
    ref64 = torch.matmul(args[0].double(), args[1].double())
    eager = torch.matmul(*args)
    rows: dict[str, dict] = {}
    for name, fn in variants.items():
        t = time.perf_counter()
        try:
            for _ in range(3):
                out = fn()
            torch.cuda.synchronize()
        except Exception as e:  # noqa: BLE001  (a config that does not compile is a result, the rest runs)
            log(f"{task} {name}: failed: {type(e).__name__}: {str(e)[:300]}")
            rows[name] = {"task": task, "variant": name, "error": f"{type(e).__name__}: {str(e)[:300]}"}
            continue
        err, ok, why = check(out, ref64, eager)
        del out
        rows[name] = {"task": task, "variant": name, "config": configs.get(name), "rel_err_fp64": err,
                      "harness_ok": ok, "reason": why, "host_ms": [], "event_ms": []}
        log(f"{task} {name}: warm-up {time.perf_counter() - t:.1f}s, rel err {err:.2e}, harness check "
            f"{'ok' if ok else 'FAILED: ' + why}")
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
    for name in live:  # again after many calls
        err, ok, why = check(variants[name](), ref64, eager)
        r = rows[name]
        r["rel_err_fp64_after"] = err
        r["harness_ok"] = r["harness_ok"] and ok
        r["reason"] = r["reason"] or why
        r["host_ms_median"] = statistics.median(r.pop("host_ms"))
        r["event_ms_median"] = statistics.median(r.pop("event_ms"))
    base = rows["eager"].get("host_ms_median")
    for name in live:
        rows[name]["speedup_vs_eager"] = base / rows[name]["host_ms_median"] if base else None
    del ref64, eager
    torch.cuda.empty_cache()
    return list(rows.values())


def probe_gemm(task: str, m: int, n: int, k: int, dev: torch.device, gen: torch.Generator, timer: Timer,
               rounds: int) -> list[dict]:
    """A small-K task's sizes: eager and the small-K GEMM candidates."""
    a = torch.randn(m, k, device=dev, generator=gen)
    b = torch.randn(k, n, device=dev, generator=gen)
    variants: dict[str, Callable[[], torch.Tensor]] = {"eager": lambda: torch.matmul(a, b)}
    for name, cfg in GEMM_CANDIDATES.items():
        variants[name] = (lambda c: lambda: small_k_matmul_triton(a, b, c))(cfg)
    return run_task(task, (a, b), variants, GEMM_CANDIDATES, timer, rounds)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rounds", type=int, default=50, help="timed calls of each variant (interleaved)")
    ap.add_argument("--out", default=None, help="also write the rows as JSON here")
    opts = ap.parse_args()
    if not torch.cuda.is_available():
        raise SystemExit("probe_skinny_gemm times CUDA kernels: no CUDA device is available")
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    dev = torch.device("cuda")
    timer = Timer(dev, l2_flush_bytes=256 << 20)
    gen = torch.Generator(device=dev).manual_seed(0)
    log(f"{torch.cuda.get_device_name(dev)}, torch {torch.__version__}, triton "
        f"{triton.__version__}, {opts.rounds} rounds")
    rows = probe_gemm("7_small_K (K=32)", 16384, 16384, 32, dev, gen, timer, opts.rounds)
    rows += probe_gemm("9_Tall_skinny (K=16)", 16384, 16384, 16, dev, gen, timer, opts.rounds)

    print()
    print(f"{'task':<30} {'variant':<36} {'host ms':>8} {'event ms':>9} {'x eager':>8} {'rel err':>9} "
          f"{'after':>9}  check")
    for r in rows:
        if "error" in r:
            print(f"{r['task']:<30} {r['variant']:<36} failed: {r['error'][:60]}")
            continue
        print(f"{r['task']:<30} {r['variant']:<36} {r['host_ms_median']:8.4f} {r['event_ms_median']:9.4f} "
              f"{r['speedup_vs_eager']:8.3f} {r['rel_err_fp64']:9.2e} {r['rel_err_fp64_after']:9.2e}  "
              f"{'ok' if r['harness_ok'] else 'FAILED ' + r['reason'][:40]}")
    print()
    for task in dict.fromkeys(r["task"] for r in rows):
        ok = [r for r in rows if r["task"] == task and r.get("config") and r.get("harness_ok")]
        if ok:
            best = min(ok, key=lambda r: r["host_ms_median"])
            print(f"best {task}: {best['variant']} {best['speedup_vs_eager']:.3f}x  config {best['config']}")
    if opts.out:
        with open(opts.out, "w", encoding="utf-8") as f:
            json.dump({"device": torch.cuda.get_device_name(dev), "torch": torch.__version__,
                       "triton": triton.__version__, "rounds": opts.rounds, "rows": rows}, f, indent=1)
    log("done")


if __name__ == "__main__":
    main()
