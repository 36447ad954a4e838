"""KernelBench level 1, 79_conv_transposed_1D_asymmetric_input_square_kernel___padded____strided____dilated__
(x: (16, 32, 128) fp32; ConvTranspose1d(32 -> 64, k=3, stride 2, padding 1, dilation 2, no bias) -> (16, 64, 257)).

Only 12.6 MFMA and 1 MB of output, yet cuDNN's fp32 strided + dilated transposed convolution took 0.13-0.17 ms per
call on an H100 (wall time, measured in ``benchmarks/results/2026-11-24-kb-selfrun-before-h100``), well above the
~0.08 ms its tiny stride-1 siblings (tasks 64, 74) cost: presumably GPU time on a zero-inserted path. With stride 2,
dilation 2 and padding 1, every odd output position receives all 3 taps (input index j + 1 - k) and no tap reaches
an even one: here one Triton implicit GEMM per (residue class, sample) over (3 taps x 32 input channels) x 64
output channels, and the even positions are written as zeros without any reduction (96 programs, a few us on the
GPU). The call is then host-bound: about 50 us (the weight's reorder, the output's allocation, the Triton launch).
Expected: 2-3x; timing at this size is noisy (the reference's buckets spread 29%). Not yet measured on a GPU.

The kernel is :func:`cudal1.kernelzoo.blocks.conv_transpose.conv_transpose` (the PyTorch function on CPU).
"""

import torch
import torch.nn as nn

from cudal1.kernelzoo.blocks.conv_transpose import conv_transpose


class ModelNew(nn.Module):
    def __init__(self, in_channels: int, out_channels: int, kernel_size: int, stride: int = 1, padding: int = 0,
                 dilation: int = 1, bias: bool = False):
        super().__init__()
        self.conv1d_transpose = nn.ConvTranspose1d(in_channels, out_channels, kernel_size, stride=stride,
                                                   padding=padding, dilation=dilation, bias=bias)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        ct = self.conv1d_transpose
        return conv_transpose(x, ct.weight, ct.bias, ct.stride, ct.padding, ct.output_padding, ct.groups, ct.dilation)
