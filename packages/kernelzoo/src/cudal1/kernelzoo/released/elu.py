"""Released solution for built-in task `elu`: the zoo's Triton ELU (one read, one write per element)."""

import torch
import torch.nn as nn

from cudal1.kernelzoo.ops.elu import elu


class ModelNew(nn.Module):
    def __init__(self, alpha: float):
        super().__init__()
        self.alpha = alpha

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return elu(x, self.alpha)
