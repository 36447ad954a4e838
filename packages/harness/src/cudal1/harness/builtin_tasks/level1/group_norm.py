"""Group normalisation (nn.GroupNorm) with learnable per-channel weight and bias.

x is float32 (BATCH, CHANNELS, HEIGHT, WIDTH), standard-normal shifted by 0.5."""

import torch
import torch.nn as nn

BATCH = 32
CHANNELS = 256
HEIGHT = 256
WIDTH = 256
GROUPS = 32


class Model(nn.Module):
    def __init__(self, groups: int, channels: int):
        super().__init__()
        self.norm = nn.GroupNorm(groups, channels)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.norm(x)


def get_inputs():
    return [torch.randn(BATCH, CHANNELS, HEIGHT, WIDTH) + 0.5]


def get_init_inputs():
    return [GROUPS, CHANNELS]
