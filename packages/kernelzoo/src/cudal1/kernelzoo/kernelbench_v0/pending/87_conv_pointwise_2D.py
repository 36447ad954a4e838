"""KernelBench level 1, 87_conv_pointwise_2D (x: (16, 3, 256, 256) fp32; Conv2d(3 -> 64, k=1, no bias) ->
(16, 64, 256, 256)).

A 3 -> 64 channel mix: 13 MB read, 268 MB written (about 0.09 ms at 3 TB/s), which cuDNN runs as its fp32
``xmma 256x64x8`` GEMM (K = 3 padded to a K tile of 8) in 0.26 ms on an H100 (about 1.1 TB/s). Here one Triton
kernel: each program reads the 3 input channels of 256 pixels once and writes all 64 output channels as 3 rank-1
updates (fp32 FMA), so the run is bound by the output write. Expected: 2-2.5x (0.1-0.12 ms). Not yet measured on a
GPU.

The kernel is :func:`cudal1.kernelzoo.blocks.conv_forward.depthwise_pointwise` without its depthwise part (the
PyTorch convolution on CPU).
"""

import torch
import torch.nn as nn

from cudal1.kernelzoo.blocks.conv_forward import depthwise_pointwise


class ModelNew(nn.Module):
    def __init__(self, in_channels: int, out_channels: int, bias: bool = False):
        super().__init__()
        self.conv1d = nn.Conv2d(in_channels, out_channels, kernel_size=1, stride=1, padding=0, bias=bias)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        c = self.conv1d
        return depthwise_pointwise(x, None, None, c.weight, c.bias)
