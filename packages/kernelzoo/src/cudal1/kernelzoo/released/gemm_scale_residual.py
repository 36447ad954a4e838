"""Released solution for built-in task `gemm_scale_residual`: cuBLAS fp32 GEMM without bias, then one fused
Triton epilogue ``y = x + scale * (acc + b)`` in place on the GEMM output."""

import torch
import torch.nn as nn

from cudal1.kernelzoo.ops.bias_act import bias_act_


class ModelNew(nn.Module):
    def __init__(self, features: int, scale: float):
        super().__init__()
        self.linear = nn.Linear(features, features)
        self.scale = scale

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = torch.matmul(x, self.linear.weight.t())
        return bias_act_(y, bias=self.linear.bias, residual=x, scale=self.scale)
