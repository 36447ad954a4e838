"""KernelBench level 1, 71_conv_transposed_2D__asymmetric_input__square_kernel (x: (16, 32, 128, 256) fp32;
ConvTranspose2d(32 -> 64, k=3, stride 1, no bias) -> (16, 64, 130, 258)). A second version of the set's file, which
runs the Triton implicit GEMM of :mod:`cudal1.kernelzoo.blocks.conv_transpose` (1.65x [1.61, 1.79] on an H100,
2026-11-27).

A stride-1 transposed convolution is the forward convolution of the same input with the weight flipped and its
channel axes swapped, padded (2, 2): :func:`cudal1.kernelzoo.blocks.convt_as_conv.conv_transpose` runs it as
``conv2d`` (cuDNN's forward kernels instead of its backward-data ones; the flipped weight is formed at every call),
as the set's 57 / 69 / 78 do.

Probe (H100, 2026-11-28, one call timed as the harness times it, ``benchmarks/scripts/probe_convt_forward.py``,
benchmarks/results/2026-11-28-kernelbench-v0-sixteenth-pass-h100.md): 0.57 ms against eager's 0.88-1.52 (cuDNN's
transposed convolution varies from one process to the next) and the set's Triton kernel's 0.64-0.67. It replaces the
set's file only if a second verified run through the harness on an H100 measures it faster there. Through the harness
on an H200 (eager baseline, not the release's GPU;
benchmarks/results/2026-11-28-kernelbench-v0-seventeenth-pass-h200.md): 2.13x [2.07, 2.23] (timing_unstable) and
1.85x [1.81, 1.88], verified, 0.64-0.70 ms a call against the set's Triton file's 0.72 ms (1.63x [1.61, 1.66])
between them.
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
