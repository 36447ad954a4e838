"""KernelBench level 1, 65_conv_transposed_2D__square_input__asymmetric_kernel (x: (16, 32, 128, 128) fp32;
ConvTranspose2d(32 -> 64, k=(3, 5), stride 1, no bias) -> (16, 64, 130, 132)).

A dense stride-1 transposed convolution of 8.1 GFMA (70 MB out, 34 MB in: compute-bound). cuDNN's fp32 (no TF32)
transposed convolution ran it in 0.99 ms on an H100 (8.2 TFMA/s, the best of the 2-D level-1 shapes; measured in
``benchmarks/results/2026-11-24-kb-selfrun-before-h100``). Here one implicit GEMM (M = 130 x 132 output pixels per
sample, N = all 64 output channels, K = 15 taps x 32 input channels), 128 x 64 x 16 tiles, 3-stage cp.async
pipeline, fp32 FMA ``tl.dot`` (ieee: no TF32). The same kernel and tile ran the 3-D level-1 task 68 (32 -> 64
channels, stride 1) at 16 TFMA/s; with 30 K steps per tile here, expect 12-14 TFMA/s: about 0.6-0.7 ms.
Expected: 1.4-1.6x (the smallest margin of the 2-D stride-1 tasks). Not yet measured on a GPU.

The kernel is :func:`cudal1.kernelzoo.blocks.conv_transpose.conv_transpose` (the PyTorch function on CPU).
"""

import torch
import torch.nn as nn

from cudal1.kernelzoo.blocks.conv_transpose import conv_transpose


class ModelNew(nn.Module):
    def __init__(self, in_channels: int, out_channels: int, kernel_size: tuple, stride: int = 1, padding: int = 0,
                 output_padding: int = 0, groups: int = 1, bias: bool = False):
        super().__init__()
        self.conv_transpose2d = nn.ConvTranspose2d(in_channels, out_channels, kernel_size, stride=stride,
                                                   padding=padding, output_padding=output_padding, groups=groups,
                                                   bias=bias)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        ct = self.conv_transpose2d
        return conv_transpose(x, ct.weight, ct.bias, ct.stride, ct.padding, ct.output_padding, ct.groups, ct.dilation)
