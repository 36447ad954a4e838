"""Released solution for built-in task `layer_norm`: the zoo's last-dimension layer norm with the task's
affine weight and bias (kept in an ``nn.LayerNorm`` under the task's parameter names)."""

import torch
import torch.nn as nn

from cudal1.kernelzoo.ops.layer_norm import layer_norm


class ModelNew(nn.Module):
    def __init__(self, dim: int):
        super().__init__()
        self.norm = nn.LayerNorm(dim)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return layer_norm(x, self.norm.weight, self.norm.bias, self.norm.eps)
