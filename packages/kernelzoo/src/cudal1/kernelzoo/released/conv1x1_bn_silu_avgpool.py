"""Released solution for built-in task `conv1x1_bn_silu_avgpool`: cuDNN 1x1 convolution without bias, then one
fused Triton reduction: inference BatchNorm (per-channel scale and shift computed in forward from the current
statistics) + SiLU + global average pool, reading the convolution output once. Eager PyTorch reads and
writes it twice more (BatchNorm, SiLU) before pooling."""

import torch
import torch.nn as nn
import torch.nn.functional as F

from cudal1.kernelzoo.ops.bias_act_mean import bias_act_mean


class ModelNew(nn.Module):
    def __init__(self, in_channels: int, out_channels: int):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, 1, bias=False)
        self.bn = nn.BatchNorm2d(out_channels)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = F.conv2d(x, self.conv.weight)
        scale = self.bn.weight * torch.rsqrt(self.bn.running_var + self.bn.eps)
        shift = self.bn.bias - self.bn.running_mean * scale
        return bias_act_mean(y, scale, shift, activation="silu")
