"""KernelBench level 1, 72_conv_transposed_3D_asymmetric_input_asymmetric_kernel___strided_padded_grouped_ (x: (16,
32, 16, 32, 64) fp32; ConvTranspose3d(32 -> 64, k=(3, 5, 7), stride 2, padding (1, 2, 3), output padding 1, groups
4, no bias) -> (16, 64, 32, 64, 128)).

cuDNN's fp32 grouped, strided transposed 3-D convolution runs these 28 GFMA far below the GPU's FMA rate.
Here each of the 8 output parity classes sums only the taps that land on it (13 of 105 on average), as an implicit
GEMM per (class, sample, group) with 16 output channels per tile, fp32 FMA; the 1.07 GB output is written once.

The kernel is :func:`cudal1.kernelzoo.blocks.conv_transpose.conv_transpose` (the PyTorch function on CPU).

Measured figures: ``kernelbench_v0/measured.json`` (per GPU and baseline, checked against the results stores);
the figures this docstring once carried: benchmarks/results/2026-12-05-kernelbench-v0-docstring-figures.md.
"""

import torch
import torch.nn as nn

from cudal1.kernelzoo.blocks.conv_transpose import conv_transpose


class ModelNew(nn.Module):
    def __init__(self, in_channels: int, out_channels: int, kernel_size: tuple, stride: tuple = (1, 1, 1),
                 padding: tuple = (0, 0, 0), output_padding: tuple = (0, 0, 0), groups: int = 1, bias: bool = False):
        super().__init__()
        self.conv_transpose3d = nn.ConvTranspose3d(in_channels, out_channels, kernel_size, stride=stride,
                                                   padding=padding, output_padding=output_padding, groups=groups,
                                                   bias=bias)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        ct = self.conv_transpose3d
        return conv_transpose(x, ct.weight, ct.bias, ct.stride, ct.padding, ct.output_padding, ct.groups, ct.dilation)
