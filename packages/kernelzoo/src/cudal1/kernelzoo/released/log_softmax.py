"""Released solution for built-in task `log_softmax`: the zoo's last-dimension log-softmax (each 8192-long row held in registers: one read, one write)."""

import torch
import torch.nn as nn

from cudal1.kernelzoo.ops.log_softmax import log_softmax


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return log_softmax(x)
