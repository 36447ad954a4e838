"""KernelBench level 1, 59_conv_standard_3D__asymmetric_input__square_kernel (x: (16, 3, 256, 256, 10) fp32;
Conv3d(3 -> 64, (3, 3, 1), no bias) -> (16, 64, 254, 254, 10)).

27 fp32 products an output (27 = 3 channels x the kernel's taps): the cost is writing the 2.64 GB output. Eager
runs cuDNN's fp32 convolution (TF32 off).

Here :func:`cudal1.kernelzoo.blocks.conv_small_k_cuda.conv`: an implicit GEMM in CUDA C, one 256-thread block
per 64 output channels x 128 consecutive output positions, the weights and the 27 input values of each position
staged in shared memory, 4x8 outputs a thread accumulated with fp32 FMAs in (channel, kernel row, kernel
column) order, float4 streaming stores. On CPU, the PyTorch function.
A (3, 3, 1) kernel convolves every depth slice on its own: the kernel runs the 2-D convolution of the
(16, 3, 256, 2560) view with its column taps 10 apart, whose output is the 3-D output's memory.

History: a Triton implicit GEMM and the direct kernels of conv_cuda / conv_rows_cuda were slower than eager and
were removed.

Measured figures: ``kernelbench_v0/measured.json`` (per GPU and baseline, checked against the results stores);
the figures this docstring once carried: benchmarks/results/2026-12-05-kernelbench-v0-docstring-figures.md.
"""

import torch
import torch.nn as nn

from cudal1.kernelzoo.blocks.conv_small_k_cuda import conv


class ModelNew(nn.Module):
    def __init__(self, in_channels: int, out_channels: int, kernel_size: int, stride: int = 1, padding: int = 0, dilation: int = 1, groups: int = 1, bias: bool = False):
        super().__init__()
        self.conv3d = nn.Conv3d(in_channels, out_channels, (kernel_size, kernel_size, 1), stride=stride, padding=padding, dilation=dilation, groups=groups, bias=bias)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        c = self.conv3d
        return conv(x, c.weight, c.bias, c.stride, c.padding, c.dilation, c.groups)
