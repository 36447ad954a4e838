"""Per-sample mean squared error: F.mse_loss(reduction='none') averaged over the feature dim.

predictions and targets are float32 (BATCH, DIM), standard-normal. Output is float32 (BATCH,);
a mean over the whole batch would barely change between random input draws."""
import torch
import torch.nn as nn
import torch.nn.functional as F
BATCH = 256
DIM = 4096

class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, predictions: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
        return F.mse_loss(predictions, targets, reduction='none').mean(dim=-1)