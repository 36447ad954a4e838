"""Released solution for built-in task `gelu`: the zoo's exact (erf) GELU (one read, one write per element)."""

import torch
import torch.nn as nn

from cudal1.kernelzoo.ops.gelu import gelu


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return gelu(x)
