"""KernelBench level 1, 82_conv_depthwise_2D_square_input_square_kernel (x: (16, 3, 256, 256) fp32,
``nn.Conv2d(3, 3, 3, groups=3)``, stride 1, no padding, no bias by default -> (16, 3, 254, 254) fp32).

Runs the zoo's ``depthwise_conv2d`` Triton kernel: one program per (image, channel, 8 x 128 output tile), the
taps unrolled as shifted tile loads (overlap from L1), one read of x and one write of the output (25 MB in
all). Eager runs PyTorch's generic depthwise kernel, which the zoo measured at 840 GB/s against this kernel's
2091 GB/s on an H100 (benchmarks/results/2026-11-22-tune-matmul-conv-pool-h100.md); at this task's 25 MB the
2026-11-24 self-run put eager at 0.102 ms per call (host time included). Expected ~1.5x: ~50 us less GPU time,
about the same host time. Stride/padding that are not square, or a dilation, fall back to PyTorch (the zoo
kernel takes one stride and one padding). Not yet measured on a GPU.
"""

import torch
import torch.nn as nn
import torch.nn.functional as F

from cudal1.kernelzoo.ops.depthwise_conv2d import depthwise_conv2d


class ModelNew(nn.Module):
    def __init__(self, in_channels: int, kernel_size: int, stride: int = 1, padding: int = 0, bias: bool = False):
        super().__init__()
        self.conv2d = nn.Conv2d(in_channels, in_channels, kernel_size, stride=stride, padding=padding,
                                groups=in_channels, bias=bias)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        c = self.conv2d
        (sh, sw), (ph, pw) = c.stride, c.padding
        if sh != sw or ph != pw or c.dilation != (1, 1):
            return F.conv2d(x, c.weight, c.bias, c.stride, c.padding, c.dilation, c.groups)
        return depthwise_conv2d(x, c.weight, c.bias, sh, ph)
