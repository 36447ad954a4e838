"""KernelBench level 1,
75_conv_transposed_2D_asymmetric_input_asymmetric_kernel_strided__grouped____padded____dilated__ (x: (16, 32, 128,
256) fp32; ConvTranspose2d(32 -> 64, k=(3, 5), stride (2, 3), padding (1, 2), dilation (2, 1), groups 4, no bias)
-> (16, 64, 257, 766)).

cuDNN runs these 4 GFMA far below the GPU's FMA rate. With stride 2 and dilation 2 along H, only odd output rows
receive taps (all 3); the even rows are zero and are written without any reduction; along W each of the 3 residue
classes gets 1-2 of the 5 taps. Per (class, sample, group) one implicit GEMM over (valid tap, 8 input channels) x
16 output channels, fp32 FMA; the 807 MB output is written once.

The kernel is :func:`cudal1.kernelzoo.blocks.conv_transpose.conv_transpose` (the PyTorch function on CPU).

Measured figures: ``kernelbench_v0/measured.json`` (per GPU and baseline, checked against the results stores);
the figures this docstring once carried: benchmarks/results/2026-12-05-kernelbench-v0-docstring-figures.md.
"""

import torch
import torch.nn as nn

from cudal1.kernelzoo.blocks.conv_transpose import conv_transpose


class ModelNew(nn.Module):
    def __init__(self, in_channels: int, out_channels: int, kernel_size: tuple, stride: tuple = (1, 1),
                 padding: tuple = (0, 0), dilation: tuple = (1, 1), groups: int = 1, bias: bool = False):
        super().__init__()
        self.conv_transpose2d = nn.ConvTranspose2d(in_channels, out_channels, kernel_size, stride=stride,
                                                   padding=padding, dilation=dilation, groups=groups, bias=bias)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        ct = self.conv_transpose2d
        return conv_transpose(x, ct.weight, ct.bias, ct.stride, ct.padding, ct.output_padding, ct.groups, ct.dilation)
