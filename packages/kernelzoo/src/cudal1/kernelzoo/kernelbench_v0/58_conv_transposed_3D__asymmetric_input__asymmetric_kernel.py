"""KernelBench level 1, 58_conv_transposed_3D__asymmetric_input__asymmetric_kernel (x: (16, 32, 16, 32, 64) fp32;
ConvTranspose3d(32 -> 16, k=(3, 5, 7), no bias) -> (16, 16, 18, 36, 70)).

A dense stride-1 transposed convolution of 28 GFMA that cuDNN runs in fp32 in 9.4 ms on an H100 (6 TFLOP/s). Here
one implicit GEMM (M = output voxels, N = 16 output channels, K = 105 taps x 32 input channels), 128 x 16 tiles,
operands staged through shared memory by cp.async, fp32 FMA (no TF32). Expected: 1.5-2.5x.

The kernel is :func:`cudal1.kernelzoo.blocks.conv_transpose.conv_transpose` (the PyTorch function on CPU).

Measured on an H100 (2026-11-25, sandboxed harness, eager baseline): 3.02x, 95% CI [3.00, 3.07] (benchmarks/results/2026-11-25-kernelbench-v0-release-h100.md).
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
