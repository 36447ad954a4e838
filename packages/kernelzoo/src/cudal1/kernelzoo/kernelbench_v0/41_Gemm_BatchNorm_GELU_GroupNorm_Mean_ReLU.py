"""KernelBench level 2, 41_Gemm_BatchNorm_GELU_GroupNorm_Mean_ReLU (x: (128, 512) fp32; Linear(512 -> 1024);
BatchNorm1d(1024) in eval mode (running statistics); exact GELU; GroupNorm(8, 1024); mean over the 1024
features; ReLU -> (128, 1)).

The GEMM stays cuBLAS fp32 (``F.linear``, the reference's own call); everything after it is ONE Triton kernel, one
program per row holding its 1024 values as an (8 groups, 128) register tile: the batch norm from its running
statistics, GELU, the group statistics (mean, then the biased variance of the centred values, as GroupNorm), the
normalisation and affine, the feature mean and ReLU; only the (128, 1) result is written. Both are replayed
through a CUDA graph (``CUDAGraphForward``): per call one input copy, one graph launch and one output copy of host
time, against eager's addmm, batch norm, gelu, group norm (2 kernels), mean and relu launches. In training mode
(batch statistics) the PyTorch form runs. What remains: three launches of host time,
the small GEMM and a 0.5 MB pass.

Measured figures: ``kernelbench_v0/measured.json`` (per GPU and baseline, checked against the results stores);
the figures this docstring once carried: benchmarks/results/2026-12-05-kernelbench-v0-docstring-figures.md.
"""

import torch
import torch.nn as nn
import torch.nn.functional as F
import triton
import triton.language as tl

from cudal1.kernelzoo.blocks.cudagraph import CUDAGraphForward
from cudal1.kernelzoo.blocks.direct_conv import gelu


@triton.jit
def _tail_kernel(y_ptr, rm_ptr, rv_ptr, bw_ptr, bb_ptr, gw_ptr, gb_ptr, out_ptr, C, G, CG, bn_eps, gn_eps,
                 BG: tl.constexpr, BCG: tl.constexpr):
    row = tl.program_id(0)
    gi = tl.arange(0, BG)
    j = tl.arange(0, BCG)
    mask = (gi < G)[:, None] & (j < CG)[None, :]
    c = gi[:, None] * CG + j[None, :]
    v = tl.load(y_ptr + row.to(tl.int64) * C + c, mask=mask, other=0.0)
    rm = tl.load(rm_ptr + c, mask=mask, other=0.0)
    rv = tl.load(rv_ptr + c, mask=mask, other=1.0)
    bw = tl.load(bw_ptr + c, mask=mask, other=0.0)
    bb = tl.load(bb_ptr + c, mask=mask, other=0.0)
    v = gelu((v - rm) / tl.sqrt(rv + bn_eps) * bw + bb)
    mean = tl.sum(tl.where(mask, v, 0.0), 1) / CG
    d = tl.where(mask, v - mean[:, None], 0.0)
    var = tl.sum(d * d, 1) / CG
    o = d / tl.sqrt(var + gn_eps)[:, None] * tl.load(gw_ptr + c, mask=mask, other=0.0) \
        + tl.load(gb_ptr + c, mask=mask, other=0.0)
    tot = tl.sum(tl.sum(tl.where(mask, o, 0.0), 1), 0) / C
    tl.store(out_ptr + row, tl.maximum(tot, 0.0))


class ModelNew(nn.Module):
    def __init__(self, in_features, out_features, num_groups):
        super().__init__()
        self.gemm = nn.Linear(in_features, out_features)
        self.batch_norm = nn.BatchNorm1d(out_features)
        self.group_norm = nn.GroupNorm(num_groups, out_features)
        self._graph = CUDAGraphForward(self._forward)

    def _fits(self, x: torch.Tensor) -> bool:
        bn, gn = self.batch_norm, self.group_norm
        return (x.is_cuda and x.dtype == torch.float32 and x.dim() == 2 and not self.training
                and bn.affine and bn.track_running_stats and bn.running_mean is not None and gn.affine
                and gn.num_channels <= 16384)

    def _triton(self, x: torch.Tensor) -> torch.Tensor:
        bn, gn = self.batch_norm, self.group_norm
        y = F.linear(x, self.gemm.weight, self.gemm.bias).contiguous()
        m, c = y.shape
        g = gn.num_groups
        cg = c // g
        out = torch.empty((m, 1), device=y.device, dtype=torch.float32)
        _tail_kernel[(m,)](y, bn.running_mean, bn.running_var, bn.weight, bn.bias, gn.weight, gn.bias, out, c, g, cg,
                           float(bn.eps), float(gn.eps), BG=triton.next_power_of_2(g),
                           BCG=triton.next_power_of_2(cg), num_warps=4)
        return out

    def _forward(self, x: torch.Tensor) -> torch.Tensor:
        if self._fits(x):
            return self._triton(x)
        v = self.group_norm(F.gelu(self.batch_norm(F.linear(x, self.gemm.weight, self.gemm.bias))))
        return torch.relu(v.mean(dim=1, keepdim=True))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if self.training:
            return self._forward(x)
        return self._graph(x)
