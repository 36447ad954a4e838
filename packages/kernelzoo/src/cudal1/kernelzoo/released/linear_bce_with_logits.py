"""Released solution for built-in task `linear_bce_with_logits`: cuBLAS fp32 GEMM without bias, then one
fused Triton pass (bias + BCE-with-logits + row mean) reading the logits and targets once."""

import torch
import torch.nn as nn

from cudal1.kernelzoo.ops.bce_with_logits_mean import bce_with_logits_mean


class ModelNew(nn.Module):
    def __init__(self, in_features: int, num_labels: int):
        super().__init__()
        self.linear = nn.Linear(in_features, num_labels)

    def forward(self, x: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
        z = torch.matmul(x, self.linear.weight.t())
        return bce_with_logits_mean(z, targets, self.linear.bias)
