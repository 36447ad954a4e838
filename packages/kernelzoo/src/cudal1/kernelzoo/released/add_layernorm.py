"""Released solution for built-in task `add_layernorm`: LN(x + residual) in one fused Triton pass (one read of
each input, one write), instead of an add (two reads, one write) and a layer norm (read, write)."""

import torch
import torch.nn as nn

from cudal1.kernelzoo.ops.add_layer_norm import add_layer_norm


class ModelNew(nn.Module):
    def __init__(self, dim: int):
        super().__init__()
        self.norm = nn.LayerNorm(dim)

    def forward(self, x: torch.Tensor, residual: torch.Tensor) -> torch.Tensor:
        return add_layer_norm(x, residual, self.norm.weight, self.norm.bias, eps=self.norm.eps)
