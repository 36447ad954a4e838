"""Released solution for built-in task `rms_norm`: the zoo's fused RMS norm (sum of squares and the scaled
write in one kernel, against eager's pow, mean, add, rsqrt and two multiplies)."""

import torch
import torch.nn as nn

from cudal1.kernelzoo.ops.rms_norm import rms_norm


class ModelNew(nn.Module):
    def __init__(self, dim: int, eps: float):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(dim))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return rms_norm(x, self.weight, self.eps)
