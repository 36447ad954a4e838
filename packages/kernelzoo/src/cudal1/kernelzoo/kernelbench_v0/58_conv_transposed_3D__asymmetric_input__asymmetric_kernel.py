"""KernelBench level 1, 58_conv_transposed_3D__asymmetric_input__asymmetric_kernel (x: (16, 32, 16, 32, 64) fp32;
ConvTranspose3d(32 -> 16, k=(3, 5, 7), no bias) -> (16, 16, 18, 36, 70)).

A dense stride-1 transposed convolution of 28 GFMA that cuDNN runs in fp32 far below the GPU's FMA rate. Here
one implicit GEMM (M = output voxels, N = 16 output channels, K = 105 taps x 32 input channels), 128x16 tiles,
operands staged through shared memory by cp.async, fp32 FMA (no TF32).

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
