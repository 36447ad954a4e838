"""Matrix-vector product y = A @ x with A (M, K) and x (K, 1).

Memory-bound: the whole cost is reading A once. float32, standard-normal entries."""

import torch
import torch.nn as nn

M = 32768
K = 32768


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
        return torch.matmul(a, x)


def get_inputs():
    return [torch.randn(M, K), torch.randn(K, 1)]


def get_init_inputs():
    return []
