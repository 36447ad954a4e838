"""KernelBench level 2, 97_Matmul_BatchNorm_BiasAdd_Divide_Swish (x: (128, 1024) fp32; Linear(1024 -> 512);
BatchNorm1d(512) (eval: running statistics); ``+ bias`` (shape (1,)); ``/ divide_value``; ``v * sigmoid(v)``
-> (128, 512)).

The GEMM stays in cuBLAS (F.linear with the module's weight and bias, full fp32) and ONE Triton kernel, a
program per row, applies the whole tail in place on the GEMM's output, reading the batch norm's current running
mean, running variance, weight and bias inside the call: ``(v - mean) / sqrt(var + eps) * gamma + beta``,
the scalar bias, the division and swish. In training mode (batch statistics, running-stat updates) the module
runs the plain formula. Eager runs the GEMM, the batch norm, add, divide, sigmoid and multiply: six launches,
launch-bound; two launches here.

Measured figures: ``kernelbench_v0/measured.json`` (per GPU and baseline, checked against the results stores);
the figures this docstring once carried: benchmarks/results/2026-12-05-kernelbench-v0-docstring-figures.md.
"""

import torch
import torch.nn as nn
import torch.nn.functional as F
import triton
import triton.language as tl


@triton.jit
def _bn_bias_div_swish_kernel(y_ptr, rm_ptr, rv_ptr, gamma_ptr, beta_ptr, bias_ptr, N, eps, div,
                              BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    offs = tl.arange(0, BLOCK)
    m = offs < N
    v = tl.load(y_ptr + row * N + offs, mask=m, other=0.0)
    rm = tl.load(rm_ptr + offs, mask=m, other=0.0)
    rv = tl.load(rv_ptr + offs, mask=m, other=1.0)
    v = (v - rm) * (1.0 / tl.sqrt(rv + eps)) * tl.load(gamma_ptr + offs, mask=m, other=0.0) \
        + tl.load(beta_ptr + offs, mask=m, other=0.0)
    v = (v + tl.load(bias_ptr)) / div
    v = v * (1.0 / (1.0 + tl.exp(-v)))
    tl.store(y_ptr + row * N + offs, v, mask=m)


class ModelNew(nn.Module):
    def __init__(self, in_features, out_features, bn_eps=1e-5, bn_momentum=0.1, bias_shape=(1,), divide_value=1.0):
        super().__init__()
        self.matmul = nn.Linear(in_features, out_features)
        self.bn = nn.BatchNorm1d(out_features, eps=bn_eps, momentum=bn_momentum)
        self.bias = nn.Parameter(torch.randn(bias_shape))
        self.divide_value = divide_value

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        bn = self.bn
        nf = self.matmul.out_features
        if not (x.is_cuda and x.dtype == torch.float32 and x.dim() == 2 and not bn.training and bn.affine
                and bn.running_mean is not None and self.bias.numel() == 1 and nf <= 16384):
            v = bn(self.matmul(x))
            v = (v + self.bias) / self.divide_value
            return v * torch.sigmoid(v)
        return self._fused(x)

    def _fused(self, x: torch.Tensor) -> torch.Tensor:
        bn = self.bn
        nf = self.matmul.out_features
        y = F.linear(x, self.matmul.weight, self.matmul.bias)
        _bn_bias_div_swish_kernel[(y.shape[0],)](y, bn.running_mean, bn.running_var, bn.weight, bn.bias, self.bias,
                                                 nf, bn.eps, float(self.divide_value),
                                                 BLOCK=triton.next_power_of_2(nf), num_warps=4)
        return y
