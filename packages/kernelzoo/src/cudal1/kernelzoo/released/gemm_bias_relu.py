"""Released solution for built-in task `gemm_bias_relu`: cuBLAS fp32 GEMM without bias, then one fused
Triton epilogue (bias + ReLU) in place on the GEMM output."""

import torch
import torch.nn as nn

from cudal1.kernelzoo.ops.bias_act import bias_act_


class ModelNew(nn.Module):
    def __init__(self, in_features: int, out_features: int):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = torch.matmul(x, self.linear.weight.t())
        return bias_act_(y, bias=self.linear.bias, activation="relu")
