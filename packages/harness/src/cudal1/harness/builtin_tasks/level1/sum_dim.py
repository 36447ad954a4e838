"""Sum over the middle dimension of a float32 (BATCH, REDUCE, INNER) tensor.

Output is (BATCH, INNER). Inputs are standard-normal."""

import torch
import torch.nn as nn

BATCH = 256
REDUCE = 4096
INNER = 1024
DIM = 1


class Model(nn.Module):
    def __init__(self, dim: int):
        super().__init__()
        self.dim = dim

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.sum(x, dim=self.dim)


def get_inputs():
    return [torch.randn(BATCH, REDUCE, INNER)]


def get_init_inputs():
    return [DIM]
