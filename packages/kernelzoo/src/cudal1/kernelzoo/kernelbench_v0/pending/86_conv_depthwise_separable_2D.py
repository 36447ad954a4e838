"""KernelBench level 1, 86_conv_depthwise_separable_2D (x: (16, 3, 256, 256) fp32; depthwise 3x3 conv (groups 3)
then a 1x1 conv 3 -> 64, no bias -> (16, 64, 254, 254)).

A depthwise convolution followed by a pointwise one is one convolution with weight ``pw[co, ci] * dw[ci, tap]``
(and bias ``pw @ dw_bias + pw_bias``): linear maps compose, for every input and every parameter value. Eager runs
two cuDNN calls and writes the 3-channel intermediate; here one register-tiled direct convolution in CUDA C (the
weight product formed while staging the weights, fp32 FMA) writes only the 263 MB output:
:func:`cudal1.kernelzoo.blocks.conv_cuda.separable_conv` (the two PyTorch convolutions on CPU).
Reference 0.213 ms on an H100 (harness, eager). Expected: faster than eager (not measured yet).
"""

import torch
import torch.nn as nn

from cudal1.kernelzoo.blocks.conv_cuda import separable_conv


class ModelNew(nn.Module):
    def __init__(self, in_channels: int, out_channels: int, kernel_size: int, stride: int = 1, padding: int = 0,
                 dilation: int = 1, bias: bool = False):
        super().__init__()
        self.depthwise = nn.Conv2d(in_channels, in_channels, kernel_size, stride=stride, padding=padding,
                                   dilation=dilation, groups=in_channels, bias=bias)
        self.pointwise = nn.Conv2d(in_channels, out_channels, kernel_size=1, bias=bias)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        d, p = self.depthwise, self.pointwise
        return separable_conv(x, d.weight, d.bias, p.weight, p.bias, d.stride, d.padding, d.dilation)
