"""KernelBench level 2, 76_Gemm_Add_ReLU (x: (128, 1024) fp32; Linear(1024 -> 512, no bias); ``+ bias`` (512,);
ReLU -> (128, 512)).

``relu(x W^T + bias)`` is exactly what ``torch._addmm_activation(bias, x, W^T)`` computes: on CUDA one cuBLASLt
GEMM with the bias and the ReLU in its epilogue (full fp32, the module's own weight and bias parameter). Eager
runs the bias-free GEMM, an add and a ReLU: three launches and two 256 KB temporaries; the call is launch-bound,
one launch here.

Measured figures: ``kernelbench_v0/measured.json`` (per GPU and baseline, checked against the results stores);
the figures this docstring once carried: benchmarks/results/2026-12-05-kernelbench-v0-docstring-figures.md.
"""

import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self, in_features, out_features, bias_shape):
        super().__init__()
        self.gemm = nn.Linear(in_features, out_features, bias=False)
        self.bias = nn.Parameter(torch.randn(bias_shape))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        w = self.gemm.weight
        if not (x.dim() == 2 and self.bias.dim() == 1 and self.bias.shape[0] == w.shape[0]):
            return torch.relu(x @ w.t() + self.bias)
        return torch._addmm_activation(self.bias, x, w.t())
