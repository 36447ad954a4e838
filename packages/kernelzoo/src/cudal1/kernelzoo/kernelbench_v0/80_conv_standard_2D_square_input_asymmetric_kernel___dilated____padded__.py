"""KernelBench level 1, 80_conv_standard_2D_square_input_asymmetric_kernel___dilated____padded__ (batch_size = 16 in_channels = 3 out_channels = 64 kernel_size = (3, 5) # Asymmetric kernel width = 256 height = 256 stride = 1 padding = (1, 2) # Asymmetric padding dilation = (2, 1) # Asymmetric dilation).

cuDNN's fp32 convolution (TF32 off) with 3 input channels runs far below the GPU's fp32 FMA rate. Here a
register-tiled direct convolution in CUDA C (each thread 8 output channels x a chunk of consecutive positions; a
block stages the input rows its outputs read in shared memory with coalesced loads, weights beside them), fp32
FMA, launched through the driver: :func:`cudal1.kernelzoo.blocks.conv_rows_cuda.conv` (the PyTorch function on
CPU). The 2026-11-26 version (:mod:`~cudal1.kernelzoo.blocks.conv_cuda`, windows read from global memory, CuPy's
launch path) measured 0.56-0.94x on these shapes.
Measured on an H100 (2026-11-27, sandboxed harness, eager baseline): 1.08x, 95% CI [1.06, 1.09] (0.310 ms against
0.339; benchmarks/results/2026-11-27-kernelbench-v0-compile-h100.md). Its ~1 TB/s of output writes is a third of the
GPU's rate: 116-124 registers a thread leave two blocks a multiprocessor (not profiled).
"""

import torch
import torch.nn as nn

from cudal1.kernelzoo.blocks.conv_rows_cuda import conv


class ModelNew(nn.Module):
    def __init__(self, in_channels: int, out_channels: int, kernel_size: tuple, stride: int = 1, padding: tuple = (0, 0), dilation: tuple = (1, 1), bias: bool = False):
        super().__init__()
        self.conv2d = nn.Conv2d(in_channels, out_channels, kernel_size, stride=stride, padding=padding, dilation=dilation, bias=bias)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        c = self.conv2d
        return conv(x, c.weight, c.bias, c.stride, c.padding, c.dilation, c.groups)
