"""KernelBench level 1, 80_conv_standard_2D_square_input_asymmetric_kernel___dilated____padded__ (x: (16, 3, 256,
256) fp32; Conv2d(3 -> 64, k=(3, 5), padding (1, 2), dilation (2, 1), no bias) -> (16, 64, 254, 256)).

3.0 GFMA and a 266 MB output that cuDNN's fp32 ``xmma 256x64x8`` implicit GEMM takes 0.39 ms for on an H100
(15 TFLOP/s). Here one Triton implicit GEMM (M = output pixels, N = all 64 output channels, K = 3 input channels x
15 taps flattened = 45, padded to 48 only), fp32 FMA (no TF32), the taps in the padding masked, the weight read in
place, the output written once. Expected: 1.3-1.6x (0.24-0.3 ms); the margin is thin (cuDNN's 2-D kernel is a good
one). Not yet measured on a GPU.

The kernel is :func:`cudal1.kernelzoo.blocks.conv_forward.conv_forward` (the PyTorch function on CPU).
"""

import torch
import torch.nn as nn

from cudal1.kernelzoo.blocks.conv_forward import conv_forward


class ModelNew(nn.Module):
    def __init__(self, in_channels: int, out_channels: int, kernel_size: tuple, stride: int = 1,
                 padding: tuple = (0, 0), dilation: tuple = (1, 1), bias: bool = False):
        super().__init__()
        self.conv2d = nn.Conv2d(in_channels, out_channels, kernel_size, stride=stride, padding=padding,
                                dilation=dilation, bias=bias)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        c = self.conv2d
        return conv_forward(x, c.weight, c.bias, c.stride, c.padding, c.dilation, c.groups)
