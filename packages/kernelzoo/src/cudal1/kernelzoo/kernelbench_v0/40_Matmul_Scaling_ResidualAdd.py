"""KernelBench level 2, 40_Matmul_Scaling_ResidualAdd (x: (128, 64) fp32; Linear(64 -> 128); ``v * s + v`` with
``v`` the Linear's output (its detached clone) and s = 0.5 -> (128, 128)).

Exact algebra (every input and parameter value): ``v * s + v = (1 + s) v = (1 + s)(x W^T) + (1 + s) b``, which is
one ``addmm`` with ``alpha = beta = 1 + s`` on the module's own weight and bias (full fp32; only the rounding
of the scaling differs, by about one ulp). Eager runs the GEMM, a clone, a multiply and an add: four ops on a
few KB, launch-bound; one op here. An earlier, different attempt at this task was rejected `reference_drift`; this
one removes
three of the four ops.

Measured figures: ``kernelbench_v0/measured.json`` (per GPU and baseline, checked against the results stores);
the figures this docstring once carried: benchmarks/results/2026-12-05-kernelbench-v0-docstring-figures.md.
"""

import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self, in_features, out_features, scaling_factor):
        super().__init__()
        self.matmul = nn.Linear(in_features, out_features)
        self.scaling_factor = scaling_factor

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        lin = self.matmul
        c = 1.0 + self.scaling_factor
        if not (x.dim() == 2 and lin.bias is not None):
            v = lin(x)
            return v * self.scaling_factor + v
        return torch.addmm(lin.bias, x, lin.weight.t(), beta=c, alpha=c)
