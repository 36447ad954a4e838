"""3-D decoder stage: ConvTranspose3d (4x4x4, stride 2, padding 1, no bias) -> BatchNorm3d -> ReLU.

x is float32 (BATCH, IN_CHANNELS, DEPTH, HEIGHT, WIDTH), standard-normal. BatchNorm runs on
running statistics (inference), initialised away from identity."""

import torch
import torch.nn as nn

BATCH = 8
IN_CHANNELS = 64
OUT_CHANNELS = 32
DEPTH = 16
HEIGHT = 32
WIDTH = 32


class Model(nn.Module):
    def __init__(self, in_channels: int, out_channels: int):
        super().__init__()
        self.conv = nn.ConvTranspose3d(in_channels, out_channels, 4, stride=2, padding=1, bias=False)
        self.bn = nn.BatchNorm3d(out_channels)
        with torch.no_grad():
            self.bn.weight.normal_(1.0, 0.2)
            self.bn.bias.normal_(0.0, 0.2)
            self.bn.running_mean.normal_(0.0, 0.2)
            self.bn.running_var.normal_(0.0, 0.2).abs_().add_(0.5)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.relu(self.bn(self.conv(x)))


def get_inputs():
    return [torch.randn(BATCH, IN_CHANNELS, DEPTH, HEIGHT, WIDTH)]


def get_init_inputs():
    return [IN_CHANNELS, OUT_CHANNELS]
