"""KernelBench level 3, 8_ResNetBasicBlock (x: (10, 3, 224, 224) fp32; conv3x3 3 -> 64 + BatchNorm + ReLU,
conv3x3 64 -> 64 + BatchNorm, plus the downsample 1x1 conv 3 -> 64 + BatchNorm, in-place add, ReLU; output
(10, 64, 224, 224), 128 MB). The harness evaluates both models in eval mode, so every batch norm is the
per-channel affine map of its running statistics (the fallback path uses ``F.batch_norm(training=False)`` too).

Eager runs six elementwise passes over 128 MB tensors (batch norm, ReLU, batch norm, downsample batch norm, add,
ReLU: ~1.4 GB of traffic). Here the convolutions stay cuDNN fp32 (no TF32) and the rest is two Triton passes:
relu(bn1(a)), and relu(bn2(b) + bn_d(downsample conv)) reading both conv outputs once (~0.64 GB in all).
Expected: ~1.15x (eager reference 1.94 ms on an H100; ~0.25 ms of memory traffic and 4 launches removed).
Measured on an H100: benchmarks/results/2026-11-25-kernelbench-v0-release-h100.md.
"""

import torch
import torch.nn as nn

from cudal1.kernelzoo.blocks.bn_act import bn_act


class ModelNew(nn.Module):
    expansion = 1

    def __init__(self, in_channels, out_channels, stride=1):
        super().__init__()
        self.conv1 = nn.Conv2d(in_channels, out_channels, kernel_size=3, stride=stride, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(out_channels)
        self.relu = nn.ReLU(inplace=True)
        self.conv2 = nn.Conv2d(out_channels, out_channels, kernel_size=3, stride=1, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(out_channels)
        self.downsample = nn.Sequential(
            nn.Conv2d(in_channels, out_channels * self.expansion, kernel_size=1, stride=stride, bias=False),
            nn.BatchNorm2d(out_channels * self.expansion))
        self.stride = stride

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out = bn_act(self.conv1(x), self.bn1, 1)
        return bn_act(self.conv2(out), self.bn2, 1, self.downsample[0](x), self.downsample[1])
