"""Convolutional residual unit over a sequence: x + GELU(Conv1d(x)), 'same' padding.

x is float32 (BATCH, CHANNELS, LENGTH), standard-normal."""

import torch
import torch.nn as nn
import torch.nn.functional as F

BATCH = 16
CHANNELS = 256
LENGTH = 4096
KERNEL_SIZE = 9


class Model(nn.Module):
    def __init__(self, channels: int, kernel_size: int):
        super().__init__()
        self.conv = nn.Conv1d(channels, channels, kernel_size, padding=kernel_size // 2)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x + F.gelu(self.conv(x))


def get_inputs():
    return [torch.randn(BATCH, CHANNELS, LENGTH)]


def get_init_inputs():
    return [CHANNELS, KERNEL_SIZE]
