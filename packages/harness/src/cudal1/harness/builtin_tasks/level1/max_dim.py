"""Maximum over the middle dimension of a float32 (BATCH, REDUCE, INNER) tensor (values only).

Output is (BATCH, INNER). Inputs are standard-normal."""

import torch
import torch.nn as nn

BATCH = 64
REDUCE = 8192
INNER = 2048
DIM = 1


class Model(nn.Module):
    def __init__(self, dim: int):
        super().__init__()
        self.dim = dim

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.amax(x, dim=self.dim)


def get_inputs():
    return [torch.randn(BATCH, REDUCE, INNER)]


def get_init_inputs():
    return [DIM]
