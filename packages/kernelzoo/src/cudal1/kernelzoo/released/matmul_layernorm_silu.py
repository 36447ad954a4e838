"""Released solution for built-in task `matmul_layernorm_silu`: cuBLAS fp32 GEMM without bias, then one fused
Triton pass (linear bias + layer norm + SiLU) in place on the GEMM output."""

import torch
import torch.nn as nn

from cudal1.kernelzoo.ops.add_layer_norm import add_layer_norm_


class ModelNew(nn.Module):
    def __init__(self, in_features: int, out_features: int):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)
        self.norm = nn.LayerNorm(out_features)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = torch.matmul(x, self.linear.weight.t())
        return add_layer_norm_(y, None, self.norm.weight, self.norm.bias, pre_bias=self.linear.bias,
                               eps=self.norm.eps, activation="silu")
