"""Post-norm transformer sub-layer output: LayerNorm(x + Dropout(Linear(x))).

Dropout (p = DROPOUT) is the identity in eval mode, where the harness runs models.
x is float32 (BATCH, SEQ, DIM), standard-normal."""

import torch
import torch.nn as nn

BATCH = 8
SEQ = 2048
DIM = 2048
DROPOUT = 0.1


class Model(nn.Module):
    def __init__(self, dim: int, dropout: float):
        super().__init__()
        self.linear = nn.Linear(dim, dim)
        self.dropout = nn.Dropout(dropout)
        self.norm = nn.LayerNorm(dim)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.norm(x + self.dropout(self.linear(x)))


def get_inputs():
    return [torch.randn(BATCH, SEQ, DIM)]


def get_init_inputs():
    return [DIM, DROPOUT]
