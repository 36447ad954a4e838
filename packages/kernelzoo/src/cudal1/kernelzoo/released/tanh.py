"""Released solution for built-in task `tanh`: the zoo's Triton tanh (one read, one write per element; overflow-free exp form)."""

import torch
import torch.nn as nn

from cudal1.kernelzoo.ops.tanh import tanh


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return tanh(x)
