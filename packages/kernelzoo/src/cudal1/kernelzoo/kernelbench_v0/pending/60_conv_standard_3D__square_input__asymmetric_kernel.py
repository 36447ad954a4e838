"""KernelBench level 1, 60_conv_standard_3D__square_input__asymmetric_kernel (x: (16, 3, 64, 64, 64) fp32;
Conv3d(3 -> 64, k=(3, 5, 7), no bias) -> (16, 64, 62, 60, 58)).

69.6 GFMA that cuDNN runs with its generic fp32 ``implicit_convolveNd_sgemm`` in 10.1 ms on an H100 (13.7 TFLOP/s).
Here one Triton implicit GEMM (M = output voxels, N = all 64 output channels, K = 3 input channels x 105 taps
flattened = 315, padded to 320 only), 128 x 64 x 32 tiles, fp32 FMA (no TF32), the weight read in place, the
884 MB output written once. Expected: 1.8-2.2x (at 25-30 TFLOP/s, as the same FMA GEMM reached in
``blocks.conv_transpose``). Not yet measured on a GPU.

The kernel is :func:`cudal1.kernelzoo.blocks.conv_forward.conv_forward` (the PyTorch function on CPU).
"""

import torch
import torch.nn as nn

from cudal1.kernelzoo.blocks.conv_forward import conv_forward


class ModelNew(nn.Module):
    def __init__(self, in_channels: int, out_channels: int, kernel_size: tuple, stride: int = 1, padding: int = 0,
                 dilation: int = 1, groups: int = 1, bias: bool = False):
        super().__init__()
        self.conv3d = nn.Conv3d(in_channels, out_channels, kernel_size, stride=stride, padding=padding,
                                dilation=dilation, groups=groups, bias=bias)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        c = self.conv3d
        return conv_forward(x, c.weight, c.bias, c.stride, c.padding, c.dilation, c.groups)
