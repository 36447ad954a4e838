"""Released solution for built-in task `depthwise_conv2d`: the zoo's Triton depthwise conv (one program per
output tile of one channel, the 3x3 taps unrolled, bias added in the same pass): one read of x and one write
of the output. Faster than cuDNN at 64x512x128x128 (benchmarks/results/2026-11-22-tune-matmul-conv-pool-h100.md)."""

import torch
import torch.nn as nn

from cudal1.kernelzoo.ops.depthwise_conv2d import depthwise_conv2d


class ModelNew(nn.Module):
    def __init__(self, channels: int, kernel_size: int):
        super().__init__()
        self.conv = nn.Conv2d(channels, channels, kernel_size, padding=kernel_size // 2, groups=channels)
        self.padding = kernel_size // 2

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return depthwise_conv2d(x, self.conv.weight, self.conv.bias, 1, self.padding)
