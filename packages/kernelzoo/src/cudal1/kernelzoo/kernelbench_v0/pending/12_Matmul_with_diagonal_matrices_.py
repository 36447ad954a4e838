"""KernelBench level 1, 12_Matmul_with_diagonal_matrices_ (A: (4096,) fp32, B: (4096, 4096) fp32,
``torch.diag(A) @ B``). Second version of the set's file.

``diag(A) @ B == A[:, None] * B`` for every input (row i of B scaled by A[i]; the reference only adds exact zeros to
each product), computed here by ATen's broadcast multiply instead of the zoo's Triton ``diag_matmul``: the same one
pass (B read once, the output written once, 128 MiB of traffic) where eager builds the (N, N) diagonal matrix and
runs a 2*N^3 GEMM. Both are memory-bound single passes, so which is faster is a matter of each kernel's launch
configuration on the GPU at hand: CUDA-L1's file for this task, whose own CUDA kernel never builds, runs exactly this
multiply and read faster than the set's file on the newer Hopper card
(benchmarks/results/2026-12-05-cuda-l1-faster-tasks-cpu.md). Measured beside the set's file, the faster one stays.
A non-finite B[k, j] stays in row k here, as in the set's file (the reference's 0 * inf = NaN spreads through
column j).

Measured figures: ``kernelbench_v0/measured.json`` (per GPU and baseline, checked against the results stores);
the figures this docstring once carried: benchmarks/results/2026-12-05-kernelbench-v0-docstring-figures.md.
"""

import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
        return B * A.unsqueeze(1)
