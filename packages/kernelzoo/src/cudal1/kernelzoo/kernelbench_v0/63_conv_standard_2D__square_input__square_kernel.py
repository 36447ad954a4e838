"""KernelBench level 1, 63_conv_standard_2D__square_input__square_kernel (batch_size = 16 in_channels = 3 out_channels = 64 kernel_size = 3 width = 256 height = 256).

cuDNN's fp32 convolution (TF32 off) with 3 input channels runs far below the GPU's fp32 FMA rate. Here a
register-tiled direct convolution in CUDA C (each thread 8 output channels x a chunk of consecutive positions; a
block stages the input rows its outputs read in shared memory with coalesced loads, weights beside them), fp32
FMA, launched through the driver: :func:`cudal1.kernelzoo.blocks.conv_rows_cuda.conv` (the PyTorch function on
CPU). The 2026-11-26 version (:mod:`~cudal1.kernelzoo.blocks.conv_cuda`, windows read from global memory, CuPy's
launch path) measured 0.56-0.94x on these shapes.
Measured on an H100 (2026-11-27, sandboxed harness, eager baseline): 1.04x, 95% CI [1.03, 1.07] (0.270 ms against
0.282; benchmarks/results/2026-11-27-kernelbench-v0-compile-h100.md). Its ~1 TB/s of output writes is a third of the
GPU's rate: 116-124 registers a thread leave two blocks a multiprocessor (not profiled).
"""

import torch
import torch.nn as nn

from cudal1.kernelzoo.blocks.conv_rows_cuda import conv


class ModelNew(nn.Module):
    def __init__(self, in_channels: int, out_channels: int, kernel_size: int, stride: int = 1, padding: int = 0, dilation: int = 1, groups: int = 1, bias: bool = False):
        super().__init__()
        self.conv2d = nn.Conv2d(in_channels, out_channels, (kernel_size, kernel_size), stride=stride, padding=padding, dilation=dilation, groups=groups, bias=bias)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        c = self.conv2d
        return conv(x, c.weight, c.bias, c.stride, c.padding, c.dilation, c.groups)
