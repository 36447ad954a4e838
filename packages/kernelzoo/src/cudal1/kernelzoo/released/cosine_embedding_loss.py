"""Released solution for built-in task `cosine_embedding_loss`: the zoo's one-pass per-row cosine embedding
loss (dot product and both squared norms accumulated in one read of x1 and x2)."""

import torch
import torch.nn as nn

from cudal1.kernelzoo.ops.cosine_embedding_loss import cosine_embedding_loss


class ModelNew(nn.Module):
    def __init__(self, margin: float):
        super().__init__()
        self.margin = margin

    def forward(self, x1: torch.Tensor, x2: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        return cosine_embedding_loss(x1, x2, y, self.margin)
