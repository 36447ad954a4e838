"""Released solution for built-in task `group_norm`: the zoo's two-level group norm (chunked Chan/Welford
statistics in fp32, then one normalise + affine pass)."""

import torch
import torch.nn as nn

from cudal1.kernelzoo.ops.group_norm import group_norm


class ModelNew(nn.Module):
    def __init__(self, groups: int, channels: int):
        super().__init__()
        self.norm = nn.GroupNorm(groups, channels)  # holds weight/bias under the task's names

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        n = self.norm
        return group_norm(x, n.num_groups, n.weight, n.bias, n.eps)
