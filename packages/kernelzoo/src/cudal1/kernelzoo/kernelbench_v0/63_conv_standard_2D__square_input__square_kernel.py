"""KernelBench level 1, 63_conv_standard_2D__square_input__square_kernel (batch_size = 16 in_channels = 3
out_channels = 64 kernel_size = 3 width = 256 height = 256).

cuDNN's fp32 convolution (TF32 off) with 3 input channels runs far below the GPU's FMA and write rates. Here
:func:`cudal1.kernelzoo.blocks.conv_vec_cuda.conv`, a direct convolution in CUDA C (fp32 FMA; each lane 16 output
channels x 4 columns of a row, evict-first stores of whole row runs; one wave of blocks looping over rows; the
module's docstring has the design and the probes); PyTorch's function on CPU or for another padding mode.
History: the kernel before paired stores was slower than eager; conv_rows_cuda came before it.

Measured figures: ``kernelbench_v0/measured.json`` (per GPU and baseline, checked against the results stores);
the figures this docstring once carried: benchmarks/results/2026-12-05-kernelbench-v0-docstring-figures.md.
"""

import torch
import torch.nn as nn

from cudal1.kernelzoo.blocks.conv_vec_cuda import conv


class ModelNew(nn.Module):
    def __init__(self, in_channels: int, out_channels: int, kernel_size: int, stride: int = 1, padding: int = 0,
                 dilation: int = 1, groups: int = 1, bias: bool = False):
        super().__init__()
        self.conv2d = nn.Conv2d(in_channels, out_channels, (kernel_size, kernel_size), stride=stride, padding=padding,
                                dilation=dilation, groups=groups, bias=bias)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        c = self.conv2d
        if c.padding_mode != "zeros":
            return c(x)
        return conv(x, c.weight, c.bias, c.stride, c.padding, c.dilation, c.groups)
