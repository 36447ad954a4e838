"""Released solution for built-in task `argmax_dim`: the zoo's last-dimension argmax (int64, first index of the maximum, one
read of the input)."""

import torch
import torch.nn as nn

from cudal1.kernelzoo.ops.argmax_dim import argmax_dim


class ModelNew(nn.Module):
    def __init__(self, dim: int):
        super().__init__()
        self.dim = dim

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return argmax_dim(x, self.dim)
