"""Released solution for built-in task `conv2d`: the convolution runs in cuDNN (fp32, under the harness's
flags) through the zoo's `cudnn_conv.conv`; there is nothing around it to fuse (the bias is part of the
same call). No Triton kernel: an fp32 implicit-GEMM conv has not been shown to beat cuDNN here.
At parity with eager by construction."""

import torch
import torch.nn as nn

from cudal1.kernelzoo.ops.cudnn_conv import conv


class ModelNew(nn.Module):
    def __init__(self, in_channels: int, out_channels: int, kernel_size: int):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size, padding=kernel_size // 2)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        c = self.conv
        return conv(x, c.weight, c.bias, c.stride, c.padding, c.dilation, c.groups)
