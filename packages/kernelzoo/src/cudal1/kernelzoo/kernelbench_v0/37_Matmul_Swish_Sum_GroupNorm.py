"""KernelBench level 2, 37_Matmul_Swish_Sum_GroupNorm (x: (128, 512) fp32; Linear(512 -> 1024); ``sigmoid(v) * v``;
``+ bias`` (1024,); GroupNorm(32 groups of 32 features, eps 1e-5, affine) -> (128, 1024)).

Launch-bound (512 KB output): the GEMM stays in cuBLAS (F.linear with the module's weight and bias, fp32, no
TF32) and ONE Triton kernel, a program per row, does the whole tail in registers: swish, bias, per-group mean and
centred variance (two-pass in registers) over a (32 groups x 32 features) tile, normalise, affine, one write.
Eager runs sigmoid, multiply, add and the group norm after the addmm: four or more launches against one here.

Measured figures: ``kernelbench_v0/measured.json`` (per GPU and baseline, checked against the results stores);
the figures this docstring once carried: benchmarks/results/2026-12-05-kernelbench-v0-docstring-figures.md.
"""

import torch
import torch.nn as nn
import torch.nn.functional as F
import triton
import triton.language as tl


@triton.jit
def _swish_bias_gn_kernel(y_ptr, b_ptr, gamma_ptr, beta_ptr, out_ptr, F_, G, GS, eps,
                          BG: tl.constexpr, BS: tl.constexpr):
    row = tl.program_id(0)
    g = tl.arange(0, BG)
    j = tl.arange(0, BS)
    m = (g < G)[:, None] & (j < GS)[None, :]
    f = g[:, None] * GS + j[None, :]  # feature index, (BG, BS) tile
    base = row.to(tl.int64) * F_
    v = tl.load(y_ptr + base + f, mask=m, other=0.0)
    v = v * (1.0 / (1.0 + tl.exp(-v))) + tl.load(b_ptr + f, mask=m, other=0.0)
    mean = tl.sum(tl.where(m, v, 0.0), 1) / GS
    d = tl.where(m, v - mean[:, None], 0.0)
    rstd = 1.0 / tl.sqrt(tl.sum(d * d, 1) / GS + eps)
    gam = tl.load(gamma_ptr + f, mask=m, other=0.0)
    bet = tl.load(beta_ptr + f, mask=m, other=0.0)
    tl.store(out_ptr + base + f, d * rstd[:, None] * gam + bet, mask=m)


class ModelNew(nn.Module):
    def __init__(self, in_features, out_features, num_groups, bias_shape):
        super().__init__()
        self.matmul = nn.Linear(in_features, out_features)
        self.bias = nn.Parameter(torch.randn(bias_shape))
        self.group_norm = nn.GroupNorm(num_groups, out_features)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        gn = self.group_norm
        nf = self.matmul.out_features
        G = gn.num_groups
        bg, bs = triton.next_power_of_2(G), triton.next_power_of_2(nf // G)
        if not (x.is_cuda and x.dtype == torch.float32 and x.dim() == 2 and gn.affine
                and self.bias.numel() == nf and bg * bs <= 16384):
            y = self.matmul(x)
            return gn(torch.sigmoid(y) * y + self.bias)
        y = F.linear(x, self.matmul.weight, self.matmul.bias)
        _swish_bias_gn_kernel[(y.shape[0],)](y, self.bias, gn.weight, gn.bias, y, nf, G, nf // G, gn.eps,
                                             BG=bg, BS=bs, num_warps=4)
        return y
