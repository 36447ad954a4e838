"""Released solution for built-in task `smooth_l1_loss`: the zoo's one-pass per-row smooth L1 loss (reads
both inputs once, writes one value per row; no (BATCH, DIM) temporary)."""

import torch
import torch.nn as nn

from cudal1.kernelzoo.ops.smooth_l1_loss import smooth_l1_loss


class ModelNew(nn.Module):
    def __init__(self, beta: float):
        super().__init__()
        self.beta = beta

    def forward(self, predictions: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
        return smooth_l1_loss(predictions, targets, self.beta)
