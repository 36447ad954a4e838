"""KernelBench level 1, 78_conv_transposed_2D_asymmetric_input_asymmetric_kernel___padded__ (x: (16, 32, 128, 256)
fp32; ConvTranspose2d(32 -> 64, k=(3, 5), stride 1, padding (1, 2), no bias) -> (16, 64, 128, 256)).

A dense stride-1 transposed convolution of 16.1 GFMA (134 MB out, 67 MB in: compute-bound). cuDNN's fp32 (no TF32)
transposed convolution ran it in 1.87 ms on an H100 (8.6 TFMA/s, measured in
``benchmarks/results/2026-11-24-kb-selfrun-before-h100``). Here one implicit GEMM (M = 128 x 256 output pixels per
sample, N = all 64 output channels, K = 15 taps x 32 input channels; the padding only shifts the input window),
128 x 64 x 16 tiles, 3-stage cp.async pipeline, fp32 FMA ``tl.dot`` (ieee: no TF32). The same kernel and tile ran
the 3-D level-1 task 68 (32 -> 64 channels, stride 1) at 16 TFMA/s; with 30 K steps per tile here, expect 12-14
TFMA/s: about 1.15-1.35 ms. Expected: 1.4-1.6x. Not yet measured on a GPU.

The kernel is :func:`cudal1.kernelzoo.blocks.conv_transpose.conv_transpose` (the PyTorch function on CPU).
"""

import torch
import torch.nn as nn

from cudal1.kernelzoo.blocks.conv_transpose import conv_transpose


class ModelNew(nn.Module):
    def __init__(self, in_channels: int, out_channels: int, kernel_size: tuple, stride: tuple = (1, 1),
                 padding: tuple = (0, 0), bias: bool = False):
        super().__init__()
        self.conv_transpose2d = nn.ConvTranspose2d(in_channels, out_channels, kernel_size, stride=stride,
                                                   padding=padding, bias=bias)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        ct = self.conv_transpose2d
        return conv_transpose(x, ct.weight, ct.bias, ct.stride, ct.padding, ct.output_padding, ct.groups, ct.dilation)
