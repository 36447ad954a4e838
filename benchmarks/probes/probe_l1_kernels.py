# ruff: noqa: B023  (each lambda is called at once, inside its loop iteration)
"""The eleventh pass's level-1 kernels at KernelBench's exact sizes, against eager and the versions they replace:
the CUDA C small-K GEMM (``blocks.skinny_gemm_cuda``; 7_Matmul_with_small_K_dimension_, 9_Tall_skinny), eval-mode
batch norm (``blocks.streaming_cuda.batch_norm_eval``; 33_BatchNorm), the rows average pool (``blocks.pool_cuda``,
``method="rows"``; 45_Average_Pooling_2D) and the implicit-GEMM convolution for 3 input channels
(``blocks.conv_small_k_cuda``; 55, 59, 63, 80, against ``blocks.conv_rows_cuda``). GPU only (under a minute on
an H100):

    PYTHONPATH=packages/harness/src:packages/kernelzoo/src python3 benchmarks/probes/probe_l1_kernels.py [--out F]

Timing and checks as ``probe_streaming_pool.py`` (its ``run_task``: the harness's ``Timer``, 256 MB L2 flush,
host clock between device synchronisations, CUDA-event time beside it, rounds in shuffled order, medians; every
variant checked against eager with the harness's comparison before and after timing). Outputs are allocated from
a warm cache, as in the harness's batches. The probe, not the harness: only the harness's numbers are results.
"""

from __future__ import annotations

import argparse

import torch
import torch.nn as nn
from probe_streaming_pool import log, report, run_task

from cudal1.harness.timer import Timer
from cudal1.kernelzoo.blocks import (
    conv_rows_cuda,
    conv_small_k_cuda,
    pool_cuda,
    skinny_gemm,
    skinny_gemm_cuda,
    streaming_cuda,
)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rounds", type=int, default=30)
    ap.add_argument("--out", default=None)
    opts = ap.parse_args()
    if not torch.cuda.is_available():
        raise SystemExit("probe_l1_kernels times CUDA kernels: no CUDA device is available")
    dev = torch.device("cuda")
    timer = Timer(dev, l2_flush_bytes=256 << 20)
    g = torch.Generator(device=dev).manual_seed(0)
    log(f"{torch.cuda.get_device_name(dev)}, torch {torch.__version__}, {opts.rounds} rounds")
    rows: list[dict] = []

    for task, k in (("7_Matmul_with_small_K_dimension_", 32), ("9_Tall_skinny_matrix_multiplication_", 16)):
        a = torch.randn(16384, k, device=dev, generator=g)
        b = torch.randn(k, 16384, device=dev, generator=g)
        rows += run_task(task, {
            "eager": lambda: torch.matmul(a, b),
            "triton 64x64": lambda: skinny_gemm.small_k_matmul_triton(a, b),
            "cuda tm8": lambda: skinny_gemm_cuda.small_k_matmul_cuda(a, b, 8),
            "cuda tm4": lambda: skinny_gemm_cuda.small_k_matmul_cuda(a, b, 4)}, timer, opts.rounds)
        torch.cuda.empty_cache()

    x = torch.randn(16, 64, 256, 256, device=dev, generator=g)
    bn = nn.BatchNorm2d(64).to(dev).eval()
    with torch.no_grad():
        bn.running_mean.normal_(generator=g)
        bn.running_var.uniform_(0.5, 2.0, generator=g)
        bn.weight.normal_(generator=g)
        bn.bias.normal_(generator=g)
    bn_args = (bn.running_mean, bn.running_var, bn.weight, bn.bias, bn.eps)
    variants = {"eager": lambda: bn(x), "x*3.14 (yardstick, not BN)": lambda: x * 3.14}
    for u in (2, 4, 8):
        variants[f"cuda u{u}"] = lambda u=u: streaming_cuda.batch_norm_eval(x, *bn_args, unroll=u)
    with torch.no_grad():
        rows += run_task("33_BatchNorm", variants, timer, opts.rounds)
    a2 = nn.AvgPool2d(3)
    rows += run_task("45_Average_Pooling_2D", {
        "eager": lambda: a2(x),
        "direct": lambda: pool_cuda.avg_pool(x, 3),
        "rows": lambda: pool_cuda.avg_pool(x, 3, method="rows")}, timer, opts.rounds)

    convs = {  # task: (input shape, conv module)
        "55_conv_standard_2D (3x3)": ((16, 3, 128, 256), nn.Conv2d(3, 64, 3, bias=False)),
        "63_conv_standard_2D (3x3)": ((16, 3, 256, 256), nn.Conv2d(3, 64, 3, bias=False)),
        "80_conv_standard_2D (3x5 pad dil)": ((16, 3, 256, 256), nn.Conv2d(3, 64, (3, 5), padding=(1, 2),
                                                                           dilation=(2, 1), bias=False)),
        "59_conv_standard_3D (3x3x1)": ((16, 3, 256, 256, 10), nn.Conv3d(3, 64, (3, 3, 1), bias=False)),
    }
    for task, (shape, mod) in convs.items():
        mod = mod.to(dev).eval()
        xi = torch.randn(shape, device=dev, generator=g)
        args = (mod.weight, mod.bias, mod.stride, mod.padding, mod.dilation, mod.groups)
        with torch.no_grad():
            rows += run_task(task, {"eager": lambda: mod(xi), "conv_rows_cuda": lambda: conv_rows_cuda.conv(xi, *args),
                                    "conv_small_k_cuda": lambda: conv_small_k_cuda.conv(xi, *args)}, timer,
                             opts.rounds)
        torch.cuda.empty_cache()

    report(rows, opts.out, torch.cuda.get_device_name(dev), opts.rounds, widths=(38, 32))
    log("done")

if __name__ == "__main__":
    main()
