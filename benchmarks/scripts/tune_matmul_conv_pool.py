"""Time the zoo's level-1 matmul / GEMV / pooling / depthwise kernels against PyTorch eager at the built-in
task sizes, over a few launch configs each, and check their results (one GPU, one process).

    export PYTHONPATH=$PWD/packages/harness/src:$PWD/packages/kernelzoo/src
    python3 benchmarks/scripts/tune_matmul_conv_pool.py --out $OUT/tune.json

CUDA events; 2 warm-up calls (the first compiles), then the median of --reps timed calls (no L2 flush:
every input here is far larger than L2). fp32, TF32 off (as the harness). For each variant: median ms,
speedup over torch, GB/s (memory-bound ops: bytes read + written once) or TFLOP/s, and whether it matches
torch (the harness tolerance: |d| <= 1e-4 * rms(ref) + 1e-4 * |ref|). For the GEMM, also the fastest
config's error against an fp64 product next to torch's fp32 error. (The 2026-11-22 run also timed a 3xTF32
variant since removed from the zoo; see benchmarks/results/2026-11-22-tune-matmul-conv-pool-h100.md.) A section that fails prints its error and the rest runs.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
import traceback

import torch
import torch.nn.functional as F

from cudal1.kernelzoo.bench_timer import time_ms
from cudal1.kernelzoo.ops import (
    avg_pool2d,
    avg_pool3d,
    depthwise_conv2d,
    diag_matmul,
    matmul,
    matvec,
    max_pool2d,
)

RESULTS: list[dict] = []
T0 = time.perf_counter()


def log(msg: str) -> None:
    print(f"[{time.perf_counter() - T0:6.1f}s] {msg}", flush=True)


def bench(fn, reps: int) -> float:
    return time_ms(fn, warmup=2, reps=reps)  # the zoo's one timer (cold L2)


def matches(got: torch.Tensor, ref: torch.Tensor) -> bool:
    if got.shape != ref.shape:
        return False
    nan = torch.isnan(ref)
    if not torch.equal(torch.isnan(got), nan):
        return False
    d = (got - ref).abs()
    rms = ref[~nan].float().pow(2).mean().sqrt()
    return bool(((d <= 1e-4 * rms + 1e-4 * ref.abs()) | nan).all())


def run_section(name: str, ref_fn, variants: list[tuple[str, object]], reps: int, nbytes: float = 0.0,
                flop: float = 0.0, extra=None) -> None:
    """Time torch (``ref_fn``) and each (label, fn) variant; record rows."""
    log(f"== {name}")
    ref = ref_fn()
    t_ref = bench(ref_fn, reps)

    def row(label: str, ms: float, ok: bool | None, err: str = "") -> None:
        r = {"section": name, "variant": label, "ms": round(ms, 4), "speedup": round(t_ref / ms, 3) if ms else 0,
             "ok": ok, "error": err}
        if nbytes:
            r["GB/s"] = round(nbytes / ms / 1e6, 1)
        if flop:
            r["TFLOP/s"] = round(flop / ms / 1e9, 1)
        RESULTS.append(r)
        perf = f"{r.get('GB/s', '')} GB/s" if nbytes else f"{r.get('TFLOP/s', '')} TFLOP/s"
        log(f"  {label:<58} {ms:8.3f} ms  x{r['speedup']:<6} {perf:<16} ok={ok} {err}")

    row("torch", t_ref, True)
    for label, fn in variants:
        if time.perf_counter() - T0 > ARGS.deadline:
            log(f"  {label}: skipped (deadline)")
            continue
        try:
            got = fn()
            ok = matches(got, ref)
            del got
            row(label, bench(fn, reps), ok)
        except Exception as e:  # noqa: BLE001  (a config that does not compile is a result too)
            row(label, 0.0, None, f"{type(e).__name__}: {str(e).splitlines()[0][:120] if str(e) else ''}")
    if extra is not None:
        try:
            extra()
        except Exception:  # noqa: BLE001
            traceback.print_exc()
    del ref
    torch.cuda.empty_cache()


def gemm_sections(reps: int) -> None:
    shapes = {  # task: (batch, M, K, N)
        "matmul_square": (0, 4096, 4096, 4096),
        "matmul_rectangular": (0, 6144, 2560, 4096),
        "matmul_batched": (32, 1024, 1536, 1024),
        "matmul_large_k": (0, 1024, 65536, 1024),
        "matmul_skinny_fat": (0, 16384, 128, 16384),
        "matmul_tall_skinny": (0, 262144, 512, 512),
    }
    blocks = [
        (128, 128, 32, 8, 3), (128, 128, 32, 4, 3), (128, 256, 32, 8, 3), (64, 128, 32, 4, 4), (128, 64, 32, 4, 4),
    ]
    for task, (nb, m, k, n) in shapes.items():
        g = torch.Generator(device="cuda").manual_seed(0)
        a = torch.randn(*((nb,) if nb else ()), m, k, device="cuda", generator=g)
        b = torch.randn(*((nb,) if nb else ()), k, n, device="cuda", generator=g)
        variants = []
        splits = [0, 8] if task == "matmul_large_k" else [0]
        for bm, bn, bk, w, st in blocks:
            for sk in splits:
                cfg = {"BLOCK_M": bm, "BLOCK_N": bn, "BLOCK_K": bk, "GROUP_M": 8, "num_warps": w, "num_stages": st,
                       "SPLIT_K": sk}
                variants.append((f"ieee {bm}x{bn}x{bk} w{w} s{st} sk{sk}",
                                 lambda cfg=cfg, a=a, b=b: matmul.matmul_launch(a, b, cfg)))
        flop = 2.0 * max(nb, 1) * m * k * n

        def accuracy(task=task, a=a, b=b):
            best = min((r for r in RESULTS if r["section"] == task and r["variant"].startswith("ieee")
                        and r["ok"]), key=lambda r: r["ms"], default=None)
            if best is None:
                return
            label = best["variant"].split()
            bm, bn, bk = (int(v) for v in label[1].split("x"))
            cfg = {"BLOCK_M": bm, "BLOCK_N": bn, "BLOCK_K": bk, "GROUP_M": 8, "num_warps": int(label[2][1:]),
                   "num_stages": int(label[3][1:]), "SPLIT_K": int(label[4][2:])}
            ref64 = torch.matmul(a.double(), b.double())
            rms = ref64.pow(2).mean().sqrt()
            out = {}
            for name, c in (("triton", matmul.matmul_launch(a, b, cfg)), ("torch_fp32", torch.matmul(a, b))):
                d = (c.double() - ref64).abs()
                out[name] = (float(d.pow(2).mean().sqrt() / rms), float(d.max() / rms))
                del c, d
            del ref64
            RESULTS.append({"section": task, "variant": "accuracy vs fp64 (rel rms, rel max)", **out})
            log(f"  accuracy vs fp64 of best ({best['variant']}): triton rms {out['triton'][0]:.3g} max "
                f"{out['triton'][1]:.3g} | torch fp32 rms {out['torch_fp32'][0]:.3g} max {out['torch_fp32'][1]:.3g}")

        run_section(task, lambda a=a, b=b: torch.matmul(a, b), variants, reps, flop=flop, extra=accuracy)
        a = b = None
        torch.cuda.empty_cache()


def memory_sections(reps: int) -> None:
    g = torch.Generator(device="cuda").manual_seed(1)
    # matvec: 4 GiB matrix
    a = torch.randn(32768, 32768, device="cuda", generator=g)
    x = torch.randn(32768, 1, device="cuda", generator=g)
    variants = []
    for bm, bk, w in [(1, 2048, 4), (2, 2048, 8), (4, 1024, 4), (4, 2048, 8), (8, 1024, 8), (8, 2048, 8),
                      (16, 512, 8), (4, 4096, 8)]:
        cfg = {"BLOCK_M": bm, "BLOCK_K": bk, "num_warps": w}
        variants.append((f"triton BM{bm} BK{bk} w{w}", lambda cfg=cfg: matvec.matvec_launch(a, x, cfg)))
    run_section("matvec", lambda: torch.matmul(a, x), variants, reps, nbytes=a.numel() * 4.0)
    a = x = None
    torch.cuda.empty_cache()

    # diag @ b
    av = torch.randn(4096, device="cuda", generator=g)
    b = torch.randn(4096, 4096, device="cuda", generator=g)
    variants = [(f"triton BLOCK{bl} w{w}", lambda cfg={"BLOCK": bl, "num_warps": w}: diag_matmul.diag_matmul_launch(
        av, b, cfg)) for bl, w in [(1024, 4), (2048, 8), (4096, 8), (4096, 16)]]
    run_section("matmul_diag", lambda: torch.diag(av) @ b, variants, reps, nbytes=2 * b.numel() * 4.0)
    av = b = None

    pool_cfgs = [(4, 128, 4), (8, 128, 4), (8, 128, 8), (16, 128, 8), (4, 64, 4), (16, 64, 8), (32, 128, 8)]
    x = torch.randn(64, 128, 256, 256, device="cuda", generator=g)
    variants = [(f"triton BH{bh} BW{bw} w{w}", lambda c={"BLOCK_H": bh, "BLOCK_W": bw, "num_warps": w}:
                 avg_pool2d.avg_pool2d_launch(x, 2, 2, 0, True, c)) for bh, bw, w in pool_cfgs]
    run_section("avg_pool2d", lambda: F.avg_pool2d(x, 2, 2), variants, reps, nbytes=x.numel() * 4 * 1.25)
    x[0, 0, 5, 7] = float("nan")
    variants = [(f"triton BH{bh} BW{bw} w{w}", lambda c={"BLOCK_H": bh, "BLOCK_W": bw, "num_warps": w}:
                 max_pool2d.max_pool2d_launch(x, 3, 2, 1, c)) for bh, bw, w in pool_cfgs]
    run_section("max_pool2d", lambda: F.max_pool2d(x, 3, 2, 1), variants, reps, nbytes=x.numel() * 4 * 1.25)
    x = None
    torch.cuda.empty_cache()

    x = torch.randn(16, 32, 64, 128, 128, device="cuda", generator=g)
    variants = [(f"triton BH{bh} BW{bw} w{w}", lambda c={"BLOCK_H": bh, "BLOCK_W": bw, "num_warps": w}:
                 avg_pool3d.avg_pool3d_launch(x, 3, 2, 1, True, c)) for bh, bw, w in pool_cfgs]
    run_section("avg_pool3d", lambda: F.avg_pool3d(x, 3, 2, 1), variants, reps, nbytes=x.numel() * 4 * 1.125)
    x = None
    torch.cuda.empty_cache()

    x = torch.randn(64, 512, 128, 128, device="cuda", generator=g)
    w = torch.randn(512, 1, 3, 3, device="cuda", generator=g)
    bias = torch.randn(512, device="cuda", generator=g)
    variants = [(f"triton BH{bh} BW{bw} w{nw}", lambda c={"BLOCK_H": bh, "BLOCK_W": bw, "num_warps": nw}:
                 depthwise_conv2d.depthwise_conv2d_launch(x, w, bias, 1, 1, c))
                for bh, bw, nw in [(8, 128, 4), (16, 128, 8), (32, 128, 8), (16, 64, 4), (32, 64, 8), (64, 128, 16),
                                   (8, 128, 8)]]
    run_section("depthwise_conv2d", lambda: F.conv2d(x, w, bias, 1, 1, 1, 512), variants, reps,
                nbytes=x.numel() * 8.0)
    x = None
    torch.cuda.empty_cache()


def main() -> int:
    global ARGS
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--reps", type=int, default=10)
    ap.add_argument("--deadline", type=float, default=200.0, help="seconds after which variants are skipped")
    ap.add_argument("--only", choices=["gemm", "memory"], default=None)
    ARGS = ap.parse_args()
    torch.backends.cuda.matmul.allow_tf32 = False  # the harness's numerics, as in calibrate_eager.py
    torch.backends.cudnn.allow_tf32 = False
    import triton

    log(f"{torch.cuda.get_device_name()} torch {torch.__version__} triton {triton.__version__} "
        f"SMs {torch.cuda.get_device_properties(0).multi_processor_count}")
    try:
        sections = ([memory_sections] if ARGS.only != "gemm" else []) + ([gemm_sections] if ARGS.only != "memory"
                                                                         else [])
        for section in sections:
            try:
                section(ARGS.reps)
            except Exception:  # noqa: BLE001
                traceback.print_exc()
    finally:
        with open(ARGS.out, "w") as f:
            json.dump({"device": torch.cuda.get_device_name(), "torch": torch.__version__,
                       "triton": triton.__version__, "results": RESULTS}, f, indent=1)
        log(f"wrote {ARGS.out}")
    return 0


ARGS: argparse.Namespace
if __name__ == "__main__":
    sys.exit(main())
