"""KernelBench level 1, 59_conv_standard_3D__asymmetric_input__square_kernel (x: (16, 3, 256, 256, 10) fp32;
Conv3d(3 -> 64, k=(3, 3, 1), no bias) -> (16, 64, 254, 254, 10)).

17.8 GFMA and a 2.64 GB output (0.9 ms to write at 3 TB/s) that cuDNN's fp32 ``xmma 128x32x8`` implicit GEMM takes
2.9 ms for on an H100 (12 TFLOP/s). Here one Triton implicit GEMM (M = output voxels, N = all 64 output channels,
K = 3 input channels x 9 taps flattened = 27, padded to 32 only), fp32 FMA (no TF32), the weight read in place,
no padding masks (none is needed without padding), the output written once. Expected: 1.5-1.9x (1.5-1.9 ms).
Not yet measured on a GPU.

The kernel is :func:`cudal1.kernelzoo.blocks.conv_forward.conv_forward` (the PyTorch function on CPU).
"""

import torch
import torch.nn as nn

from cudal1.kernelzoo.blocks.conv_forward import conv_forward


class ModelNew(nn.Module):
    def __init__(self, in_channels: int, out_channels: int, kernel_size: int, stride: int = 1, padding: int = 0,
                 dilation: int = 1, groups: int = 1, bias: bool = False):
        super().__init__()
        self.conv3d = nn.Conv3d(in_channels, out_channels, (kernel_size, kernel_size, 1), stride=stride,
                                padding=padding, dilation=dilation, groups=groups, bias=bias)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        c = self.conv3d
        return conv_forward(x, c.weight, c.bias, c.stride, c.padding, c.dilation, c.groups)
