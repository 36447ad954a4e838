"""Released solution for built-in task `layernorm_modulate`: adaLN (layer norm, per-sample scale and shift)
in one fused Triton pass: one read of x, one write."""

import torch
import torch.nn as nn

from cudal1.kernelzoo.ops.layer_norm_modulate import layer_norm_modulate


class ModelNew(nn.Module):
    def __init__(self, dim: int):
        super().__init__()
        self.norm = nn.LayerNorm(dim, elementwise_affine=False, eps=1e-6)

    def forward(self, x: torch.Tensor, shift: torch.Tensor, scale: torch.Tensor) -> torch.Tensor:
        return layer_norm_modulate(x, shift, scale, self.norm.eps)
