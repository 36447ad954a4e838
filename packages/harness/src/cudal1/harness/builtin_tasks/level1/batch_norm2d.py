"""2-D batch normalisation in inference mode (nn.BatchNorm2d, running statistics).

x is float32 (BATCH, CHANNELS, HEIGHT, WIDTH), standard-normal. The affine parameters and
running statistics are initialised away from their identity defaults."""

import torch
import torch.nn as nn

BATCH = 32
CHANNELS = 64
HEIGHT = 512
WIDTH = 512


class Model(nn.Module):
    def __init__(self, channels: int):
        super().__init__()
        self.bn = nn.BatchNorm2d(channels)
        with torch.no_grad():
            self.bn.weight.normal_(1.0, 0.2)
            self.bn.bias.normal_(0.0, 0.2)
            self.bn.running_mean.normal_(0.0, 0.2)
            self.bn.running_var.normal_(0.0, 0.2).abs_().add_(0.5)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.bn(x)


def get_inputs():
    return [torch.randn(BATCH, CHANNELS, HEIGHT, WIDTH)]


def get_init_inputs():
    return [CHANNELS]
