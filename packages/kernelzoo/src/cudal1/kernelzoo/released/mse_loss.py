"""Released solution for built-in task `mse_loss`: the zoo's one-pass per-row MSE (reads predictions and
targets once, writes one value per row; no (BATCH, DIM) temporary)."""

import torch
import torch.nn as nn

from cudal1.kernelzoo.ops.mse_loss import mse_loss


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, predictions: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
        return mse_loss(predictions, targets)
