"""2-D max pooling (nn.MaxPool2d, kernel 3, stride 2, padding 1: overlapping windows).

x is float32 (BATCH, CHANNELS, HEIGHT, WIDTH), standard-normal."""

import torch
import torch.nn as nn

BATCH = 64
CHANNELS = 128
HEIGHT = 256
WIDTH = 256
KERNEL_SIZE = 3
STRIDE = 2
PADDING = 1


class Model(nn.Module):
    def __init__(self, kernel_size: int, stride: int, padding: int):
        super().__init__()
        self.pool = nn.MaxPool2d(kernel_size, stride=stride, padding=padding)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.pool(x)


def get_inputs():
    return [torch.randn(BATCH, CHANNELS, HEIGHT, WIDTH)]


def get_init_inputs():
    return [KERNEL_SIZE, STRIDE, PADDING]
