"""KernelBench level 3, 8_ResNetBasicBlock (x: (10, 3, 224, 224) fp32; conv3x3 3 -> 64 + BatchNorm + ReLU,
conv3x3 64 -> 64 + BatchNorm, plus the downsample 1x1 conv 3 -> 64 + BatchNorm, in-place add, ReLU; output
(10, 64, 224, 224), 128 MB). The harness evaluates both models in eval mode, so every batch norm is the
per-channel affine map of its running statistics.

The three batch norms fold into their convolutions (exact; computed inside each forward from the current
parameters by ``blocks.conv_bn.fold``), and the convolutions run as cuDNN calls with bias, ReLU and the residual
fused (``blocks.conv_bn.conv_act``): conv1+bn1+ReLU is one call, the downsample conv+bn one, conv2+bn2+add+ReLU one.
Eager runs six elementwise passes over 128 MB tensors besides the convolutions. cuDNN fp32, no TF32.
"""

import torch
import torch.nn as nn

from cudal1.kernelzoo.blocks.conv_bn import conv_act, fold


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
        w, b = fold([(self.conv1, self.bn1), (self.conv2, self.bn2), (self.downsample[0], self.downsample[1])])
        out = conv_act(x, w[0], b[0], self.conv1, True)
        z = conv_act(x, w[2], b[2], self.downsample[0], False)
        return conv_act(out, w[1], b[1], self.conv2, True, z)
