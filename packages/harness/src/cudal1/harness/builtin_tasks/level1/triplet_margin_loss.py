"""Per-sample triplet margin loss (nn.TripletMarginLoss, L2 distance, reduction='none').

max(d(a, p) - d(a, n) + margin, 0) per row. anchor, positive and negative are float32
(BATCH, DIM); positive = anchor + noise so both hinge regimes occur. Output is float32 (BATCH,)."""

import torch
import torch.nn as nn

BATCH = 65536
DIM = 2048
MARGIN = 1.0


class Model(nn.Module):
    def __init__(self, margin: float):
        super().__init__()
        self.loss = nn.TripletMarginLoss(margin=margin, p=2.0, reduction="none")

    def forward(self, anchor: torch.Tensor, positive: torch.Tensor, negative: torch.Tensor) -> torch.Tensor:
        return self.loss(anchor, positive, negative)


def get_inputs():
    anchor = torch.randn(BATCH, DIM)
    positive = anchor + torch.randn(BATCH, DIM) * 1.4
    negative = torch.randn(BATCH, DIM)
    return [anchor, positive, negative]


def get_init_inputs():
    return [MARGIN]
