"""Released solution for built-in task `softplus`: the zoo's Triton softplus (one read, one write per element)."""

import torch
import torch.nn as nn

from cudal1.kernelzoo.ops.softplus import softplus


class ModelNew(nn.Module):
    def __init__(self, beta: float, threshold: float):
        super().__init__()
        self.beta = beta
        self.threshold = threshold

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return softplus(x, self.beta, self.threshold)
