"""Released solution for built-in task `conv2d_bn_relu`: cuDNN convolution without bias, then one fused Triton
epilogue in place on its output: inference BatchNorm as a per-channel scale and shift (computed in forward
from the current running statistics and affine parameters: 4 * OUT_CHANNELS values) + ReLU. Eager PyTorch
moves the convolution output twice more (BatchNorm, ReLU)."""

import torch
import torch.nn as nn
import torch.nn.functional as F

from cudal1.kernelzoo.ops.bias_act import bias_act_


class ModelNew(nn.Module):
    def __init__(self, in_channels: int, out_channels: int):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, 3, padding=1, bias=False)
        self.bn = nn.BatchNorm2d(out_channels)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = F.conv2d(x, self.conv.weight, None, self.conv.stride, self.conv.padding)
        scale = self.bn.weight * torch.rsqrt(self.bn.running_var + self.bn.eps)
        shift = self.bn.bias - self.bn.running_mean * scale
        return bias_act_(y, scale, shift, activation="relu", channel_dim=1)
