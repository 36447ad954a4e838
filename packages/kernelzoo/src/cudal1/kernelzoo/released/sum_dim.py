"""Released solution for built-in task `sum_dim`: the zoo's strided sum over the middle dimension (tiles coalesced along the
contiguous inner dimension, one read of the input, no transpose)."""

import torch
import torch.nn as nn

from cudal1.kernelzoo.ops.sum_dim import sum_dim


class ModelNew(nn.Module):
    def __init__(self, dim: int):
        super().__init__()
        self.dim = dim

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return sum_dim(x, self.dim)
