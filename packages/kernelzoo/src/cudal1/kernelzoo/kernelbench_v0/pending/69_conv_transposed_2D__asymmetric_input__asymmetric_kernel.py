"""KernelBench level 1, 69_conv_transposed_2D__asymmetric_input__asymmetric_kernel (x: (16, 32, 16, 32) fp32;
ConvTranspose2d(32 -> 64, k=(3, 5), stride 1, no bias) -> (16, 64, 18, 36)).

Only 0.25 GFMA and 2.7 MB of output, yet cuDNN's fp32 (no TF32) transposed convolution took 0.17 ms per call on an
H100 (wall time with its host overhead, 0.16-0.18 ms over five buckets; measured in
``benchmarks/results/2026-11-24-kb-selfrun-before-h100``): about 1.5 TFMA/s. Here one implicit GEMM (M = 18 x 36
output pixels per sample, N = all 64 output channels, K = 15 taps x 32 input channels), 64 x 64 x 16 tiles: 176
programs, about 25-35 us on the GPU, behind roughly 50 us of host time (the weight's reorder, the output's
allocation, the Triton launch). Expected: about 2x (0.07-0.09 ms); the candidate is close to host-bound, so its
timing is noisier than the large 2-D tasks. Not yet measured on a GPU.

The kernel is :func:`cudal1.kernelzoo.blocks.conv_transpose.conv_transpose` (the PyTorch function on CPU).
"""

import torch
import torch.nn as nn

from cudal1.kernelzoo.blocks.conv_transpose import conv_transpose


class ModelNew(nn.Module):
    def __init__(self, in_channels: int, out_channels: int, kernel_size: tuple, stride: tuple = (1, 1),
                 padding: tuple = (0, 0), output_padding: tuple = (0, 0), dilation: tuple = (1, 1), groups: int = 1,
                 bias: bool = False):
        super().__init__()
        self.conv_transpose2d = nn.ConvTranspose2d(in_channels, out_channels, kernel_size, stride=stride,
                                                   padding=padding, output_padding=output_padding, dilation=dilation,
                                                   groups=groups, bias=bias)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        ct = self.conv_transpose2d
        return conv_transpose(x, ct.weight, ct.bias, ct.stride, ct.padding, ct.output_padding, ct.groups, ct.dilation)
