"""KernelBench level 1, 78_conv_transposed_2D_asymmetric_input_asymmetric_kernel___padded__ (x: (16, 32, 128, 256)
fp32; ConvTranspose2d(32 -> 64, k=(3, 5), stride 1, padding (1, 2), no bias) -> (16, 64, 128, 256)).

A stride-1 transposed convolution is the forward convolution of the same input with the weight flipped and its
channel axes swapped, padded (3 - 1 - 1, 5 - 1 - 2) = (1, 2):
:func:`cudal1.kernelzoo.blocks.convt_as_conv.conv_transpose` runs it as ``conv2d`` (cuDNN's forward kernels
instead of its backward-data ones; the flipped weight is formed at every call). 16.1 GFMA, compute-bound.

``benchmarks/probes/probe_convt_forward.py`` times one call as the harness does, against eager; the earlier
versions, a Triton implicit GEMM and a direct CUDA C convolution (``blocks.conv_slide_cuda``, commit 4c27d9c,
removed), ran at eager's speed through the harness. Verified through the harness and moved from ``pending/``.

Measured figures: ``kernelbench_v0/measured.json`` (per GPU and baseline, checked against the results stores);
the figures this docstring once carried: benchmarks/results/2026-12-05-kernelbench-v0-docstring-figures.md.
"""

import torch
import torch.nn as nn

from cudal1.kernelzoo.blocks.convt_as_conv import conv_transpose


class ModelNew(nn.Module):
    def __init__(self, in_channels: int, out_channels: int, kernel_size: tuple, stride: tuple = (1, 1),
                 padding: tuple = (0, 0), bias: bool = False):
        super().__init__()
        self.conv_transpose2d = nn.ConvTranspose2d(in_channels, out_channels, kernel_size, stride=stride,
                                                   padding=padding, bias=bias)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        ct = self.conv_transpose2d
        return conv_transpose(x, ct.weight, ct.bias, ct.stride, ct.padding, ct.output_padding, ct.groups,
                              ct.dilation)
