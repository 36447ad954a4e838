"""Residual add then LayerNorm: LN(x + residual), as between transformer sub-layers.

x and residual are float32 (BATCH, SEQ, DIM), standard-normal."""

import torch
import torch.nn as nn

BATCH = 16
SEQ = 4096
DIM = 4096


class Model(nn.Module):
    def __init__(self, dim: int):
        super().__init__()
        self.norm = nn.LayerNorm(dim)

    def forward(self, x: torch.Tensor, residual: torch.Tensor) -> torch.Tensor:
        return self.norm(x + residual)


def get_inputs():
    return [torch.randn(BATCH, SEQ, DIM), torch.randn(BATCH, SEQ, DIM)]


def get_init_inputs():
    return [DIM]
