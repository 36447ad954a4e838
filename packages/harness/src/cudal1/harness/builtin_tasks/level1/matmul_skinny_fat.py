"""Skinny matrix times fat matrix: C = A @ B with A (M, K), B (K, N) and K << M, N.

The product is a large rank-K matrix (low-rank reconstruction); the output write dominates
memory traffic. float32, standard-normal entries."""

import torch
import torch.nn as nn

M = 16384
K = 128
N = 16384


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        return torch.matmul(a, b)


def get_inputs():
    return [torch.randn(M, K), torch.randn(K, N)]


def get_init_inputs():
    return []
