"""KernelBench level 2, 80_Gemm_Max_Subtract_GELU (x: (128, 512) fp32; Linear(512 -> 1024); max over dim 1 ->
(128, 1); minus its mean over dim 1 (a mean over one element); exact GELU -> (128, 1)).

The GEMM stays cuBLAS fp32 (``F.linear``, the reference's own call); the rest is ONE Triton kernel, one program per
row: the row max ``m``, then ``gelu(m - m)`` (the mean over the size-1 dim is ``m`` itself; ``m - m`` is 0 for a
finite max and NaN otherwise, as in the reference), one write of the (128, 1) result. Both are replayed through a
CUDA graph (``CUDAGraphForward``): per call one input copy, one graph launch and one output copy of host time,
against eager's addmm, max, mean, sub and gelu launches. Other ``max_dim`` values run the PyTorch form.

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
def _tail_kernel(y_ptr, out_ptr, N, BN: tl.constexpr):
    row = tl.program_id(0)
    rn = tl.arange(0, BN)
    v = tl.load(y_ptr + row.to(tl.int64) * N + rn, mask=rn < N, other=-float("inf"))
    m = tl.max(v, 0)
    tl.store(out_ptr + row, gelu(m - m))


class ModelNew(nn.Module):
    def __init__(self, in_features, out_features, max_dim):
        super().__init__()
        self.gemm = nn.Linear(in_features, out_features)
        self.max_dim = max_dim
        self._graph = CUDAGraphForward(self._forward)

    def _triton(self, x: torch.Tensor) -> torch.Tensor:
        y = F.linear(x, self.gemm.weight, self.gemm.bias).contiguous()
        m, n = y.shape
        out = torch.empty((m, 1), device=y.device, dtype=torch.float32)
        _tail_kernel[(m,)](y, out, n, BN=triton.next_power_of_2(n), num_warps=4)
        return out

    def _forward(self, x: torch.Tensor) -> torch.Tensor:
        if (x.is_cuda and x.dtype == torch.float32 and x.dim() == 2 and self.max_dim in (1, -1)
                and self.gemm.out_features <= 16384):
            return self._triton(x)
        v = torch.amax(F.linear(x, self.gemm.weight, self.gemm.bias), dim=self.max_dim, keepdim=True)
        return F.gelu(v - v.mean(dim=1, keepdim=True))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self._graph(x)
