"""Language-model head: log_softmax(x @ W^T + b) over a large vocabulary.

x is float32 (TOKENS, DIM), standard-normal."""

import torch
import torch.nn as nn

TOKENS = 2048
DIM = 1024
VOCAB = 32768


class Model(nn.Module):
    def __init__(self, dim: int, vocab: int):
        super().__init__()
        self.head = nn.Linear(dim, vocab)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.log_softmax(self.head(x), dim=-1)


def get_inputs():
    return [torch.randn(TOKENS, DIM)]


def get_init_inputs():
    return [DIM, VOCAB]
