"""KernelBench level 1, 57_conv_transposed_2D__square_input__square_kernel (x: (16, 32, 128, 128) fp32;
ConvTranspose2d(32 -> 64, k=3, stride 1, no bias) -> (16, 64, 130, 130)). Earlier
a Triton implicit GEMM (:mod:`cudal1.kernelzoo.blocks.conv_transpose`); this version was faster through the
harness and replaced that file.

A stride-1 transposed convolution is the forward convolution of the same input with the weight flipped and its
channel axes swapped, padded (2, 2): :func:`cudal1.kernelzoo.blocks.convt_as_conv.conv_transpose` runs it as
``conv2d`` (cuDNN's forward kernels instead of its backward-data ones; the flipped weight is formed at every call).
``benchmarks/probes/probe_convt_forward.py`` times one call as the harness does, against eager and the set's
Triton kernel.

Measured figures: ``kernelbench_v0/measured.json`` (per GPU and baseline, checked against the results stores);
the figures this docstring once carried: benchmarks/results/2026-12-05-kernelbench-v0-docstring-figures.md.
"""

import torch
import torch.nn as nn

from cudal1.kernelzoo.blocks.convt_as_conv import conv_transpose


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
