"""KernelBench level 1, 9_Tall_skinny_matrix_multiplication_ (A: (16384, 16) fp32, B: (16, 16384) fp32 -> C
(16384, 16384)).

A rank-16 product bound by writing C: 16384^2 x 4 B = 1.07 GB, ~0.36 ms at ~3 TB/s; its 8.6 GFLOP of fp32 FMA
(~0.15 ms) fit under the stores. Eager is cuBLAS's SIMT SGEMM (fp32, TF32 off).

Here :func:`cudal1.kernelzoo.blocks.skinny_gemm.small_k_matmul` (with one K step): one program per 64 x 64 output tile (4 warps), the whole
K = 16 in one ``tl.dot(..., input_precision="ieee")`` (fp32 products and sums), A and B (1 MB each) read from
L2, each tile stored once with ``evict_first`` stores.

Measured on an H100 by benchmarks/scripts/probe_skinny_gemm.py (the probe, not the harness; 2026-11-26, host
time with a cold L2, median of 50): 0.382 ms against eager's 0.508 ms, 1.330x (2.8 TB/s of stores, event
time); 64 x 128 w4 1.21x, 128 x 128 w8 capped at 128 registers 1.11x, persistent grids ~1.05-1.09x
(benchmarks/results/2026-11-26-kernelbench-v0-release-h100/call13-probe-skinny-gemm.txt).

On CPU (and for other dtypes) this is ``torch.matmul``.

Harness: not reached in call 15 (2026-11-26) nor in call 2 (2026-11-27: time caps); call 3 (2026-11-27): rejected
``reference_drift`` (the reference timed 0.741 ms beside this candidate, 0.497 ms alone), with ``timing_unstable``
(benchmarks/results/2026-11-27-kernelbench-v0-level1-h100/call3-level1-pending.txt); call 3 of the ninth pass
(2026-11-27) gave it 200 s and got no result (benchmarks/results/2026-11-27-kernelbench-v0-compile-all-h100.md).
Not verified: stays here.
The same kernel for 7_Matmul_with_small_K_dimension_ measured 1.08x (CI [0.94, 1.21]) and 1.01x (CI [0.80,
1.13]) and was removed.
"""

import torch
import torch.nn as nn

from cudal1.kernelzoo.blocks.skinny_gemm import small_k_matmul


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
        return small_k_matmul(A, B)
