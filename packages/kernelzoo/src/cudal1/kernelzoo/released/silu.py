"""Released solution for built-in task `silu`: the zoo's SiLU (one read, one write per element)."""

import torch
import torch.nn as nn

from cudal1.kernelzoo.ops.silu import silu


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return silu(x)
