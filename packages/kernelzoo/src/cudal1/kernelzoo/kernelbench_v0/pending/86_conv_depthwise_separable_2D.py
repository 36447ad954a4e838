"""KernelBench level 1, 86_conv_depthwise_separable_2D (x (16, 3, 256, 256) fp32; depthwise Conv2d(3, 3, 3, groups=3)
then pointwise Conv2d(3, 64, 1) -> (16, 64, 254, 254)).

Eager runs two convolutions (a depthwise one writing a 12 MB intermediate, then cuDNN's fp32 1x1 convolution of 3
input channels). The pair is one linear map: :func:`cudal1.kernelzoo.blocks.conv_vec_cuda.separable_conv` runs it as
one 3x3 convolution of 3 -> 64 channels whose tap weights ``pointwise[o, c] * depthwise[c, kh, kw]`` the kernel
forms from the current parameters at every call (bias ``pointwise @ depthwise_bias + pointwise_bias``), fp32 FMA, no
intermediate written, with :data:`~cudal1.kernelzoo.blocks.conv_vec_cuda.STAGED_TILE` (each lane 8 output channels x 8
columns; the input rows of the next row group copied into shared memory while the current one is computed and
stored). Another padding mode, or modules changed away from the task's depthwise form, run the two modules.

History: the same kernel with the default tile was at parity with eager and was removed. Four calls of
``benchmarks/probes/probe_conv_vec.py`` (one call timed as the harness times it; the probe, not the harness) timed
the staged tile faster than the default tile and than eager; through the harness, on a GPU other than the
release's, two verified runs beat eager. It moves to the set only if a second verified run on the release's GPU
improves on eager.

Measured figures: ``kernelbench_v0/measured.json`` (per GPU and baseline, checked against the results stores);
the figures this docstring once carried: benchmarks/results/2026-12-05-kernelbench-v0-docstring-figures.md.
"""

import torch
import torch.nn as nn

from cudal1.kernelzoo.blocks.conv_vec_cuda import STAGED_TILE, separable_conv


class ModelNew(nn.Module):
    def __init__(self, in_channels: int, out_channels: int, kernel_size: int, stride: int = 1, padding: int = 0,
                 dilation: int = 1, bias: bool = False):
        super().__init__()
        self.depthwise = nn.Conv2d(in_channels, in_channels, kernel_size, stride=stride, padding=padding,
                                   dilation=dilation, groups=in_channels, bias=bias)
        self.pointwise = nn.Conv2d(in_channels, out_channels, kernel_size=1, bias=bias)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        d, p = self.depthwise, self.pointwise
        if (d.padding_mode != "zeros" or d.groups != d.in_channels or d.out_channels != d.in_channels
                or p.kernel_size != (1, 1) or p.stride != (1, 1) or p.padding != (0, 0) or p.groups != 1):
            return p(d(x))
        return separable_conv(x, d.weight, d.bias, p.weight, p.bias, d.stride, d.padding, d.dilation, STAGED_TILE)
