"""KernelBench level 2, 18_Matmul_Sum_Max_AvgPool_LogSumExp_LogSumExp (x: (128, 10) fp32; Linear(10 -> 5), sum
over the 5 features (keepdim) -> (128, 1), then max, mean, logsumexp, logsumexp, each over that size-1 dim).

Exact algebra, for every input and parameter value: the max, mean and logsumexp of a single element are the
element itself (logsumexp(v) = v + log(exp(v - v)) = v), so the output is the row sum of the linear layer,
and ``sum_j (x . W_j + b_j) = x . (sum_j W_j) + sum_j b_j`` (only the order of fp32 sums changes). This runs
one addmm of x with the column-summed weight (1, 10) and summed bias, three small launches in all, where eager
runs the GEMM, the sum, and four reductions (logsumexp alone is several kernels): launch-bound either way.

Measured figures: ``kernelbench_v0/measured.json`` (per GPU and baseline, checked against the results stores);
the figures this docstring once carried: benchmarks/results/2026-12-05-kernelbench-v0-docstring-figures.md.
"""

import torch
import torch.nn as nn
import torch.nn.functional as F


class ModelNew(nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        lin = self.linear
        return F.linear(x, lin.weight.sum(0, keepdim=True), lin.bias.sum(0, keepdim=True))  # (batch, 1)
