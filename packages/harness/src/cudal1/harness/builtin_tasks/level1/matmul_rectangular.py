"""Rectangular matrix product C = A @ B with A (M, K) and B (K, N), M != K != N.

All tensors float32, standard-normal entries."""

import torch
import torch.nn as nn

M = 6144
K = 2560
N = 4096


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        return torch.matmul(a, b)


def get_inputs():
    return [torch.randn(M, K), torch.randn(K, N)]


def get_init_inputs():
    return []
