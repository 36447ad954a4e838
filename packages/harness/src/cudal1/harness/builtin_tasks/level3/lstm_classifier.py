"""Sequence classifier: stacked LSTM, then a linear layer on the last time step's output.

nn.LSTM with batch_first; the linear layer reads the top layer's output at the last step.

x is float32 (BATCH, SEQ, INPUT_SIZE), standard-normal; initial states are zero.
Output is (BATCH, NUM_CLASSES)."""

import torch
import torch.nn as nn

BATCH = 64
SEQ = 128
INPUT_SIZE = 256
HIDDEN = 512
LAYERS = 2
NUM_CLASSES = 16


class Model(nn.Module):
    def __init__(self, input_size: int, hidden: int, layers: int, num_classes: int):
        super().__init__()
        self.lstm = nn.LSTM(input_size, hidden, num_layers=layers, batch_first=True)
        self.fc = nn.Linear(hidden, num_classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out, _ = self.lstm(x)
        return self.fc(out[:, -1, :])


def get_inputs():
    return [torch.randn(BATCH, SEQ, INPUT_SIZE)]


def get_init_inputs():
    return [INPUT_SIZE, HIDDEN, LAYERS, NUM_CLASSES]
