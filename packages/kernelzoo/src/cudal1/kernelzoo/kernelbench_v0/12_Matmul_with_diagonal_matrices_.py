"""KernelBench level 1, 12_Matmul_with_diagonal_matrices_ (A: (4096,) fp32, B: (4096, 4096) fp32,
``torch.diag(A) @ B``).

``diag(A) @ B == A[:, None] * B`` for every input (row i of B scaled by A[i]; the reference only adds exact
zeros to each product), so this runs the zoo's ``diag_matmul``: one Triton pass that reads B once and writes
the output once (128 MiB of traffic, memory-bound), where eager builds the (N, N) diagonal matrix (a fill and
a 64 MiB write) and runs a 2*N^3 = 137 GFLOP fp32 GEMM (2.8 ms on an H100 in the 2026-11-24 self-run). The
zoo measured this kernel at 0.08 ms for the same shape (34x the reference,
benchmarks/results/2026-11-22-tune-matmul-conv-pool-h100.md). Measured through the harness on an H100 (2026-11-25, eager baseline): 24.27x (benchmarks/results/2026-11-25-kernelbench-v0-level1-h100.md).

Measured on an H100 (2026-11-25, sandboxed harness, eager baseline): 23.52x, 95% CI [23.11, 24.62] (benchmarks/results/2026-11-25-kernelbench-v0-release-h100.md).
"""

import torch
import torch.nn as nn

from cudal1.kernelzoo.ops.diag_matmul import diag_matmul


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
        return diag_matmul(A, B)
