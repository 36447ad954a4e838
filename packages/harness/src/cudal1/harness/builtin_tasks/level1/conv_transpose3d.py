"""Transposed 3-D convolution (nn.ConvTranspose3d, kernel 4, stride 2, padding 1, with bias).

Upsamples every spatial dimension by 2. x is float32 (BATCH, IN_CHANNELS, DEPTH, HEIGHT, WIDTH), standard-normal."""

import torch
import torch.nn as nn

BATCH = 8
IN_CHANNELS = 64
OUT_CHANNELS = 32
DEPTH = 16
HEIGHT = 32
WIDTH = 32
KERNEL_SIZE = 4
STRIDE = 2
PADDING = 1


class Model(nn.Module):
    def __init__(self, in_channels: int, out_channels: int, kernel_size: int, stride: int, padding: int):
        super().__init__()
        self.conv = nn.ConvTranspose3d(in_channels, out_channels, kernel_size, stride=stride, padding=padding)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.conv(x)


def get_inputs():
    return [torch.randn(BATCH, IN_CHANNELS, DEPTH, HEIGHT, WIDTH)]


def get_init_inputs():
    return [IN_CHANNELS, OUT_CHANNELS, KERNEL_SIZE, STRIDE, PADDING]
