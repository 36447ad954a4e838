"""KernelBench level 1, 57_conv_transposed_2D__square_input__square_kernel (x: (16, 32, 128, 128) fp32;
ConvTranspose2d(32 -> 64, k=3, stride 1, no bias) -> (16, 64, 130, 130)). Earlier
a Triton implicit GEMM (:mod:`cudal1.kernelzoo.blocks.conv_transpose`), 1.43-1.94x through the harness over three runs,
1.65x in the fifteenth pass's table.

A stride-1 transposed convolution is the forward convolution of the same input with the weight flipped and its
channel axes swapped, padded (2, 2): :func:`cudal1.kernelzoo.blocks.convt_as_conv.conv_transpose` runs it as
``conv2d`` (cuDNN's forward kernels instead of its backward-data ones; the flipped weight is formed at every call).

Probe (H100, 2026-11-28, one call timed as the harness times it, ``benchmarks/scripts/probe_convt_forward.py``): 0.34
ms against eager's 0.49 and the set's Triton kernel's 0.41.

Measured on an H100 (2026-11-28, sandboxed harness, eager baseline, two runs in call 5 of benchmarks/results/2026-11-28-kernelbench-v0-sixteenth-pass-h100.md):
1.68x, 95% CI [1.60, 1.76] (timing_unstable), then 1.80x [1.77, 1.87], verified both times, 0.39-0.41 ms a call
against the Triton version's 0.48 ms (1.65x [1.53, 1.79] on 2026-11-27); it replaced that file. Over torch.compile
(call 6): 2.58x.
"""

import torch
import torch.nn as nn

from cudal1.kernelzoo.blocks.convt_as_conv import conv_transpose


class ModelNew(nn.Module):
    def __init__(self, in_channels: int, out_channels: int, kernel_size: int, stride: int = 1, padding: int = 0,
                 output_padding: int = 0, groups: int = 1, bias: bool = False):
        super().__init__()
        self.conv_transpose2d = nn.ConvTranspose2d(in_channels, out_channels, kernel_size, stride=stride,
                                                   padding=padding, output_padding=output_padding, groups=groups,
                                                   bias=bias)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        ct = self.conv_transpose2d
        return conv_transpose(x, ct.weight, ct.bias, ct.stride, ct.padding, ct.output_padding, ct.groups, ct.dilation)
