"""Batched matrix product C[i] = A[i] @ B[i] (torch.bmm).

A is (BATCH, M, K), B is (BATCH, K, N); float32, standard-normal entries."""

import torch
import torch.nn as nn

BATCH = 32
M = 1024
K = 1536
N = 1024


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        return torch.bmm(a, b)


def get_inputs():
    return [torch.randn(BATCH, M, K), torch.randn(BATCH, K, N)]


def get_init_inputs():
    return []
