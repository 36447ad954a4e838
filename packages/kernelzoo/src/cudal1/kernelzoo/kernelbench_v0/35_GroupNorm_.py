"""KernelBench level 1, 35_GroupNorm_ (x: (16, 64, 256, 256) fp32, nn.GroupNorm(8 groups, 64 channels), affine
weight/bias (64,)): the zoo's group norm. Each group is 8 contiguous channel planes (2 MiB); a statistics kernel
splits every group over 16 programs (2048 in all, Chan-merged mean/M2 partials, no E[x^2] - E[x]^2 cancellation)
and an apply kernel writes ``(x - mean) * (weight * rstd) + bias`` over an (N * C, spatial tiles) grid. Same
three passes over x as eager (stats read, apply read + write), but eager's row-moments kernel keeps fewer loads in
flight (268 MiB, fully memory-bound).

Measured figures: ``kernelbench_v0/measured.json`` (per GPU and baseline, checked against the results stores);
the figures this docstring once carried: benchmarks/results/2026-12-05-kernelbench-v0-docstring-figures.md.
"""

import torch
import torch.nn as nn

from cudal1.kernelzoo.ops.group_norm import group_norm


class ModelNew(nn.Module):
    def __init__(self, num_features: int, num_groups: int):
        super().__init__()
        self.gn = nn.GroupNorm(num_groups=num_groups, num_channels=num_features)  # holds weight/bias, eps

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        gn = self.gn
        return group_norm(x, gn.num_groups, gn.weight, gn.bias, gn.eps)
