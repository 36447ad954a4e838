"""KernelBench level 1, 62_conv_standard_2D__square_input__asymmetric_kernel (batch_size = 16 in_channels = 3 out_channels = 64 kernel_size = (3, 5)  # Asymmetric kernel width = 256 height = 256).

cuDNN's fp32 convolution (TF32 off) with 3 input channels runs far below the GPU's FMA and write rates. Here
:func:`cudal1.kernelzoo.blocks.conv_vec_cuda.conv`, a direct convolution in CUDA C (fp32 FMA; each lane 16 output
channels x 4 columns of a row, evict-first stores of whole row runs; one wave of blocks looping over rows; the
module's docstring has the design and the probes); PyTorch's function on CPU or for another padding mode.
Measured on an H100 (2026-11-28, sandboxed harness, eager baseline): 1.29x, 95% CI [1.28, 1.32] (0.253 ms against
0.320), after 1.31x [1.28, 1.35] in the run before (conv_rows_cuda: 1.09x on 2026-11-27). Over torch.compile: 2.86x
[2.76, 2.90] (benchmarks/results/2026-11-28-kernelbench-v0-fifteenth-pass-h100.md).
"""

import torch
import torch.nn as nn

from cudal1.kernelzoo.blocks.conv_vec_cuda import conv


class ModelNew(nn.Module):
    def __init__(self, in_channels: int, out_channels: int, kernel_size: tuple, stride: int = 1, padding: int = 0,
                 dilation: int = 1, groups: int = 1, bias: bool = False):
        super().__init__()
        self.conv2d = nn.Conv2d(in_channels, out_channels, kernel_size, stride=stride, padding=padding, dilation=dilation,
                                groups=groups, bias=bias)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        c = self.conv2d
        if c.padding_mode != "zeros":
            return c(x)
        return conv(x, c.weight, c.bias, c.stride, c.padding, c.dilation, c.groups)
