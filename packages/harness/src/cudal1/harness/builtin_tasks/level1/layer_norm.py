"""Layer normalisation over the last dimension, with learnable weight and bias (nn.LayerNorm).

x is float32 (BATCH, SEQ, DIM), standard-normal shifted by 0.5."""

import torch
import torch.nn as nn

BATCH = 32
SEQ = 2048
DIM = 8192


class Model(nn.Module):
    def __init__(self, dim: int):
        super().__init__()
        self.norm = nn.LayerNorm(dim)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.norm(x)


def get_inputs():
    return [torch.randn(BATCH, SEQ, DIM) + 0.5]


def get_init_inputs():
    return [DIM]
