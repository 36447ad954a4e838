"""ResNet bottleneck block (identity shortcut): 1x1 reduce -> 3x3 -> 1x1 expand, BN + ReLU.

out = relu(x + BN3(conv1x1(relu(BN2(conv3x3(relu(BN1(conv1x1(x))))))))). Convolutions have no
bias; BatchNorm runs in inference mode. x is float32 (BATCH, CHANNELS, HEIGHT, WIDTH),
standard-normal."""

import torch
import torch.nn as nn

BATCH = 128
CHANNELS = 256
MID_CHANNELS = 64
HEIGHT = 56
WIDTH = 56


class Model(nn.Module):
    def __init__(self, channels: int, mid_channels: int):
        super().__init__()
        self.conv1 = nn.Conv2d(channels, mid_channels, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(mid_channels)
        self.conv2 = nn.Conv2d(mid_channels, mid_channels, 3, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(mid_channels)
        self.conv3 = nn.Conv2d(mid_channels, channels, 1, bias=False)
        self.bn3 = nn.BatchNorm2d(channels)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = torch.relu(self.bn1(self.conv1(x)))
        y = torch.relu(self.bn2(self.conv2(y)))
        y = self.bn3(self.conv3(y))
        return torch.relu(x + y)


def get_inputs():
    return [torch.randn(BATCH, CHANNELS, HEIGHT, WIDTH)]


def get_init_inputs():
    return [CHANNELS, MID_CHANNELS]
