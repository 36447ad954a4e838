"""Stacked GRU sequence encoder (nn.GRU, batch_first); returns every step's top-layer output.

x is float32 (BATCH, SEQ, INPUT_SIZE), standard-normal; the initial hidden state is zero.
Output is (BATCH, SEQ, HIDDEN)."""

import torch
import torch.nn as nn

BATCH = 64
SEQ = 128
INPUT_SIZE = 512
HIDDEN = 512
LAYERS = 2


class Model(nn.Module):
    def __init__(self, input_size: int, hidden: int, layers: int):
        super().__init__()
        self.gru = nn.GRU(input_size, hidden, num_layers=layers, batch_first=True)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out, _ = self.gru(x)
        return out


def get_inputs():
    return [torch.randn(BATCH, SEQ, INPUT_SIZE)]


def get_init_inputs():
    return [INPUT_SIZE, HIDDEN, LAYERS]
