"""KernelBench level 1, 7_Matmul_with_small_K_dimension_ (A: (16384, 32) fp32, B: (32, 16384) fp32 -> C (16384,
16384)).

A rank-32 product whose cost is writing C: 16384^2 x 4 B = 1.07 GB, ~0.36 ms at ~3 TB/s, and 2 x 16384^2 x 32 =
17.2 GFLOP of fp32 FMA, ~0.29 ms at the H100's ~60 TFLOP/s (sustained clock), which can run while the stores
drain. Eager is cuBLAS's SIMT SGEMM (fp32, TF32 off).

Here :func:`cudal1.kernelzoo.blocks.skinny_gemm.small_k_matmul`: one program per 64 x 64 output tile (4 warps),
K in two unrolled 16-wide ``tl.dot(..., input_precision="ieee")`` steps (fp32 products and sums), A and B (2 MB
each) read from L2, each tile stored once with ``evict_first`` stores.

Measured on an H100 by benchmarks/scripts/probe_skinny_gemm.py (the probe, not the harness; 2026-11-26, host
time with a cold L2, median of 50): 0.580 ms against eager's 0.677 ms, 1.167x; 64 x 128 w4 1.09x, 128 x 128 w8
capped at 128 registers 1.11x, persistent grids ~1.0x (benchmarks/results/2026-11-26-kernelbench-v0-release-h100/call13-probe-skinny-gemm.txt).

On CPU (and for other dtypes, or K > 64) this is ``torch.matmul``.

Harness (call 15, 2026-11-26): 1.08x, 95% CI [0.94, 1.21], timing_unstable: not above 1, so not in the set; measure again.
"""

import torch
import torch.nn as nn

from cudal1.kernelzoo.blocks.skinny_gemm import small_k_matmul


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
        return small_k_matmul(A, B)
