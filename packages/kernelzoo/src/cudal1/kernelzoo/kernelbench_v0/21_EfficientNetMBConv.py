"""KernelBench level 3, 21_EfficientNetMBConv (x: (10, 112, 224, 224) fp32; MBConv: expand 1x1 conv 112 -> 672
+ BatchNorm + ReLU6 (1.35 GB activation), depthwise 5x5 conv stride 2 + BatchNorm + ReLU6 (337 MB), project 1x1
conv 672 -> 192 + BatchNorm; no residual at these sizes (stride 2), the module handles it when there is one).
The harness evaluates both models in eval mode, so every batch norm is the per-channel affine map of its running
statistics (the fallback path uses ``F.batch_norm(training=False)`` too).

Eager runs batch norm and ReLU6 as separate full passes: on the 1.35 GB expanded activation alone that is two
reads and two writes. Here the convolutions stay cuDNN fp32 (no TF32) and each batch norm with its activation
(and the residual add, when there is one) is ONE Triton pass: ~3.4 GB of ~10 GB of eager memory traffic removed.
Expected: ~1.15-1.2x (eager reference 7.3 ms on an H100).
Measured on an H100: benchmarks/results/2026-11-25-kernelbench-v0-release-h100.md.
"""

import torch
import torch.nn as nn

from cudal1.kernelzoo.blocks.bn_act import bn_act


class ModelNew(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, stride, expand_ratio):
        super().__init__()
        self.use_residual = (stride == 1 and in_channels == out_channels)
        hidden_dim = in_channels * expand_ratio
        if expand_ratio != 1:
            self.expand_conv = nn.Sequential(
                nn.Conv2d(in_channels, hidden_dim, kernel_size=1, stride=1, padding=0, bias=False),
                nn.BatchNorm2d(hidden_dim), nn.ReLU6(inplace=True))
        self.depthwise_conv = nn.Sequential(
            nn.Conv2d(hidden_dim, hidden_dim, kernel_size=kernel_size, stride=stride, padding=(kernel_size - 1) // 2,
                      groups=hidden_dim, bias=False),
            nn.BatchNorm2d(hidden_dim), nn.ReLU6(inplace=True))
        self.project_conv = nn.Sequential(
            nn.Conv2d(hidden_dim, out_channels, kernel_size=1, stride=1, padding=0, bias=False),
            nn.BatchNorm2d(out_channels))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        identity = x
        if hasattr(self, "expand_conv"):
            x = bn_act(self.expand_conv[0](x), self.expand_conv[1], 2)
        x = bn_act(self.depthwise_conv[0](x), self.depthwise_conv[1], 2)
        return bn_act(self.project_conv[0](x), self.project_conv[1], 0, identity if self.use_residual else None)
