"""KernelBench level 1, 9_Tall_skinny_matrix_multiplication_ (A: (16384, 16) fp32, B: (16, 16384) fp32 -> C
(16384, 16384)).

A rank-16 product bound by writing C: 16384^2 x 4 B = 1.07 GB, ~0.37 ms at ~2.9 TB/s; its 4.3 G fp32 FMAs
(~0.14 ms) fit under the stores. Eager is cuBLAS's SIMT SGEMM (fp32, TF32 off): 0.497 ms through the harness
alone (2026-11-27).

Here :func:`cudal1.kernelzoo.blocks.skinny_gemm_cuda.small_k_matmul`: a CUDA C kernel, one 256-thread block per
64 x 128 output tile, A's rows and B's columns staged in shared memory, 4 x 8 outputs a thread accumulated in k
order with fp32 FMAs (no tensor cores), float4 streaming stores. Off CUDA, and for shapes the kernel does not
take, ``torch.matmul``.

History: the Triton version of this file (fp32 ``tl.dot``, 64 x 64 tiles) measured 1.33x in a probe but was
rejected ``reference_drift`` by the harness (2026-11-27: the reference 0.741 ms beside it, 0.497 ms alone). That
was the harness's doing: this task is *tight* (two workers' batches of 1 GB outputs do not fit the GPU together),
so each worker emptied its allocator cache after every step and the next batch's calls ran ``cudaMalloc`` inside
the timed region, which the reference's alone batches never did; ``cudal1.harness.allocator`` now re-reserves
that memory before a batch is timed.
Measured on an H100 (2026-11-27, sandboxed harness, eager baseline): 1.24x, 95% CI [1.20, 1.30] (0.412 ms
against 0.522; the 128 x 128 tile measured 1.19x, CI [1.15, 1.25], an hour before; the reference's paired calls
within 2.3% of its alone ones; benchmarks/results/2026-11-27-kernelbench-v0-l1-kernels-h100.md).
"""

import torch
import torch.nn as nn

from cudal1.kernelzoo.blocks.skinny_gemm_cuda import small_k_matmul


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
        return small_k_matmul(A, B)
