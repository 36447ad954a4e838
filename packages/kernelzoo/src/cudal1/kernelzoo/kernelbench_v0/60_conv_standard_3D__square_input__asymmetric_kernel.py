"""KernelBench level 1, 60_conv_standard_3D__square_input__asymmetric_kernel (batch_size = 16 in_channels = 3
out_channels = 64 kernel_size = (3, 5, 7)  # Asymmetric kernel width = 64 height = 64 depth = 64).

cuDNN's fp32 convolution (TF32 off) with 3 input channels runs far below the GPU's fp32 FMA rate. Here a
register-tiled direct convolution in CUDA C (each thread 8 output channels x 8 consecutive positions, the input
window of a kernel row loaded once for all its column taps, weights staged in shared memory), fp32 FMA:
:func:`cudal1.kernelzoo.blocks.conv_cuda.conv` (the PyTorch function on CPU).
Probe (call 14, harness-style timing): faster than cuDNN.

Measured figures: ``kernelbench_v0/measured.json`` (per GPU and baseline, checked against the results stores);
the figures this docstring once carried: benchmarks/results/2026-12-05-kernelbench-v0-docstring-figures.md.
"""

import torch
import torch.nn as nn

from cudal1.kernelzoo.blocks.conv_cuda import conv


class ModelNew(nn.Module):
    def __init__(self, in_channels: int, out_channels: int, kernel_size: tuple, stride: int = 1, padding: int = 0, dilation: int = 1, groups: int = 1, bias: bool = False):
        super().__init__()
        self.conv3d = nn.Conv3d(in_channels, out_channels, kernel_size, stride=stride, padding=padding, dilation=dilation, groups=groups, bias=bias)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        c = self.conv3d
        return conv(x, c.weight, c.bias, c.stride, c.padding, c.dilation, c.groups)
