"""KernelBench level 1, 85_conv_depthwise_2D_asymmetric_input_asymmetric_kernel (x: (16, 3, 128, 256) fp32,
``nn.Conv2d(3, 3, (3, 5), groups=3)``, stride 1, no padding or dilation, no bias by default
-> (16, 3, 126, 252) fp32).

Runs the zoo's ``depthwise_conv2d`` Triton kernel (it takes any KH x KW filter): one program per (image,
channel, 8 x 128 output tile), the 15 taps unrolled as shifted tile loads (overlap from L1), one read of x and
one write of the output (12.4 MB in all). Eager runs PyTorch's generic depthwise kernel, which the zoo
measured at 840 GB/s against this kernel's 2091 GB/s on an H100 (3x3 filter; benchmarks/results/
2026-11-22-tune-matmul-conv-pool-h100.md); the 2026-11-24 self-run put eager at 0.092 ms per call here (host
time included, the 3x5 filter costing eager more than 84's 3x3 on the same input). Expected ~1.5x: less GPU
time, about the same host time. Stride/padding that differ between H and W, or a dilation, fall back to
PyTorch (the zoo kernel takes one stride and one padding). Not yet measured on a GPU.
"""

import torch
import torch.nn as nn
import torch.nn.functional as F

from cudal1.kernelzoo.ops.depthwise_conv2d import depthwise_conv2d


class ModelNew(nn.Module):
    def __init__(self, in_channels: int, out_channels: int, kernel_size_h: int, kernel_size_w: int,
                 stride_h: int = 1, stride_w: int = 1, padding_h: int = 0, padding_w: int = 0, dilation_h: int = 1,
                 dilation_w: int = 1, groups: int = 1, bias: bool = False):
        super().__init__()
        self.conv2d = nn.Conv2d(in_channels, in_channels, (kernel_size_h, kernel_size_w), stride=(stride_h, stride_w),
                                padding=(padding_h, padding_w), dilation=(dilation_h, dilation_w),
                                groups=in_channels, bias=bias)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        c = self.conv2d
        (sh, sw), (ph, pw) = c.stride, c.padding
        if sh != sw or ph != pw or c.dilation != (1, 1):
            return F.conv2d(x, c.weight, c.bias, c.stride, c.padding, c.dilation, c.groups)
        return depthwise_conv2d(x, c.weight, c.bias, sh, ph)
