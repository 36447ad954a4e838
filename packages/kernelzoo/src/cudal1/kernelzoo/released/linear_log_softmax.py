"""Released solution for built-in task `linear_log_softmax`: cuBLAS fp32 GEMM with the bias (addmm), then the
zoo's one-pass Triton log-softmax (rows of 32768 held in registers: one read, one write)."""

import torch
import torch.nn as nn

from cudal1.kernelzoo.ops.log_softmax import log_softmax


class ModelNew(nn.Module):
    def __init__(self, dim: int, vocab: int):
        super().__init__()
        self.head = nn.Linear(dim, vocab)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        z = torch.addmm(self.head.bias, x, self.head.weight.t())
        return log_softmax(z)
