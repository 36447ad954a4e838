"""KernelBench level 1, 82_conv_depthwise_2D_square_input_square_kernel
(x: (16, 3, 256, 256) fp32; Conv2d(3, 3, 3, groups=3, no bias), stride 1, no padding -> (16, 3, 254, 254)).

One Triton launch, :func:`cudal1.kernelzoo.blocks.small_conv.depthwise_conv2d`: one program per output tile of one
(image, channel) plane, the taps unrolled as shifted masked loads (overlaps served from L1/L2), fp32 multiply-adds,
launched through ``fast_launch.FastLaunch`` (little host time; an earlier version of this kernel, launched by
``kernel[grid]``, was slower than eager on launch time). A module whose filters are not one per channel
(a channel multiplier) or whose padding is not zeros runs PyTorch's convolution.

It runs with the 4x256 tile; the 8x256 tile was slower than eager. At these sizes a call is mostly host time; the
reference's own time moved from run to run.

Measured figures: ``kernelbench_v0/measured.json`` (per GPU and baseline, checked against the results stores);
the figures this docstring once carried: benchmarks/results/2026-12-05-kernelbench-v0-docstring-figures.md.
"""

import torch
import torch.nn as nn

from cudal1.kernelzoo.blocks.small_conv import depthwise_conv2d


class ModelNew(nn.Module):
    def __init__(self, in_channels: int, kernel_size: int, stride: int = 1, padding: int = 0, bias: bool = False):
        super().__init__()
        self.conv2d = nn.Conv2d(in_channels, in_channels, kernel_size, stride=stride, padding=padding, groups=in_channels,
                                bias=bias)
        c = self.conv2d
        self._kernel = c.groups == c.in_channels == c.out_channels and c.padding_mode == "zeros"
        self._geometry = (c.stride, c.padding, c.dilation)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        c = self.conv2d
        if not self._kernel:
            return c(x)
        return depthwise_conv2d(x, c.weight, c.bias, *self._geometry)
