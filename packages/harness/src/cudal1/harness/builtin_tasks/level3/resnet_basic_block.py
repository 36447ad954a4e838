"""ResNet basic block (identity shortcut): relu(x + BN(conv3x3(relu(BN(conv3x3(x)))))).

Convolutions have no bias; BatchNorm runs in inference mode. x is float32
(BATCH, CHANNELS, HEIGHT, WIDTH), standard-normal."""

import torch
import torch.nn as nn

BATCH = 32
CHANNELS = 128
HEIGHT = 56
WIDTH = 56


class Model(nn.Module):
    def __init__(self, channels: int):
        super().__init__()
        self.conv1 = nn.Conv2d(channels, channels, 3, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(channels)
        self.conv2 = nn.Conv2d(channels, channels, 3, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(channels)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = torch.relu(self.bn1(self.conv1(x)))
        y = self.bn2(self.conv2(y))
        return torch.relu(x + y)


def get_inputs():
    return [torch.randn(BATCH, CHANNELS, HEIGHT, WIDTH)]


def get_init_inputs():
    return [CHANNELS]
