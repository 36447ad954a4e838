"""Leaky ReLU activation: x if x > 0 else negative_slope * x.

Elementwise over a float32 (BATCH, DIM) tensor with standard-normal entries (both signs)."""

import torch
import torch.nn as nn
import torch.nn.functional as F

BATCH = 16384
DIM = 32768
NEGATIVE_SLOPE = 0.01


class Model(nn.Module):
    def __init__(self, negative_slope: float):
        super().__init__()
        self.negative_slope = negative_slope

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.leaky_relu(x, negative_slope=self.negative_slope)


def get_inputs():
    return [torch.randn(BATCH, DIM)]


def get_init_inputs():
    return [NEGATIVE_SLOPE]
