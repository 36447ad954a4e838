"""Per-sample multi-label loss: BCE-with-logits of (x @ W^T + b) against 0/1 targets, mean per row.

x is float32 (BATCH, IN_FEATURES), standard-normal; targets are float32 0/1 labels
(BATCH, NUM_LABELS) drawn with torch.randint. Output is float32 (BATCH,)."""

import torch
import torch.nn as nn
import torch.nn.functional as F

BATCH = 16384
IN_FEATURES = 2048
NUM_LABELS = 2048


class Model(nn.Module):
    def __init__(self, in_features: int, num_labels: int):
        super().__init__()
        self.linear = nn.Linear(in_features, num_labels)

    def forward(self, x: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
        loss = F.binary_cross_entropy_with_logits(self.linear(x), targets, reduction="none")
        return loss.mean(dim=-1)


def get_inputs():
    return [torch.randn(BATCH, IN_FEATURES), torch.randint(0, 2, (BATCH, NUM_LABELS)).float()]


def get_init_inputs():
    return [IN_FEATURES, NUM_LABELS]
