"""Released solution for built-in task `mean_dim`: the zoo's last-dimension mean (fp32 row sums, one read of the input)."""

import torch
import torch.nn as nn

from cudal1.kernelzoo.ops.mean_dim import mean_dim


class ModelNew(nn.Module):
    def __init__(self, dim: int):
        super().__init__()
        self.dim = dim

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return mean_dim(x, self.dim)
