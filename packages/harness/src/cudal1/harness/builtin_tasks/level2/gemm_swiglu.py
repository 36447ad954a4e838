"""SwiGLU gate of a gated feed-forward layer: silu(x @ W_gate^T) * (x @ W_up^T).

Two bias-free GEMMs sharing the input, then SiLU and an elementwise product.
x is float32 (TOKENS, DIM), standard-normal."""

import torch
import torch.nn as nn
import torch.nn.functional as F

TOKENS = 4096
DIM = 2048
HIDDEN = 4096


class Model(nn.Module):
    def __init__(self, dim: int, hidden: int):
        super().__init__()
        self.gate = nn.Linear(dim, hidden, bias=False)
        self.up = nn.Linear(dim, hidden, bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.silu(self.gate(x)) * self.up(x)


def get_inputs():
    return [torch.randn(TOKENS, DIM)]


def get_init_inputs():
    return [DIM, HIDDEN]
