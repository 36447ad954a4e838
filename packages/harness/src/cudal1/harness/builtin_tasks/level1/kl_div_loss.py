"""Per-sample KL divergence: F.kl_div(log_q, p, reduction='none') summed over the last dim.

log_q is a float32 (BATCH, DIM) row-wise log-softmax of normal noise; p is a row-wise softmax
of independent normal noise, so every entry of p is strictly positive. Output is float32
(BATCH,): KL(p_i || q_i) = sum_j p_ij * (log p_ij - log_q_ij)."""

import torch
import torch.nn as nn
import torch.nn.functional as F

BATCH = 16384
DIM = 16384


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, log_q: torch.Tensor, p: torch.Tensor) -> torch.Tensor:
        return F.kl_div(log_q, p, reduction="none").sum(dim=-1)


def get_inputs():
    log_q = torch.log_softmax(torch.randn(BATCH, DIM), dim=-1)
    p = torch.softmax(torch.randn(BATCH, DIM), dim=-1)
    return [log_q, p]


def get_init_inputs():
    return []
