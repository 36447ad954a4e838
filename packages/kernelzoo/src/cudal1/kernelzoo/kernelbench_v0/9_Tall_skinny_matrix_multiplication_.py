"""KernelBench level 1, 9_Tall_skinny_matrix_multiplication_ (A: (16384, 16) fp32, B: (16, 16384) fp32 -> C
(16384, 16384)).

A rank-16 product bound by writing C: 16384^2 * 4 B = 1.07 GB; its 4.3 G fp32 FMAs fit under the stores at the
GPU's FP32 rate. Eager is cuBLAS's SIMT SGEMM (fp32, TF32 off).

Here :func:`cudal1.kernelzoo.blocks.skinny_gemm_cuda.small_k_matmul`: a CUDA C kernel, one 256-thread block per
64x128 output tile, A's rows and B's columns staged in shared memory, 4x8 outputs a thread accumulated in k
order with fp32 FMAs (no tensor cores), float4 streaming stores. Off CUDA, and for shapes the kernel does not
take, ``torch.matmul``.

History: the Triton version of this file (fp32 ``tl.dot``, 64x64 tiles) was faster than eager in a probe but was
rejected ``reference_drift`` by the harness (the reference ran much slower beside it than alone). That
was the harness's doing: this task is *tight* (two workers' batches of 1 GB outputs do not fit the GPU together),
so each worker emptied its allocator cache after every step and the next batch's calls ran ``cudaMalloc`` inside
the timed region, which the reference's alone batches never did; ``cudal1.harness.allocator`` now re-reserves
that memory before a batch is timed. A 128x128 tile of this kernel was about level with the 64x128 one.

Measured figures: ``kernelbench_v0/measured.json`` (per GPU and baseline, checked against the results stores);
the figures this docstring once carried: benchmarks/results/2026-12-05-kernelbench-v0-docstring-figures.md.
"""

import torch
import torch.nn as nn

from cudal1.kernelzoo.blocks.skinny_gemm_cuda import small_k_matmul


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
        return small_k_matmul(A, B)
