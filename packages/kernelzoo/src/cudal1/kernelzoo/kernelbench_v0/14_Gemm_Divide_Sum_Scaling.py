"""KernelBench level 2, 14_Gemm_Divide_Sum_Scaling (x: (128, 10) fp32; ``x @ W^T`` with W (20, 10); ``/ 2``; sum
over the 20 features (keepdim); ``* s`` with s = 1.5 -> (128, 1)).

Exact algebra (every input and parameter value): ``s/2 * sum_j x . W_j = s/2 * x . (sum_j W_j)``, so the GEMM
collapses to a column sum of W (one small reduction) and a (128, 10) x (10, 1) product that cuBLAS scales by
``alpha = s / 2`` in its epilogue (``addmm`` with ``beta = 0``: the ``input`` argument, a (128, 1) view of x,
is ignored by definition, NaNs included, and only fixes the output shape). Only the order of the fp32 sums
changes. Eager runs transpose, GEMM, divide, sum and multiply: four kernels for a few KB, launch-bound; two
launches here.

Measured figures: ``kernelbench_v0/measured.json`` (per GPU and baseline, checked against the results stores);
the figures this docstring once carried: benchmarks/results/2026-12-05-kernelbench-v0-docstring-figures.md.
"""

import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self, input_size, hidden_size, scaling_factor):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(hidden_size, input_size))
        self.scaling_factor = scaling_factor

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        wsum = self.weight.sum(0, keepdim=True)  # (1, input_size)
        alpha = self.scaling_factor / 2
        if x.dim() != 2 or x.shape[1] == 0:
            return torch.matmul(x, wsum.t()) * alpha
        return torch.addmm(x[:, :1], x, wsum.t(), beta=0.0, alpha=alpha)
