"""2-D average pooling (nn.AvgPool2d, kernel 2, stride 2).

x is float32 (BATCH, CHANNELS, HEIGHT, WIDTH), standard-normal."""

import torch
import torch.nn as nn

BATCH = 64
CHANNELS = 128
HEIGHT = 256
WIDTH = 256
KERNEL_SIZE = 2
STRIDE = 2


class Model(nn.Module):
    def __init__(self, kernel_size: int, stride: int):
        super().__init__()
        self.pool = nn.AvgPool2d(kernel_size, stride=stride)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.pool(x)


def get_inputs():
    return [torch.randn(BATCH, CHANNELS, HEIGHT, WIDTH)]


def get_init_inputs():
    return [KERNEL_SIZE, STRIDE]
