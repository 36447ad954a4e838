"""KernelBench level 1, 86_conv_depthwise_separable_2D (x: (16, 3, 256, 256) fp32; depthwise Conv2d(3, k=3, groups
3) then pointwise Conv2d(3 -> 64, k=1), no biases -> (16, 64, 254, 254)).

The reference runs two kernels (ATen's depthwise kernel, then cuDNN's ``xmma 256x64x8`` GEMM with K = 3) in
0.28 ms on an H100: the 264 MB output alone takes about 0.09 ms to write at 3 TB/s. Here one Triton kernel: each
program computes the 3 depthwise channels of 256 output pixels in registers (27 FMA per pixel), mixes them into
all 64 output channels as 3 rank-1 updates, and writes the output once; no intermediate tensor, one launch.
Expected: 2.2-2.8x (0.1-0.13 ms). Not yet measured on a GPU.

The kernel is :func:`cudal1.kernelzoo.blocks.conv_forward.depthwise_pointwise` (the two PyTorch convolutions on
CPU).
"""

import torch
import torch.nn as nn

from cudal1.kernelzoo.blocks.conv_forward import depthwise_pointwise


class ModelNew(nn.Module):
    def __init__(self, in_channels: int, out_channels: int, kernel_size: int, stride: int = 1, padding: int = 0,
                 dilation: int = 1, bias: bool = False):
        super().__init__()
        self.depthwise = nn.Conv2d(in_channels, in_channels, kernel_size, stride=stride, padding=padding,
                                   dilation=dilation, groups=in_channels, bias=bias)
        self.pointwise = nn.Conv2d(in_channels, out_channels, kernel_size=1, bias=bias)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        dw, pw = self.depthwise, self.pointwise
        return depthwise_pointwise(x, dw.weight, dw.bias, pw.weight, pw.bias, dw.stride, dw.padding, dw.dilation)
