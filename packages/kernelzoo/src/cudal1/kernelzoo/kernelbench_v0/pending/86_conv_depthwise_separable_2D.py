"""KernelBench level 1, 86_conv_depthwise_separable_2D (x (16, 3, 256, 256) fp32; depthwise Conv2d(3, 3, 3, groups=3)
then pointwise Conv2d(3, 64, 1) -> (16, 64, 254, 254)).

Eager runs two convolutions (a depthwise one writing a 12 MB intermediate, then cuDNN's fp32 1 x 1 convolution of 3
input channels, far below the GPU's rates). Here one Triton launch through ``fast_launch.FastLaunch``,
:func:`cudal1.kernelzoo.blocks.narrow_conv.separable_conv2d`: each program computes 64 output channels x a run of one
output row in registers as a sum over the taps of outer products (weight column x shifted input row), fp32 FMA, and
writes each channel's run with coalesced stores. The pair is one linear map: each tap's weight is ``pointwise[o, c] *
depthwise[c, kh, kw]``, formed in the kernel from the current parameters at every call (exact for every input and
weight; only the rounding order differs), and no intermediate is written. Another padding mode runs the two modules.

Pending: not yet measured through the harness.
"""

import torch
import torch.nn as nn

from cudal1.kernelzoo.blocks.narrow_conv import separable_conv2d


class ModelNew(nn.Module):
    def __init__(self, in_channels: int, out_channels: int, kernel_size: int, stride: int = 1, padding: int = 0,
                 dilation: int = 1, bias: bool = False):
        super().__init__()
        self.depthwise = nn.Conv2d(in_channels, in_channels, kernel_size, stride=stride, padding=padding,
                                   dilation=dilation, groups=in_channels, bias=bias)
        self.pointwise = nn.Conv2d(in_channels, out_channels, kernel_size=1, bias=bias)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        d, p = self.depthwise, self.pointwise
        if d.padding_mode != "zeros" or d.groups != d.in_channels or d.out_channels != d.in_channels:
            return p(d(x))
        return separable_conv2d(x, d.weight, d.bias, p.weight, p.bias, d.stride, d.padding, d.dilation)
