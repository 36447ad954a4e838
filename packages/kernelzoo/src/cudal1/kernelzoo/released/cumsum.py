"""Released solution for built-in task `cumsum`: the zoo's blocked prefix-sum scan (fp32 chunk scans with an fp32 carry, one read and
one write per element)."""

import torch
import torch.nn as nn

from cudal1.kernelzoo.ops.cumsum import cumsum


class ModelNew(nn.Module):
    def __init__(self, dim: int):
        super().__init__()
        self.dim = dim

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return cumsum(x, self.dim)
