"""Released solution for built-in task `max_dim`: the zoo's strided max (values only, as torch.amax) over the middle dimension
(tiles coalesced along the contiguous inner dimension, one read of the input, no transpose)."""

import torch
import torch.nn as nn

from cudal1.kernelzoo.ops.max_dim import max_dim


class ModelNew(nn.Module):
    def __init__(self, dim: int):
        super().__init__()
        self.dim = dim

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return max_dim(x, self.dim)
