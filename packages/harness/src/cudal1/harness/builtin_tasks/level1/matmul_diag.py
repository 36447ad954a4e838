"""Diagonal matrix times dense matrix, written as torch.diag(a) @ b.

a is a float32 vector (N,), b a float32 matrix (N, M); the result scales row i of b by a[i].
The reference materialises the (N, N) diagonal matrix and runs a full matrix product."""

import torch
import torch.nn as nn

N = 4096
M = 4096


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        return torch.diag(a) @ b


def get_inputs():
    return [torch.randn(N), torch.randn(N, M)]


def get_init_inputs():
    return []
