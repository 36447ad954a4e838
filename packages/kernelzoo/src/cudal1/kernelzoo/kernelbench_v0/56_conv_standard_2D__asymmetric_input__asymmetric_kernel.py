"""KernelBench level 1, 56_conv_standard_2D__asymmetric_input__asymmetric_kernel (batch_size = 16 in_channels = 3 out_channels = 64 kernel_size = (3, 5) height = 256 width = 128).

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
Measured on an H100 (2026-11-28, sandboxed harness, eager baseline): 1.15x, 95% CI [1.13, 1.20] (0.168 ms against
0.191), after 1.19x [1.15, 1.23] in the run before (conv_rows_cuda: 0.98x on 2026-11-27). Over torch.compile: 2.78x
[2.69, 2.82] (benchmarks/results/2026-11-28-kernelbench-v0-fifteenth-pass-h100.md).
"""

import torch
import torch.nn as nn

from cudal1.kernelzoo.blocks.conv_vec_cuda import conv


class ModelNew(nn.Module):
    def __init__(self, in_channels: int, out_channels: int, kernel_size: tuple, stride: tuple = (1, 1),
                 padding: tuple = (0, 0), dilation: tuple = (1, 1), groups: int = 1, bias: bool = False):
        super().__init__()
        self.conv2d = nn.Conv2d(in_channels, out_channels, kernel_size, stride=stride, padding=padding, dilation=dilation,
                                groups=groups, bias=bias)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        c = self.conv2d
        if c.padding_mode != "zeros":
            return c(x)
        return conv(x, c.weight, c.bias, c.stride, c.padding, c.dilation, c.groups)
