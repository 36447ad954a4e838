"""Per-sample cosine embedding loss (F.cosine_embedding_loss, reduction='none').

1 - cos(x1, x2) where y = 1, max(0, cos(x1, x2) - margin) where y = -1. x1 and x2 are float32
(BATCH, DIM), standard-normal; y is float32 of +1/-1 (from torch.randint). Output is float32 (BATCH,)."""

import torch
import torch.nn as nn
import torch.nn.functional as F

BATCH = 65536
DIM = 2048
MARGIN = 0.0


class Model(nn.Module):
    def __init__(self, margin: float):
        super().__init__()
        self.margin = margin

    def forward(self, x1: torch.Tensor, x2: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        return F.cosine_embedding_loss(x1, x2, y, margin=self.margin, reduction="none")


def get_inputs():
    y = torch.randint(0, 2, (BATCH,)).float() * 2.0 - 1.0
    return [torch.randn(BATCH, DIM), torch.randn(BATCH, DIM), y]


def get_init_inputs():
    return [MARGIN]
