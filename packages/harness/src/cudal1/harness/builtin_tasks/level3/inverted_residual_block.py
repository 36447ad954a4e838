"""MobileNetV2 inverted residual block (stride 1, identity shortcut).

1x1 expand -> BN -> ReLU6 -> depthwise 3x3 -> BN -> ReLU6 -> 1x1 project -> BN, plus x.

Convolutions have no bias; BatchNorm runs in inference mode. x is float32
(BATCH, CHANNELS, HEIGHT, WIDTH), standard-normal."""

import torch
import torch.nn as nn
import torch.nn.functional as F

BATCH = 64
CHANNELS = 64
EXPANSION = 6
HEIGHT = 56
WIDTH = 56


class Model(nn.Module):
    def __init__(self, channels: int, expansion: int):
        super().__init__()
        hidden = channels * expansion
        self.expand = nn.Conv2d(channels, hidden, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(hidden)
        self.depthwise = nn.Conv2d(hidden, hidden, 3, padding=1, groups=hidden, bias=False)
        self.bn2 = nn.BatchNorm2d(hidden)
        self.project = nn.Conv2d(hidden, channels, 1, bias=False)
        self.bn3 = nn.BatchNorm2d(channels)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = F.relu6(self.bn1(self.expand(x)))
        y = F.relu6(self.bn2(self.depthwise(y)))
        return x + self.bn3(self.project(y))


def get_inputs():
    return [torch.randn(BATCH, CHANNELS, HEIGHT, WIDTH)]


def get_init_inputs():
    return [CHANNELS, EXPANSION]
