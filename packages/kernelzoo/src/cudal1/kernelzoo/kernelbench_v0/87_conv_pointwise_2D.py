"""KernelBench level 1, 87_conv_pointwise_2D (batch_size = 16 in_channels = 3 out_channels = 64 width = 256 height = 256).

cuDNN's fp32 convolution (TF32 off) with 3 input channels runs far below the GPU's fp32 FMA rate. Here a
register-tiled direct convolution in CUDA C (each thread 8 output channels x a chunk of consecutive positions; a
block stages the input rows its outputs read in shared memory with coalesced loads, weights beside them), fp32
FMA, launched through the driver: :func:`cudal1.kernelzoo.blocks.conv_rows_cuda.conv` (the PyTorch function on
CPU). The 2026-11-26 version (:mod:`~cudal1.kernelzoo.blocks.conv_cuda`, windows read from global memory, CuPy's
launch path) measured 0.56-0.94x on these shapes.
Measured on an H100 (2026-11-27, sandboxed harness, eager baseline): 1.09x, 95% CI [1.05, 1.12] (0.185 ms against
0.206; benchmarks/results/2026-11-27-kernelbench-v0-compile-h100.md). A probe timed the same kernel at 1.48x over
cuDNN in one call and 1.01x in the next (``call5/6-probe-conv.txt``): the harness's interval is the figure to use.
"""

import torch
import torch.nn as nn

from cudal1.kernelzoo.blocks.conv_rows_cuda import conv


class ModelNew(nn.Module):
    def __init__(self, in_channels: int, out_channels: int, bias: bool = False):
        super().__init__()
        self.conv1d = nn.Conv2d(in_channels, out_channels, kernel_size=1, stride=1, padding=0, bias=bias)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        c = self.conv1d
        return conv(x, c.weight, c.bias, c.stride, c.padding, c.dilation, c.groups)
