"""Released solution for built-in task `leaky_relu`: the zoo's Triton leaky ReLU (one read, one write per element)."""

import torch
import torch.nn as nn

from cudal1.kernelzoo.ops.leaky_relu import leaky_relu


class ModelNew(nn.Module):
    def __init__(self, negative_slope: float):
        super().__init__()
        self.negative_slope = negative_slope

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return leaky_relu(x, self.negative_slope)
