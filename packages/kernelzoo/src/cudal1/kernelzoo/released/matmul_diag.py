"""Released solution for built-in task `matmul_diag`: torch.diag(a) @ b is a row scaling, a[:, None] * b.
The zoo's `diag_matmul` does it in one memory-bound pass over b (read once, written once) instead of
building the N x N diagonal matrix and running a 2*N^3-FLOP product: far faster than eager at N = M = 4096
(benchmarks/results/2026-11-22-tune-matmul-conv-pool-h100.md).
Equal to the reference for finite inputs (each output is the one product a[i] * b[i, j])."""

import torch
import torch.nn as nn

from cudal1.kernelzoo.ops.diag_matmul import diag_matmul


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        return diag_matmul(a, b)
