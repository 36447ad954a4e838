"""Pre-activation ordering: BatchNorm2d (inference) -> ReLU -> Conv2d (3x3, padding 1, no bias).

x is float32 (BATCH, IN_CHANNELS, HEIGHT, WIDTH), standard-normal. BatchNorm's parameters and
running statistics are initialised away from identity."""

import torch
import torch.nn as nn

BATCH = 64
IN_CHANNELS = 128
OUT_CHANNELS = 128
HEIGHT = 64
WIDTH = 64


class Model(nn.Module):
    def __init__(self, in_channels: int, out_channels: int):
        super().__init__()
        self.bn = nn.BatchNorm2d(in_channels)
        self.conv = nn.Conv2d(in_channels, out_channels, 3, padding=1, bias=False)
        with torch.no_grad():
            self.bn.weight.normal_(1.0, 0.2)
            self.bn.bias.normal_(0.0, 0.2)
            self.bn.running_mean.normal_(0.0, 0.2)
            self.bn.running_var.normal_(0.0, 0.2).abs_().add_(0.5)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.conv(torch.relu(self.bn(x)))


def get_inputs():
    return [torch.randn(BATCH, IN_CHANNELS, HEIGHT, WIDTH)]


def get_init_inputs():
    return [IN_CHANNELS, OUT_CHANNELS]
