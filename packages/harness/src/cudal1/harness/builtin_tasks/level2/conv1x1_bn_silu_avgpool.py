"""Classifier-head stage: 1x1 Conv2d (no bias) -> BatchNorm2d (inference) -> SiLU -> global average pool.

Output is (BATCH, OUT_CHANNELS). x is float32 (BATCH, IN_CHANNELS, HEIGHT, WIDTH),
standard-normal. BatchNorm's parameters and statistics are initialised away from identity."""

import torch
import torch.nn as nn
import torch.nn.functional as F

BATCH = 32
IN_CHANNELS = 256
OUT_CHANNELS = 1280
HEIGHT = 64
WIDTH = 64


class Model(nn.Module):
    def __init__(self, in_channels: int, out_channels: int):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, 1, bias=False)
        self.bn = nn.BatchNorm2d(out_channels)
        with torch.no_grad():
            self.bn.weight.normal_(1.0, 0.2)
            self.bn.bias.normal_(0.0, 0.2)
            self.bn.running_mean.normal_(0.0, 0.2)
            self.bn.running_var.normal_(0.0, 0.2).abs_().add_(0.5)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = F.silu(self.bn(self.conv(x)))
        return F.adaptive_avg_pool2d(y, 1).flatten(1)


def get_inputs():
    return [torch.randn(BATCH, IN_CHANNELS, HEIGHT, WIDTH)]


def get_init_inputs():
    return [IN_CHANNELS, OUT_CHANNELS]
