"""KernelBench level 1, 55_conv_standard_2D__asymmetric_input__square_kernel (batch_size = 16 in_channels = 3 out_channels = 64 kernel_size = 3 width = 256 height = 128).

A second version of the set's file: the same kernel (:func:`cudal1.kernelzoo.blocks.conv_vec_cuda.conv`) with
:data:`~cudal1.kernelzoo.blocks.conv_vec_cuda.STAGED_TILE` (each lane 8 output channels x 8 columns; the input rows of
the next row group copied into shared memory while the current one is computed and stored) instead of the default tile.

Four calls of ``benchmarks/probes/probe_conv_vec.py`` (one call timed as the harness times it; the probe, not the
harness) timed it faster than the committed tile in three calls and slower in one; through the harness, on a GPU
other than the release's, it was faster than the set's file in two verified runs. It replaces the set's file only if
a second verified run on the release's GPU measures it faster than the set's file.

Measured figures: ``kernelbench_v0/measured.json`` (per GPU and baseline, checked against the results stores);
the figures this docstring once carried: benchmarks/results/2026-12-05-kernelbench-v0-docstring-figures.md.
"""

import torch
import torch.nn as nn

from cudal1.kernelzoo.blocks.conv_vec_cuda import STAGED_TILE, conv


class ModelNew(nn.Module):
    def __init__(self, in_channels: int, out_channels: int, kernel_size: int, stride: int = 1, padding: int = 0,
                 dilation: int = 1, groups: int = 1, bias: bool = False):
        super().__init__()
        self.conv2d = nn.Conv2d(in_channels, out_channels, (kernel_size, kernel_size), stride=stride, padding=padding,
                                dilation=dilation, groups=groups, bias=bias)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        c = self.conv2d
        if c.padding_mode != "zeros":
            return c(x)
        return conv(x, c.weight, c.bias, c.stride, c.padding, c.dilation, c.groups, STAGED_TILE)
