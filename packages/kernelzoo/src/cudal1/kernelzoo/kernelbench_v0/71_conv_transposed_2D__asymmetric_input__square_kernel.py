"""KernelBench level 1, 71_conv_transposed_2D__asymmetric_input__square_kernel (x: (16, 32, 128, 256) fp32;
ConvTranspose2d(32 -> 64, k=3, stride 1, no bias) -> (16, 64, 130, 258)).

A dense stride-1 transposed convolution of 9.7 GFMA (137 MB out, 67 MB in: compute-bound). cuDNN's fp32 (no TF32)
transposed convolution runs it far below the GPU's FMA rate. Here one implicit GEMM (M = 130x258 output pixels per
sample, N = all 64 output channels, K = 9 taps x 32 input channels), 128x64x16 tiles, 3-stage cp.async
pipeline, fp32 FMA ``tl.dot`` (ieee: no TF32). The same kernel and tile run the 3-D level-1 task 68 (also 32 -> 64
channels, stride 1); with only 18 K steps per tile here, the pipeline's fill and drain weigh more than there.

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
        self.conv_transpose2d = nn.ConvTranspose2d(in_channels, out_channels, kernel_size, stride=stride,
                                                   padding=padding, output_padding=output_padding, groups=groups,
                                                   bias=bias)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        ct = self.conv_transpose2d
        return conv_transpose(x, ct.weight, ct.bias, ct.stride, ct.padding, ct.output_padding, ct.groups, ct.dilation)
