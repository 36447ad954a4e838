"""KernelBench level 1, 85_conv_depthwise_2D_asymmetric_input_asymmetric_kernel
(x: (16, 3, 128, 256) fp32; Conv2d(3, 3, (3, 5), groups=3, no bias), stride 1, no padding -> (16, 3, 126, 252)).

One Triton launch, :func:`cudal1.kernelzoo.blocks.small_conv.depthwise_conv2d`: one program per output tile of one
(image, channel) plane, the taps unrolled as shifted masked loads (overlaps served from L1/L2), fp32 multiply-adds,
launched through ``fast_launch.FastLaunch`` (a few us of host time; the 2026-11-26 version of this kernel,
launched by ``kernel[grid]``, lost at 0.53-0.66x on launch time). A module whose filters are not one per channel
(a channel multiplier) or whose padding is not zeros runs PyTorch's convolution.

Measured on an H100 (2026-11-27, sandboxed harness, eager baseline) with the 4 x 256 tile: 1.10x, 95% CI [1.07,
1.12], then 0.87x [0.85, 0.90] in the next run; the 8 x 256 tile measured 0.83x [0.80, 0.85]
(benchmarks/results/2026-11-27-kernelbench-v0-thirteenth-pass-h100.md). Not a solution: stays in ``pending/``.
"""

import torch
import torch.nn as nn

from cudal1.kernelzoo.blocks.small_conv import depthwise_conv2d


class ModelNew(nn.Module):
    def __init__(self, in_channels: int, out_channels: int, kernel_size_h: int, kernel_size_w: int, stride_h: int = 1,
                 stride_w: int = 1, padding_h: int = 0, padding_w: int = 0, dilation_h: int = 1, dilation_w: int = 1,
                 groups: int = 1, bias: bool = False):
        super().__init__()
        self.conv2d = nn.Conv2d(in_channels, in_channels, (kernel_size_h, kernel_size_w), stride=(stride_h, stride_w),
                                padding=(padding_h, padding_w), dilation=(dilation_h, dilation_w),
                                groups=in_channels, bias=bias)
        c = self.conv2d
        self._kernel = c.groups == c.in_channels == c.out_channels and c.padding_mode == "zeros"
        self._geometry = (c.stride, c.padding, c.dilation)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        c = self.conv2d
        if not self._kernel:
            return c(x)
        return depthwise_conv2d(x, c.weight, c.bias, *self._geometry)
