"""KernelBench level 1, 73_conv_transposed_3D_asymmetric_input_square_kernel__strided_padded__grouped (x: (16, 32, 16,
32, 32) fp32; ConvTranspose3d(32 -> 64, k=3, stride 2, padding 3, groups 4, no bias) -> (16, 64, 27, 59, 59)).

cuDNN runs these 3.6 GFMA far below the GPU's FMA rate. Per output parity class only the taps of matching parity
(1 or 2 per dimension, 3.4 of 27 on average) are summed, as an implicit GEMM per (class, sample, group): 8 input
channels per tap x 16 output channels, fp32 FMA; the 385 MB output is written once.

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
                                                   kernel_size), stride=stride, padding=padding, groups=groups,
                                                   bias=bias)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        ct = self.conv_transpose3d
        return conv_transpose(x, ct.weight, ct.bias, ct.stride, ct.padding, ct.output_padding, ct.groups, ct.dilation)
