"""GELU activation (exact, erf form): x * Phi(x).

Elementwise over a float32 (BATCH, DIM) tensor with standard-normal entries (both signs)."""

import torch
import torch.nn as nn
import torch.nn.functional as F

BATCH = 16384
DIM = 32768


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.gelu(x)


def get_inputs():
    return [torch.randn(BATCH, DIM)]


def get_init_inputs():
    return []
