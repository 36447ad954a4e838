"""Released solution for built-in task `conv2d_relu_maxpool`: cuDNN convolution without bias, then one fused
Triton pass: 2x2 max, + bias, ReLU (bias and ReLU commute with the max), reading the convolution output once
and writing the pooled quarter. Eager PyTorch adds the bias, applies ReLU and pools in three passes."""

import torch
import torch.nn as nn
import torch.nn.functional as F

from cudal1.kernelzoo.ops.bias_relu_max_pool2d import bias_relu_max_pool2d


class ModelNew(nn.Module):
    def __init__(self, in_channels: int, out_channels: int):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, 3, padding=1)
        self.pool = nn.MaxPool2d(2)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = F.conv2d(x, self.conv.weight, None, self.conv.stride, self.conv.padding)
        return bias_relu_max_pool2d(y, self.conv.bias)
