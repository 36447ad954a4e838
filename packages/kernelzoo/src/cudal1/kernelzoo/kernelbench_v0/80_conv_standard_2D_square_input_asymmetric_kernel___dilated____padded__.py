"""KernelBench level 1, 80_conv_standard_2D_square_input_asymmetric_kernel___dilated____padded__ (batch_size = 16 in_channels = 3 out_channels = 64 kernel_size = (3, 5) # Asymmetric kernel width = 256 height = 256 stride = 1 padding = (1, 2) # Asymmetric padding dilation = (2, 1) # Asymmetric dilation).

cuDNN's fp32 convolution (TF32 off) with 3 input channels runs far below the GPU's fp32 FMA rate. Here a
register-tiled direct convolution in CUDA C, :func:`cudal1.kernelzoo.blocks.conv_vec_cuda.conv`: each lane owns 16
output channels x 4 consecutive columns of a row, reads its input window as 16-byte loads straight from global memory
(L2-resident) and the weights as 16-byte shared-memory broadcasts, fp32 FMA, and stores with evict-first stores of
whole runs of a row (512 contiguous bytes a warp store; 256 where rows are not 16-byte multiples and lanes trade
values to pair them); one wave of blocks, each computing consecutive rows with its weights staged once. Launched
through the driver; the PyTorch function on CPU or for another padding mode. Against the 2026-11-27 kernel
(:mod:`~cudal1.kernelzoo.blocks.conv_rows_cuda`: input rows staged in shared memory, outputs stored through a
shared-memory transpose) the 2026-11-28 probes (benchmarks/scripts/probe_conv_vec.py) timed 25-28% less back to back
(H200) and 8-26% less under the harness's per-call timing (H100).
Measured on an H100 (2026-11-28, sandboxed harness, eager baseline): 1.30x, 95% CI [1.29, 1.32] (0.257 ms against
0.333), after 1.29x [1.27, 1.43] in the run before (conv_rows_cuda: 1.10x on 2026-11-27)
(benchmarks/results/2026-11-28-kernelbench-v0-fifteenth-pass-h100.md).
"""

import torch
import torch.nn as nn

from cudal1.kernelzoo.blocks.conv_vec_cuda import conv


class ModelNew(nn.Module):
    def __init__(self, in_channels: int, out_channels: int, kernel_size: tuple, stride: int = 1,
                 padding: tuple = (0, 0), dilation: tuple = (1, 1), bias: bool = False):
        super().__init__()
        self.conv2d = nn.Conv2d(in_channels, out_channels, kernel_size, stride=stride, padding=padding, dilation=dilation,
                                bias=bias)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        c = self.conv2d
        if c.padding_mode != "zeros":
            return c(x)
        return conv(x, c.weight, c.bias, c.stride, c.padding, c.dilation, c.groups)
