"""Released solution for built-in task `softmax`: the zoo's last-dimension softmax."""

import torch
import torch.nn as nn

from cudal1.kernelzoo.ops.softmax import softmax


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return softmax(x)
