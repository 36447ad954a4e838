"""Mean over the last dimension of a float32 (BATCH, ROWS, DIM) tensor.

Output is (BATCH, ROWS). Inputs are standard-normal shifted by 1."""

import torch
import torch.nn as nn

BATCH = 128
ROWS = 4096
DIM = 2048
REDUCE_DIM = -1


class Model(nn.Module):
    def __init__(self, dim: int):
        super().__init__()
        self.dim = dim

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.mean(x, dim=self.dim)


def get_inputs():
    return [torch.randn(BATCH, ROWS, DIM) + 1.0]


def get_init_inputs():
    return [REDUCE_DIM]
