"""Released solution for built-in task `matvec`: y = A @ x through the zoo's `matvec` (a Triton GEMV on
sm90: BLOCK_M rows per program, wide loads along K, fp32 partial sums reduced once). Reading the 4 GiB
matrix is the whole cost and cuBLAS already does it at close to the copy bandwidth: measured level with cuBLAS
(benchmarks/results/2026-11-22-tune-matmul-conv-pool-h100.md). At parity with eager."""

import torch
import torch.nn as nn

from cudal1.kernelzoo.ops.matvec import matvec


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
        return matvec(a, x)
