"""Released solution for built-in task `cross_entropy_loss`: the zoo's one-pass per-row cross-entropy (online
logsumexp over the logits plus one gathered target logit; no (BATCH, NUM_CLASSES) log-softmax temporary)."""

import torch
import torch.nn as nn

from cudal1.kernelzoo.ops.cross_entropy_loss import cross_entropy_loss


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, logits: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
        return cross_entropy_loss(logits, targets)
