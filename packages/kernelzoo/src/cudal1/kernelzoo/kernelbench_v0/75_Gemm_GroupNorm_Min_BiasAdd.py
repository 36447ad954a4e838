"""KernelBench level 2, 75_Gemm_GroupNorm_Min_BiasAdd (x: (128, 512) fp32; Linear(512 -> 256); GroupNorm(8, 256);
min over the 256 features -> (128, 1); ``+ bias`` (1, 256, 1, 1), which broadcasts to (1, 256, 128, 1)).

The GEMM stays cuBLAS fp32 (``F.linear``, the reference's own call); the rest is ONE Triton kernel, one program per
row holding its 256 values as an (8 groups, 32) register tile: group mean, biased variance of the centred values,
normalisation and affine, the row min, and the 256 broadcast outputs ``min + bias[c]`` written at ``(0, c, row,
0)``. Both are replayed through a CUDA graph (``CUDAGraphForward``): per call one input copy, one graph launch and
one output copy of host time, against eager's addmm, group norm, min and add launches.

Measured figures: ``kernelbench_v0/measured.json`` (per GPU and baseline, checked against the results stores);
the figures this docstring once carried: benchmarks/results/2026-12-05-kernelbench-v0-docstring-figures.md.
"""

import torch
import torch.nn as nn
import torch.nn.functional as F
import triton
import triton.language as tl

from cudal1.kernelzoo.blocks.cudagraph import CUDAGraphForward


@triton.jit
def _tail_kernel(y_ptr, gw_ptr, gb_ptr, b_ptr, out_ptr, M, C, G, CG, eps, BG: tl.constexpr, BCG: tl.constexpr):
    row = tl.program_id(0)
    gi = tl.arange(0, BG)
    j = tl.arange(0, BCG)
    mask = (gi < G)[:, None] & (j < CG)[None, :]
    c = gi[:, None] * CG + j[None, :]
    v = tl.load(y_ptr + row.to(tl.int64) * C + c, mask=mask, other=0.0)
    mean = tl.sum(v, 1) / CG
    d = tl.where(mask, v - mean[:, None], 0.0)
    var = tl.sum(d * d, 1) / CG
    o = d / tl.sqrt(var + eps)[:, None] * tl.load(gw_ptr + c, mask=mask, other=0.0) \
        + tl.load(gb_ptr + c, mask=mask, other=0.0)
    mn = tl.min(tl.min(tl.where(mask, o, float("inf")), 1), 0)
    b = tl.load(b_ptr + c, mask=mask, other=0.0)
    tl.store(out_ptr + c.to(tl.int64) * M + row, mn + b, mask=mask)


class ModelNew(nn.Module):
    def __init__(self, in_features, out_features, num_groups, bias_shape):
        super().__init__()
        self.gemm = nn.Linear(in_features, out_features)
        self.group_norm = nn.GroupNorm(num_groups, out_features)
        self.bias = nn.Parameter(torch.randn(bias_shape))
        self._graph = CUDAGraphForward(self._forward)

    def _fits(self, x: torch.Tensor) -> bool:
        gn = self.group_norm
        return (x.is_cuda and x.dtype == torch.float32 and x.dim() == 2 and gn.affine and gn.num_channels <= 16384
                and tuple(self.bias.shape) == (1, gn.num_channels, 1, 1))

    def _triton(self, x: torch.Tensor) -> torch.Tensor:
        gn = self.group_norm
        y = F.linear(x, self.gemm.weight, self.gemm.bias).contiguous()
        m, c = y.shape
        g = gn.num_groups
        cg = c // g
        out = torch.empty((1, c, m, 1), device=y.device, dtype=torch.float32)
        _tail_kernel[(m,)](y, gn.weight, gn.bias, self.bias, out, m, c, g, cg, float(gn.eps),
                           BG=triton.next_power_of_2(g), BCG=triton.next_power_of_2(cg), num_warps=4)
        return out

    def _forward(self, x: torch.Tensor) -> torch.Tensor:
        if self._fits(x):
            return self._triton(x)
        v = self.group_norm(F.linear(x, self.gemm.weight, self.gemm.bias))
        return torch.amin(v, dim=1, keepdim=True) + self.bias

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self._graph(x)
