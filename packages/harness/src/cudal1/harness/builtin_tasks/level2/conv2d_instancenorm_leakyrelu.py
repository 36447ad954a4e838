"""Conv2d (3x3, no bias) -> InstanceNorm2d (affine) -> LeakyReLU(0.2), a GAN / U-Net stage.

x is float32 (BATCH, IN_CHANNELS, HEIGHT, WIDTH), standard-normal."""

import torch
import torch.nn as nn
import torch.nn.functional as F

BATCH = 32
IN_CHANNELS = 64
OUT_CHANNELS = 128
HEIGHT = 128
WIDTH = 128
NEGATIVE_SLOPE = 0.2


class Model(nn.Module):
    def __init__(self, in_channels: int, out_channels: int, negative_slope: float):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, 3, padding=1, bias=False)
        self.norm = nn.InstanceNorm2d(out_channels, affine=True)
        self.negative_slope = negative_slope

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.leaky_relu(self.norm(self.conv(x)), self.negative_slope)


def get_inputs():
    return [torch.randn(BATCH, IN_CHANNELS, HEIGHT, WIDTH)]


def get_init_inputs():
    return [IN_CHANNELS, OUT_CHANNELS, NEGATIVE_SLOPE]
