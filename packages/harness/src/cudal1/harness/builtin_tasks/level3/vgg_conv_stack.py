"""Small VGG-style feature extractor: three stages of (3x3 conv + ReLU) x2 + 2x2 max-pool.

Channels WIDTH, 2*WIDTH, 4*WIDTH; the output is the final feature map, float32
(BATCH, 4*WIDTH, IMAGE_SIZE/8, IMAGE_SIZE/8). x is float32 (BATCH, 3, IMAGE_SIZE, IMAGE_SIZE),
standard-normal."""

import torch
import torch.nn as nn

BATCH = 8
IN_CHANNELS = 3
IMAGE_SIZE = 224
WIDTH = 64


class Model(nn.Module):
    def __init__(self, in_channels: int, width: int):
        super().__init__()
        layers = []
        c_in = in_channels
        for c_out in (width, 2 * width, 4 * width):
            layers += [
                nn.Conv2d(c_in, c_out, 3, padding=1),
                nn.ReLU(),
                nn.Conv2d(c_out, c_out, 3, padding=1),
                nn.ReLU(),
                nn.MaxPool2d(2),
            ]
            c_in = c_out
        self.features = nn.Sequential(*layers)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.features(x)


def get_inputs():
    return [torch.randn(BATCH, IN_CHANNELS, IMAGE_SIZE, IMAGE_SIZE)]


def get_init_inputs():
    return [IN_CHANNELS, WIDTH]
