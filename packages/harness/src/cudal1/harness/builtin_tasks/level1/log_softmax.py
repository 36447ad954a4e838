"""Log-softmax over the last dimension of a float32 (BATCH, DIM) tensor.

Inputs are standard-normal scaled by 3 (both signs, a wider range of logits)."""

import torch
import torch.nn as nn

BATCH = 65536
DIM = 8192


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.log_softmax(x, dim=-1)


def get_inputs():
    return [torch.randn(BATCH, DIM) * 3.0]


def get_init_inputs():
    return []
