"""Adaptive LayerNorm modulation (DiT-style): LN(x) * (1 + scale[:, None]) + shift[:, None].

LayerNorm has no affine parameters; shift and scale are per-sample conditioning vectors.
x is float32 (BATCH, SEQ, DIM); shift and scale are float32 (BATCH, DIM); all standard-normal."""

import torch
import torch.nn as nn

BATCH = 16
SEQ = 4096
DIM = 4096


class Model(nn.Module):
    def __init__(self, dim: int):
        super().__init__()
        self.norm = nn.LayerNorm(dim, elementwise_affine=False, eps=1e-6)

    def forward(self, x: torch.Tensor, shift: torch.Tensor, scale: torch.Tensor) -> torch.Tensor:
        return self.norm(x) * (1 + scale.unsqueeze(1)) + shift.unsqueeze(1)


def get_inputs():
    return [torch.randn(BATCH, SEQ, DIM), torch.randn(BATCH, DIM), torch.randn(BATCH, DIM)]


def get_init_inputs():
    return [DIM]
