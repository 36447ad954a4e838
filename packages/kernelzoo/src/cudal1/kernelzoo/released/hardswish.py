"""Released solution for built-in task `hardswish`: the zoo's Triton hardswish (one read, one write per element)."""

import torch
import torch.nn as nn

from cudal1.kernelzoo.ops.hardswish import hardswish


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return hardswish(x)
