"""Released solution for built-in task `bn_relu_conv2d`: inference BatchNorm + ReLU in one Triton pass (a
per-channel scale and shift computed in forward from the current statistics, then ReLU), then the cuDNN
convolution. Eager PyTorch runs BatchNorm and ReLU as two passes."""

import torch
import torch.nn as nn
import torch.nn.functional as F

from cudal1.kernelzoo.ops.bias_act import bias_act


class ModelNew(nn.Module):
    def __init__(self, in_channels: int, out_channels: int):
        super().__init__()
        self.bn = nn.BatchNorm2d(in_channels)
        self.conv = nn.Conv2d(in_channels, out_channels, 3, padding=1, bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        scale = self.bn.weight * torch.rsqrt(self.bn.running_var + self.bn.eps)
        shift = self.bn.bias - self.bn.running_mean * scale
        h = bias_act(x, scale, shift, activation="relu", channel_dim=1)
        return F.conv2d(h, self.conv.weight, None, self.conv.stride, self.conv.padding)
