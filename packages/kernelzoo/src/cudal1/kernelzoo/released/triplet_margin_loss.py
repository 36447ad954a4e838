"""Released solution for built-in task `triplet_margin_loss`: the zoo's one-pass per-row triplet margin loss
(both squared L2 distances accumulated in one read of anchor, positive and negative)."""

import torch
import torch.nn as nn

from cudal1.kernelzoo.ops.triplet_margin_loss import triplet_margin_loss


class ModelNew(nn.Module):
    def __init__(self, margin: float):
        super().__init__()
        # same hyperparameters as the task's nn.TripletMarginLoss(margin, p=2.0, reduction="none")
        self.loss = nn.TripletMarginLoss(margin=margin, p=2.0, reduction="none")

    def forward(self, anchor: torch.Tensor, positive: torch.Tensor, negative: torch.Tensor) -> torch.Tensor:
        return triplet_margin_loss(anchor, positive, negative, self.loss.margin, self.loss.eps, self.loss.swap)
