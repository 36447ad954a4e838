"""Released solution for built-in task `matmul_large_k`: Matrix product with K >> M, N (torch.matmul, 1024x65536 @ 65536x1024) through the zoo's
`matmul`, whose backend is chosen per architecture family. On every family today that is cuBLAS fp32 SGEMM
(torch.matmul): the zoo's fp32 Triton GEMM measured 0.74-0.95x of cuBLAS on an H100 at the suite's sizes,
and a 3xTF32 tensor-core variant was not accurate enough on Hopper (benchmarks/results/2026-11-22-tune-matmul-conv-pool-h100.md).
Expected speedup ~1.0x."""

import torch
import torch.nn as nn

from cudal1.kernelzoo.ops.matmul import matmul


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        return matmul(a, b)
