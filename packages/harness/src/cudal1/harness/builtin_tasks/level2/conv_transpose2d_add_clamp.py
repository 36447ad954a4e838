"""ConvTranspose2d (4x4, stride 2, padding 1, no bias) + learnable per-channel bias, then clamp.

y = clamp(conv_transpose(x) + bias, CLAMP_MIN, CLAMP_MAX). x is float32
(BATCH, IN_CHANNELS, HEIGHT, WIDTH), standard-normal; the output is twice as large spatially."""

import torch
import torch.nn as nn

BATCH = 64
IN_CHANNELS = 128
OUT_CHANNELS = 64
HEIGHT = 64
WIDTH = 64
CLAMP_MIN = -0.5
CLAMP_MAX = 0.5


class Model(nn.Module):
    def __init__(self, in_channels: int, out_channels: int, clamp_min: float, clamp_max: float):
        super().__init__()
        self.conv = nn.ConvTranspose2d(in_channels, out_channels, 4, stride=2, padding=1, bias=False)
        self.bias = nn.Parameter(torch.randn(out_channels, 1, 1) * 0.1)
        self.clamp_min = clamp_min
        self.clamp_max = clamp_max

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.clamp(self.conv(x) + self.bias, self.clamp_min, self.clamp_max)


def get_inputs():
    return [torch.randn(BATCH, IN_CHANNELS, HEIGHT, WIDTH)]


def get_init_inputs():
    return [IN_CHANNELS, OUT_CHANNELS, CLAMP_MIN, CLAMP_MAX]
