"""Matrix product with a long reduction dimension: C = A @ B, A (M, K), B (K, N), K >> M, N.

float32, standard-normal entries."""

import torch
import torch.nn as nn

M = 1024
K = 65536
N = 1024


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        return torch.matmul(a, b)


def get_inputs():
    return [torch.randn(M, K), torch.randn(K, N)]


def get_init_inputs():
    return []
