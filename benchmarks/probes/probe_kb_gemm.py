"""KernelBench level 1's eleven fp32 GEMM tasks at their original sizes: the task's own forward (cuBLAS, TF32 off)
against the zoo's exact-fp32 Triton matmul (``ops.matmul.matmul_launch``: FFMA ``tl.dot(..., input_precision=
"ieee")``) over a few tile configs, each output's error against a float64 product. One GPU process:

    PYTHONPATH=packages/harness/src:packages/kernelzoo/src python3 benchmarks/probes/probe_kb_gemm.py \
        --kernelbench .carry/kb/kernelbench-v0 [--reps 20] [--out probe.json]

``--sweep`` tries a larger tile grid (``SWEEP``); every tile's time is kept in the JSON. Timing: CUDA events around
each call, 3 warm-up calls, the median of ``--reps`` (no L2 flush: every operand set
but one is larger than L2 or compute-bound). Error: max |out - ref| / max |ref| with ref the float64 product of
the same fp32 inputs. Prints a markdown table (TFLOP/s = 2 MNK per call over the median).
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import torch


def zoo_products() -> dict[str, Callable[..., Any]]:
    """Task -> how the zoo's ``matmul_launch`` computes the same product from the task's inputs:
    ``f(config, *inputs)``."""
    from cudal1.kernelzoo.ops.matmul import matmul_launch as mm

    return {
        "1_Square_matrix_multiplication_": lambda c, a, b: mm(a, b, c),
        "2_Standard_matrix_multiplication_": lambda c, a, b: mm(a, b, c),
        "3_Batched_matrix_multiplication": lambda c, a, b: mm(a, b, c),
        "6_Matmul_with_large_K_dimension_": lambda c, a, b: mm(a, b, c),
        "8_Matmul_with_irregular_shapes_": lambda c, a, b: mm(a, b, c),
        "10_3D_tensor_matrix_multiplication": lambda c, a, b: mm(a, b, c),
        "11_4D_tensor_matrix_multiplication": lambda c, a, b: mm(a.reshape(-1, a.shape[-1]), b, c).view(
            *a.shape[:-1], b.shape[-1]),
        "13_Matmul_for_symmetric_matrices": lambda c, a, b: mm(a, b, c),
        "16_Matmul_with_transposed_A": lambda c, a, b: mm(a.T, b, c),
        "17_Matmul_with_transposed_B": lambda c, a, b: mm(a, b.T, c),
        "18_Matmul_with_transposed_both": lambda c, a, b: mm(a.T, b.T, c),
    }


CONFIGS = [
    {"BLOCK_M": 128, "BLOCK_N": 128, "BLOCK_K": 32, "GROUP_M": 8, "num_warps": 8, "num_stages": 3},
    {"BLOCK_M": 128, "BLOCK_N": 64, "BLOCK_K": 32, "GROUP_M": 8, "num_warps": 4, "num_stages": 4},
    {"BLOCK_M": 64, "BLOCK_N": 128, "BLOCK_K": 32, "GROUP_M": 8, "num_warps": 4, "num_stages": 4},
    {"BLOCK_M": 128, "BLOCK_N": 256, "BLOCK_K": 16, "GROUP_M": 8, "num_warps": 8, "num_stages": 3},
    {"BLOCK_M": 256, "BLOCK_N": 128, "BLOCK_K": 16, "GROUP_M": 8, "num_warps": 8, "num_stages": 3},
]


#: ``--sweep``: every tile of this grid that fits (the default list above is its first cut)
SWEEP = [{"BLOCK_M": bm, "BLOCK_N": bn, "BLOCK_K": bk, "GROUP_M": 8, "num_warps": w, "num_stages": st}
         for bm, bn in ((64, 64), (64, 128), (128, 64), (128, 128), (64, 256), (256, 64), (128, 256), (256, 128))
         for bk in (16, 32, 64) for w in (4, 8) for st in (3, 4)
         if bm * bn // (32 * w) <= 128 and (bm + bn) * bk * st * 4 <= 200 * 1024]


def time_ms(fn: Callable[[], Any], reps: int) -> float:
    """Median ms of ``reps`` calls after 3 warm-ups, L2 not flushed (the zoo's bench timer)."""
    from cudal1.kernelzoo.bench_timer import time_ms as median_ms

    return median_ms(fn, warmup=3, reps=reps, cold_l2=False)


def rel_err(out: torch.Tensor, ref: torch.Tensor) -> float:
    return float((out.double() - ref).abs().max() / ref.abs().max())


def load_task(path: Path) -> Any:
    spec = importlib.util.spec_from_file_location(path.stem, path)
    mod = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
    spec.loader.exec_module(mod)  # type: ignore[union-attr]
    return mod


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--kernelbench", type=Path, required=True)
    ap.add_argument("--reps", type=int, default=20)
    ap.add_argument("--out", type=Path)
    ap.add_argument("--tasks", default="", help="comma-separated subset")
    ap.add_argument("--sweep", action="store_true", help="try every tile of SWEEP instead of CONFIGS")
    args = ap.parse_args()
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    zoo = zoo_products()
    print(f"gpu={torch.cuda.get_device_name()} torch={torch.__version__} "
          f"triton={__import__('triton').__version__}", flush=True)
    wanted = [t for t in args.tasks.split(",") if t] or list(zoo)
    rows = []
    for name in wanted:
        mod = load_task(args.kernelbench / "level1" / f"{name}.py")
        torch.manual_seed(0)
        inputs = [x.cuda() for x in mod.get_inputs()]
        model = mod.Model(*mod.get_init_inputs()).cuda()
        with torch.no_grad():
            out = model(*inputs)
            m = out.numel() // out.shape[-1]
            n = out.shape[-1]
            a = inputs[0]
            k = a.shape[-2] if name in ("16_Matmul_with_transposed_A", "18_Matmul_with_transposed_both") \
                else a.shape[-1]
            flop = 2 * m * n * k
            ref = model.double()(*[x.double() for x in inputs])
            model.float()
            e_torch = rel_err(out, ref)
            del out
            t_torch = time_ms(lambda m=model, xs=inputs: m(*xs), args.reps)
            flat = None
            if name == "11_4D_tensor_matrix_multiplication":  # the same product as one 2-D cuBLAS call
                flat = time_ms(lambda xs=inputs: torch.matmul(xs[0].reshape(-1, xs[0].shape[-1]), xs[1]), args.reps)
            best, tried = None, []
            for cfg in (SWEEP if args.sweep else CONFIGS):
                try:
                    z = zoo[name](cfg, *inputs)
                    err = rel_err(z, ref)
                    del z
                    t = time_ms(lambda f=zoo[name], c=cfg, xs=inputs: f(c, *xs), args.reps)
                except Exception as ex:  # a config that does not compile or fit: reported, not fatal
                    print(f"  {name} {cfg}: {type(ex).__name__}: {str(ex)[:120]}", flush=True)
                    continue
                tried.append({**cfg, "ms": round(t, 4)})
                if best is None or t < best[0]:
                    best = (t, cfg, err)
            del ref
        row = {"task": name, "gflop": flop / 1e9, "cublas_ms": t_torch, "cublas_tflops": flop / t_torch / 1e9,
               "cublas_rel_err": e_torch, "cublas_2d_ms": flat, "zoo_tried": tried}
        if best:
            row.update(zoo_ms=best[0], zoo_tflops=flop / best[0] / 1e9, zoo_cfg=best[1], zoo_rel_err=best[2],
                       zoo_over_cublas=t_torch / best[0])
        rows.append(row)
        print(json.dumps({k: v for k, v in row.items() if k != "zoo_tried"}), flush=True)
        del inputs, model
        torch.cuda.empty_cache()
    print("\n| task | GFLOP | cuBLAS ms | cuBLAS TFLOP/s | zoo ieee best ms | TFLOP/s | zoo / cuBLAS speed | "
          "rel err cuBLAS / zoo | zoo tile |")
    print("|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        z = (f"{r['zoo_ms']:.3f} | {r['zoo_tflops']:.1f} | {r['zoo_over_cublas']:.2f}x | "
             f"{r['cublas_rel_err']:.1e} / {r['zoo_rel_err']:.1e} | "
             f"{r['zoo_cfg']['BLOCK_M']}x{r['zoo_cfg']['BLOCK_N']}x{r['zoo_cfg']['BLOCK_K']} "
             f"w{r['zoo_cfg']['num_warps']} s{r['zoo_cfg']['num_stages']}") if "zoo_ms" in r else "- | - | - | - | -"
        print(f"| {r['task']} | {r['gflop']:.1f} | {r['cublas_ms']:.3f} | {r['cublas_tflops']:.1f} | {z} |")
    if args.out:
        args.out.write_text(json.dumps(rows, indent=1))
    sys.stdout.flush()


if __name__ == "__main__":
    main()
