"""Released solution for built-in task `l2_normalize`: the zoo's row L2 normalisation (each row held in registers: one read, one write, against eager's
norm + clamp + divide passes)."""

import torch
import torch.nn as nn

from cudal1.kernelzoo.ops.l2_normalize import l2_normalize


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return l2_normalize(x)
