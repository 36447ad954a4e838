"""KernelBench level 2, 62_Matmul_GroupNorm_LeakyReLU_Sum (x: (128, 512) fp32; Linear(512 -> 256);
GroupNorm(8, 256, eps); LeakyReLU(0.01); ``x + x`` -> (128, 256)).

The GEMM stays cuBLAS fp32 (``F.linear``, the reference's own call); the rest is ONE Triton kernel, one program per
row holding its 256 values as an (8 groups, 32) register tile: group mean, biased variance of the centred values,
normalisation and affine, leaky ReLU and the doubling (``v + v``, exact), one write of the output. Both are
replayed through a CUDA graph (``CUDAGraphForward``): per call one input copy, one graph launch and one output copy
of host time, against eager's addmm, group norm, leaky relu and add launches.

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
def _tail_kernel(y_ptr, gw_ptr, gb_ptr, out_ptr, C, G, CG, eps, slope, BG: tl.constexpr, BCG: tl.constexpr):
    row = tl.program_id(0)
    gi = tl.arange(0, BG)
    j = tl.arange(0, BCG)
    mask = (gi < G)[:, None] & (j < CG)[None, :]
    c = gi[:, None] * CG + j[None, :]
    base = row.to(tl.int64) * C
    v = tl.load(y_ptr + base + c, mask=mask, other=0.0)
    mean = tl.sum(v, 1) / CG
    d = tl.where(mask, v - mean[:, None], 0.0)
    var = tl.sum(d * d, 1) / CG
    o = d / tl.sqrt(var + eps)[:, None] * tl.load(gw_ptr + c, mask=mask, other=0.0) \
        + tl.load(gb_ptr + c, mask=mask, other=0.0)
    o = tl.where(o > 0, o, o * slope)
    tl.store(out_ptr + base + c, o + o, mask=mask)


class ModelNew(nn.Module):
    def __init__(self, input_size, hidden_size, num_groups, eps=1e-5, negative_slope=0.01):
        super().__init__()
        self.fc = nn.Linear(input_size, hidden_size)
        self.gn = nn.GroupNorm(num_groups=num_groups, num_channels=hidden_size, eps=eps)
        self.leaky_relu = nn.LeakyReLU(negative_slope=negative_slope)
        self._graph = CUDAGraphForward(self._forward)

    def _triton(self, x: torch.Tensor) -> torch.Tensor:
        gn = self.gn
        y = F.linear(x, self.fc.weight, self.fc.bias).contiguous()
        m, c = y.shape
        g = gn.num_groups
        cg = c // g
        out = torch.empty_like(y)
        _tail_kernel[(m,)](y, gn.weight, gn.bias, out, c, g, cg, float(gn.eps), float(self.leaky_relu.negative_slope),
                           BG=triton.next_power_of_2(g), BCG=triton.next_power_of_2(cg), num_warps=4)
        return out

    def _forward(self, x: torch.Tensor) -> torch.Tensor:
        if x.is_cuda and x.dtype == torch.float32 and x.dim() == 2 and self.gn.affine and self.gn.num_channels <= 16384:
            return self._triton(x)
        v = self.leaky_relu(self.gn(F.linear(x, self.fc.weight, self.fc.bias)))
        return v + v

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self._graph(x)
