"""KernelBench level 1, 7_Matmul_with_small_K_dimension_ (A: (16384, 32) fp32, B: (32, 16384) fp32 -> C (16384,
16384)).

A rank-32 product: writing C (16384^2 x 4 B = 1.07 GB, ~0.37 ms at ~2.9 TB/s) and 8.6 G fp32 FMAs (~0.27 ms at
the H100's FP32 rate) that can overlap. Eager is cuBLAS's SIMT SGEMM (fp32, TF32 off): 0.679 ms through the
harness alone (2026-11-27).

Here :func:`cudal1.kernelzoo.blocks.skinny_gemm_cuda.small_k_matmul`: a CUDA C kernel, one 256-thread block per
64 x 128 output tile, A's rows and B's columns staged in shared memory, 4 x 8 outputs a thread accumulated in k
order with fp32 FMAs (no tensor cores), float4 streaming stores. Off CUDA, and for shapes the kernel does not
take, ``torch.matmul``.

History: a Triton version (fp32 ``tl.dot``, 64 x 64 tiles; 1.17x in a probe) measured 1.08x (CI [0.94, 1.21])
and 1.01x (CI [0.80, 1.13]) through the harness and was removed (2026-11-26/27). Those pairs timed ``cudaMalloc``
of the 1 GB outputs inside every paired call (this task is *tight*: see ``cudal1.harness.allocator``), about
0.2 ms on each side.
Measured on an H100 (2026-11-27, sandboxed harness, eager baseline): 1.23x, 95% CI [1.22, 1.24] (0.601 ms
against 0.734; the 128 x 128 tile measured 1.21x, CI [1.21, 1.25], an hour before;
benchmarks/results/2026-11-27-kernelbench-v0-l1-kernels-h100.md).
"""

import torch
import torch.nn as nn

from cudal1.kernelzoo.blocks.skinny_gemm_cuda import small_k_matmul


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
        return small_k_matmul(A, B)
