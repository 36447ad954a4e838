"""Tall-skinny matrix times a small square matrix: C = A @ B, A (M, K) with M >> K, B (K, K).

This is the shape of projecting many row vectors through one small linear map.
float32, standard-normal entries."""

import torch
import torch.nn as nn

M = 262144
K = 512


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        return torch.matmul(a, b)


def get_inputs():
    return [torch.randn(M, K), torch.randn(K, K)]


def get_init_inputs():
    return []
