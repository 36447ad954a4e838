"""KernelBench level 1, 61_conv_transposed_3D__square_input__square_kernel (x: (16, 3, 32, 32, 32) fp32;
ConvTranspose3d(3 -> 64, k=3, no bias) -> (16, 64, 34, 34, 34)).

Only 2.7 GFMA, yet cuDNN's fp32 transposed 3-D convolution with 3 input channels runs far below the GPU's FMA
rate. Here one implicit GEMM over (27 taps x 3 input channels, padded to 8 per tap) with all 64 output channels
per tile, fp32 FMA, writes the 161 MB output once.

The kernel is :func:`cudal1.kernelzoo.blocks.conv_transpose.conv_transpose` (the PyTorch function on CPU).

Measured figures: ``kernelbench_v0/measured.json`` (per GPU and baseline, checked against the results stores);
the figures this docstring once carried: benchmarks/results/2026-12-05-kernelbench-v0-docstring-figures.md.
"""

import torch
import torch.nn as nn

from cudal1.kernelzoo.blocks.conv_transpose import conv_transpose


class ModelNew(nn.Module):
    def __init__(self, in_channels: int, out_channels: int, kernel_size: int, stride: int = 1, padding: int = 0,
                 output_padding: int = 0, groups: int = 1, bias: bool = False):
        super().__init__()
        self.conv_transpose3d = nn.ConvTranspose3d(in_channels, out_channels, kernel_size=(kernel_size, kernel_size,
                                                   kernel_size), stride=stride, padding=padding,
                                                   output_padding=output_padding, groups=groups, bias=bias)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        ct = self.conv_transpose3d
        return conv_transpose(x, ct.weight, ct.bias, ct.stride, ct.padding, ct.output_padding, ct.groups, ct.dilation)
