"""Released solution for built-in task `linear_dropout_residual_layernorm`: cuBLAS fp32 GEMM without bias,
then one fused Triton pass (linear bias + residual x + layer norm) in place on the GEMM output. Dropout is
the identity in eval mode, where the harness runs models; in training mode the dropout is applied first."""

import torch
import torch.nn as nn

from cudal1.kernelzoo.ops.add_layer_norm import add_layer_norm_


class ModelNew(nn.Module):
    def __init__(self, dim: int, dropout: float):
        super().__init__()
        self.linear = nn.Linear(dim, dim)
        self.dropout = nn.Dropout(dropout)
        self.norm = nn.LayerNorm(dim)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if self.training and self.dropout.p > 0:
            y = self.dropout(self.linear(x)).contiguous()
            return add_layer_norm_(y, x, self.norm.weight, self.norm.bias, eps=self.norm.eps)
        y = torch.matmul(x, self.linear.weight.t())
        return add_layer_norm_(y, x, self.norm.weight, self.norm.bias, pre_bias=self.linear.bias,
                               eps=self.norm.eps)
