"""Released solution for built-in task `relu`: the zoo's Triton ReLU (one read, one write per element)."""

import torch
import torch.nn as nn

from cudal1.kernelzoo import relu


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return relu(x)
