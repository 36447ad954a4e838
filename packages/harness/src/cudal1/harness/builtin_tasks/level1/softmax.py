"""Softmax over the last dimension of a float32 (BATCH, DIM) tensor.

Inputs are standard-normal (both signs)."""

import torch
import torch.nn as nn

BATCH = 32768
DIM = 16384


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.softmax(x, dim=-1)


def get_inputs():
    return [torch.randn(BATCH, DIM)]


def get_init_inputs():
    return []
