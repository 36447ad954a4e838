"""Per-sample smooth L1 (Huber-style) loss: F.smooth_l1_loss(reduction='none') averaged over features.

Quadratic for |d| < beta, linear beyond. predictions and targets are float32 (BATCH, DIM),
standard-normal scaled by 1.5 so both regimes occur. Output is float32 (BATCH,)."""

import torch
import torch.nn as nn
import torch.nn.functional as F

BATCH = 16384
DIM = 32768
BETA = 1.0


class Model(nn.Module):
    def __init__(self, beta: float):
        super().__init__()
        self.beta = beta

    def forward(self, predictions: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
        loss = F.smooth_l1_loss(predictions, targets, beta=self.beta, reduction="none")
        return loss.mean(dim=-1)


def get_inputs():
    return [torch.randn(BATCH, DIM) * 1.5, torch.randn(BATCH, DIM) * 1.5]


def get_init_inputs():
    return [BETA]
