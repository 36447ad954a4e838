"""ConvNeXt block: depthwise 7x7 conv, LayerNorm, 4x MLP with GELU, layer scale, residual.

Order: depthwise 7x7 conv -> channels-last LayerNorm -> Linear (4x) -> GELU -> Linear ->
per-channel layer scale, plus the input.

x is float32 (BATCH, CHANNELS, HEIGHT, WIDTH), standard-normal."""

import torch
import torch.nn as nn
import torch.nn.functional as F

BATCH = 32
CHANNELS = 192
HEIGHT = 56
WIDTH = 56
LAYER_SCALE = 0.5


class Model(nn.Module):
    def __init__(self, channels: int, layer_scale: float):
        super().__init__()
        self.dwconv = nn.Conv2d(channels, channels, 7, padding=3, groups=channels)
        self.norm = nn.LayerNorm(channels, eps=1e-6)
        self.fc1 = nn.Linear(channels, 4 * channels)
        self.fc2 = nn.Linear(4 * channels, channels)
        self.gamma = nn.Parameter(torch.full((channels,), layer_scale))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = self.dwconv(x).permute(0, 2, 3, 1)
        y = self.fc2(F.gelu(self.fc1(self.norm(y))))
        return x + (self.gamma * y).permute(0, 3, 1, 2)


def get_inputs():
    return [torch.randn(BATCH, CHANNELS, HEIGHT, WIDTH)]


def get_init_inputs():
    return [CHANNELS, LAYER_SCALE]
