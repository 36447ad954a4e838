"""Softplus activation: log(1 + exp(beta * x)) / beta, linear above the threshold.

Elementwise over a float32 (BATCH, DIM) tensor with standard-normal entries (both signs)."""

import torch
import torch.nn as nn
import torch.nn.functional as F

BATCH = 16384
DIM = 32768
BETA = 1.0
THRESHOLD = 20.0


class Model(nn.Module):
    def __init__(self, beta: float, threshold: float):
        super().__init__()
        self.beta = beta
        self.threshold = threshold

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.softplus(x, beta=self.beta, threshold=self.threshold)


def get_inputs():
    return [torch.randn(BATCH, DIM)]


def get_init_inputs():
    return [BETA, THRESHOLD]
