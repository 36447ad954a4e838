"""KernelBench level 1, 56_conv_standard_2D__asymmetric_input__asymmetric_kernel (x (16, 3, 256, 128) fp32; Conv2d(3,
64, (3, 5)) -> (16, 64, 254, 124)).

cuDNN's fp32 convolution (TF32 off) with 3 input channels runs far below the GPU's rates, and the output (64
channels) is most of the traffic. Here one Triton launch through ``fast_launch.FastLaunch``,
:func:`cudal1.kernelzoo.blocks.narrow_conv.conv2d`: each program computes 64 output channels x a run of one output
row in registers as a sum over the taps of outer products (weight column x shifted input row), fp32 FMA, and writes
each channel's run with coalesced stores. Zero padding, any stride and dilation; another padding mode runs PyTorch's
module.

Pending: not yet measured through the harness.
"""

import torch
import torch.nn as nn

from cudal1.kernelzoo.blocks.narrow_conv import conv2d


class ModelNew(nn.Module):
    def __init__(self, in_channels: int, out_channels: int, kernel_size: tuple, stride: tuple = (1, 1),
                 padding: tuple = (0, 0), dilation: tuple = (1, 1), groups: int = 1, bias: bool = False):
        super().__init__()
        self.conv2d = nn.Conv2d(in_channels, out_channels, kernel_size, stride=stride, padding=padding,
                                dilation=dilation, groups=groups, bias=bias)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        c = self.conv2d
        if c.padding_mode != "zeros":
            return c(x)
        return conv2d(x, c.weight, c.bias, c.stride, c.padding, c.dilation, c.groups)
