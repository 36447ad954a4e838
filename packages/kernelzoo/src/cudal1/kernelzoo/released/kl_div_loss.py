"""Released solution for built-in task `kl_div_loss`: the zoo's one-pass per-row KL divergence (reads log_q
and p once, writes one value per row; no (BATCH, DIM) temporary)."""

import torch
import torch.nn as nn

from cudal1.kernelzoo.ops.kl_div_loss import kl_div_loss


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, log_q: torch.Tensor, p: torch.Tensor) -> torch.Tensor:
        return kl_div_loss(log_q, p)
