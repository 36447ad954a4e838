"""KernelBench level 1, 71_conv_transposed_2D__asymmetric_input__square_kernel (x: (16, 32, 128, 256) fp32;
ConvTranspose2d(32 -> 64, k=3, stride 1, no bias) -> (16, 64, 130, 258)). A second version of the set's file, which
runs the Triton implicit GEMM of :mod:`cudal1.kernelzoo.blocks.conv_transpose`.

A stride-1 transposed convolution is the forward convolution of the same input with the weight flipped and its
channel axes swapped, padded (2, 2): :func:`cudal1.kernelzoo.blocks.convt_as_conv.conv_transpose` runs it as
``conv2d`` (cuDNN's forward kernels instead of its backward-data ones; the flipped weight is formed at every call),
as the set's 57 / 69 / 78 do.

A probe (one call timed as the harness times it, ``benchmarks/probes/probe_convt_forward.py``) timed it faster
than both eager (cuDNN's transposed convolution varies from one process to the next) and the set's Triton kernel.
It replaces the set's file only if a second verified run through the harness on the release's GPU measures it
faster there. Through the harness on a GPU other than the release's, two verified runs measured it faster than the
set's Triton file.

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
