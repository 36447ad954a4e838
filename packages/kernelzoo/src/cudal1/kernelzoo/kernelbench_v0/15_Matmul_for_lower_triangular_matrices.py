"""KernelBench level 1, 15_Matmul_for_lower_triangular_matrices (A, B: (4096, 4096) fp32,
``torch.tril(torch.matmul(A, B))``).

The forward itself zeroes the other triangle of the product, so only the lower triangle is computed: the zoo's
``triangular_matmul`` (cuBLAS fp32 blocks written in place, 53% of the product's FLOPs at N = 4096; nothing
assumed about A and B). Measured through the harness on an H100 (2026-11-25, eager baseline, with the same
blocks written inline in this file): 1.55x (benchmarks/results/2026-11-25-kernelbench-v0-level1-h100.md).

Measured on an H100 (2026-11-25, sandboxed harness, eager baseline): 1.56x, 95% CI [1.55, 1.59] (benchmarks/results/2026-11-25-kernelbench-v0-release-h100.md).
"""

import torch
import torch.nn as nn

from cudal1.kernelzoo.triangular import triangular_matmul


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
        return triangular_matmul(A, B, upper=False)
