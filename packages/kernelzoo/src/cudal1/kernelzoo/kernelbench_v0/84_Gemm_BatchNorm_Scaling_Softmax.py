"""KernelBench level 2, 84_Gemm_BatchNorm_Scaling_Softmax (x: (128, 1024) fp32; Linear(1024 -> 512);
BatchNorm1d(512) (eval: running statistics); ``scale * v`` (scale of shape (1,)); softmax over the features
-> (128, 512)).

The GEMM stays in cuBLAS (F.linear with the module's weight and bias, full fp32) and ONE Triton kernel, a
program per row, does the whole tail in place on the GEMM's output, reading the batch norm's current running
mean, running variance, weight and bias and the scale inside the call: ``(v - mean) / sqrt(var + eps) * gamma
+ beta``, the scale, and a max-shifted softmax over the row. In training mode (batch statistics, running-stat
updates) the module runs the plain formula. (A single-kernel GEMM would leave 8 programs of 16 full rows on the
132 SMs; cuBLAS plus one row pass is the better split.) Eager runs the GEMM, the batch norm, the multiply and
the softmax: four ops, launch-bound; two launches here.

Measured figures: ``kernelbench_v0/measured.json`` (per GPU and baseline, checked against the results stores);
the figures this docstring once carried: benchmarks/results/2026-12-05-kernelbench-v0-docstring-figures.md.
"""

import torch
import torch.nn as nn
import torch.nn.functional as F
import triton
import triton.language as tl


@triton.jit
def _bn_scale_softmax_kernel(y_ptr, rm_ptr, rv_ptr, g_ptr, be_ptr, s_ptr, N, eps, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    offs = tl.arange(0, BLOCK)
    m = offs < N
    v = tl.load(y_ptr + row * N + offs, mask=m, other=0.0)
    rstd = 1.0 / tl.sqrt(tl.load(rv_ptr + offs, mask=m, other=1.0) + eps)
    v = (v - tl.load(rm_ptr + offs, mask=m, other=0.0)) * (tl.load(g_ptr + offs, mask=m, other=0.0) * rstd) \
        + tl.load(be_ptr + offs, mask=m, other=0.0)
    v = tl.load(s_ptr) * v
    v = tl.where(m, v, float("-inf"))
    e = tl.exp(v - tl.max(v, 0))
    tl.store(y_ptr + row * N + offs, e / tl.sum(e, 0), mask=m)


class ModelNew(nn.Module):
    def __init__(self, in_features, out_features, bn_eps=1e-5, bn_momentum=0.1, scale_shape=(1,)):
        super().__init__()
        self.gemm = nn.Linear(in_features, out_features)
        self.bn = nn.BatchNorm1d(out_features, eps=bn_eps, momentum=bn_momentum)
        self.scale = nn.Parameter(torch.ones(scale_shape))
        self.softmax = nn.Softmax(dim=1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        bn = self.bn
        if not (x.is_cuda and x.dtype == torch.float32 and x.dim() == 2 and not bn.training and bn.affine
                and bn.running_mean is not None and self.scale.numel() == 1 and self.scale.dim() <= 1
                and self.gemm.out_features <= 16384):
            return self.softmax(self.scale * bn(self.gemm(x)))
        return self._fused(x)

    def _fused(self, x: torch.Tensor) -> torch.Tensor:
        bn = self.bn
        nf = self.gemm.out_features
        y = F.linear(x, self.gemm.weight, self.gemm.bias)
        _bn_scale_softmax_kernel[(y.shape[0],)](y, bn.running_mean, bn.running_var, bn.weight, bn.bias, self.scale,
                                                nf, bn.eps, BLOCK=max(16, triton.next_power_of_2(nf)), num_warps=4)
        return y
