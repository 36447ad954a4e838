"""Released solution for built-in task `matmul_large_k`: Matrix product with K >> M, N (torch.matmul, 1024x65536 @ 65536x1024) through the zoo's
`matmul`, whose backend is chosen per architecture family. On every family today that is cuBLAS fp32 SGEMM
(torch.matmul): the zoo's fp32 Triton GEMM ran slower than cuBLAS at the suite's sizes,
and a 3xTF32 tensor-core variant was not accurate enough on Hopper (benchmarks/results/2026-11-22-tune-matmul-conv-pool-h100.md).
At parity with eager by construction."""

import torch
import torch.nn as nn

from cudal1.kernelzoo.ops.matmul import matmul


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        return matmul(a, b)
