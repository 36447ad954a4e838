"""KernelBench level 2, 88_Gemm_GroupNorm_Swish_Multiply_Swish (x: (128, 512) fp32; Linear(512 -> 1024);
GroupNorm(16 groups of 64 features, eps 1e-5, affine); ``v * sigmoid(v)``; ``* multiply_weight`` (1024,);
``v * sigmoid(v)`` -> (128, 1024)).

The GEMM stays in cuBLAS (F.linear with the module's weight and bias, full fp32) and ONE Triton kernel, a
program per row, does the whole tail in registers on a (16 groups x 64 features) tile: per-group mean and
centred variance (two passes over the registers, as GroupNorm's biased variance), normalise, affine, swish,
the multiply weight, swish, written in place over the GEMM's output. Eager runs the GEMM, the group norm,
and five elementwise kernels (sigmoid, multiply, multiply, sigmoid, multiply): launch-bound. Two launches here.

Measured figures: ``kernelbench_v0/measured.json`` (per GPU and baseline, checked against the results stores);
the figures this docstring once carried: benchmarks/results/2026-12-05-kernelbench-v0-docstring-figures.md.
"""

import torch
import torch.nn as nn
import torch.nn.functional as F
import triton
import triton.language as tl


@triton.jit
def _gn_swish_mul_swish_kernel(y_ptr, gamma_ptr, beta_ptr, mw_ptr, N, G, GS, eps,
                               BG: tl.constexpr, BS: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    g = tl.arange(0, BG)
    j = tl.arange(0, BS)
    m = (g < G)[:, None] & (j < GS)[None, :]
    f = g[:, None] * GS + j[None, :]  # feature index, (BG, BS) tile
    v = tl.load(y_ptr + row * N + f, mask=m, other=0.0)
    mean = tl.sum(v, 1) / GS
    d = tl.where(m, v - mean[:, None], 0.0)
    rstd = 1.0 / tl.sqrt(tl.sum(d * d, 1) / GS + eps)
    v = d * rstd[:, None] * tl.load(gamma_ptr + f, mask=m, other=0.0) + tl.load(beta_ptr + f, mask=m, other=0.0)
    v = v * (1.0 / (1.0 + tl.exp(-v)))
    v = v * tl.load(mw_ptr + f, mask=m, other=0.0)
    v = v * (1.0 / (1.0 + tl.exp(-v)))
    tl.store(y_ptr + row * N + f, v, mask=m)


class ModelNew(nn.Module):
    def __init__(self, in_features, out_features, num_groups, multiply_weight_shape):
        super().__init__()
        self.gemm = nn.Linear(in_features, out_features)
        self.group_norm = nn.GroupNorm(num_groups, out_features)
        self.multiply_weight = nn.Parameter(torch.randn(multiply_weight_shape))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        gn = self.group_norm
        nf = self.gemm.out_features
        G = gn.num_groups
        bg, bs = triton.next_power_of_2(G), triton.next_power_of_2(nf // G)
        if not (x.is_cuda and x.dtype == torch.float32 and x.dim() == 2 and gn.affine
                and self.multiply_weight.shape == (nf,) and bg * bs <= 16384):
            v = gn(self.gemm(x))
            v = v * torch.sigmoid(v) * self.multiply_weight
            return v * torch.sigmoid(v)
        return self._fused(x, G, bg, bs)

    def _fused(self, x: torch.Tensor, G: int, bg: int, bs: int) -> torch.Tensor:
        gn = self.group_norm
        nf = self.gemm.out_features
        y = F.linear(x, self.gemm.weight, self.gemm.bias)
        _gn_swish_mul_swish_kernel[(y.shape[0],)](y, gn.weight, gn.bias, self.multiply_weight, nf, G, nf // G,
                                                  gn.eps, BG=bg, BS=bs, num_warps=4)
        return y
