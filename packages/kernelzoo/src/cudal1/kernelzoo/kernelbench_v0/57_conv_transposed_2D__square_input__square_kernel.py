"""KernelBench level 1, 57_conv_transposed_2D__square_input__square_kernel (x: (16, 32, 128, 128) fp32;
ConvTranspose2d(32 -> 64, k=3, stride 1, no bias) -> (16, 64, 130, 130)).

A dense stride-1 transposed convolution of 4.8 GFMA (69 MB out, 34 MB in: compute-bound). cuDNN's fp32 (no TF32)
transposed convolution ran it in 0.99 ms on an H100 (4.9 TFMA/s, measured in
``benchmarks/results/2026-11-24-kb-selfrun-before-h100``). Here one implicit GEMM (M = 130 x 130 output pixels per
sample, N = all 64 output channels, K = 9 taps x 32 input channels), 128 x 64 x 16 tiles, 3-stage cp.async
pipeline, fp32 FMA ``tl.dot`` (ieee: no TF32). The same kernel and tile ran the 3-D level-1 task 68 (also 32 -> 64
channels, stride 1) at 16 TFMA/s; with only 18 K steps per tile here, expect 10-13 TFMA/s: about 0.4-0.5 ms.
Expected: 2-2.5x.

The kernel is :func:`cudal1.kernelzoo.blocks.conv_transpose.conv_transpose` (the PyTorch function on CPU).

Measured on an H100 (2026-11-26, sandboxed harness, eager baseline): 1.43x, 95% CI [1.30, 1.65] (benchmarks/results/2026-11-26-kernelbench-v0-release-h100.md).
"""

import torch
import torch.nn as nn

from cudal1.kernelzoo.blocks.conv_transpose import conv_transpose


class ModelNew(nn.Module):
    def __init__(self, in_channels: int, out_channels: int, kernel_size: int, stride: int = 1, padding: int = 0,
                 output_padding: int = 0, groups: int = 1, bias: bool = False):
        super().__init__()
        self.conv_transpose2d = nn.ConvTranspose2d(in_channels, out_channels, kernel_size, stride=stride,
                                                   padding=padding, output_padding=output_padding, groups=groups,
                                                   bias=bias)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        ct = self.conv_transpose2d
        return conv_transpose(x, ct.weight, ct.bias, ct.stride, ct.padding, ct.output_padding, ct.groups, ct.dilation)
