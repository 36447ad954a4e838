"""KernelBench level 2, 98_Matmul_AvgPool_GELU_Scale_Max (x: (128, 512) fp32; Linear(512 -> 256); AvgPool1d(4)
over the features -> (128, 64); exact GELU; ``* 2.0``; max over the 64 -> (128,)).

The GEMM stays cuBLAS fp32 (``F.linear``, the reference's own call); the rest is ONE Triton kernel, one program per
row holding its pooled features as a (64 windows, 4) register tile: window mean (sum / 4, as the pool does; a
trailing partial window is dropped, as the pool does), GELU, scale and the row max; one write of the (128,)
result. Both are replayed through a CUDA graph (``CUDAGraphForward``): per call one input copy, one graph launch
and one output copy of host time, against eager's addmm, pool, gelu, mul and max launches.

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
def _tail_kernel(y_ptr, out_ptr, N, NP, PK, scale, BP: tl.constexpr, BK: tl.constexpr):
    row = tl.program_id(0)
    q = tl.arange(0, BP)
    k = tl.arange(0, BK)
    mask = (q < NP)[:, None] & (k < PK)[None, :]
    v = tl.load(y_ptr + row.to(tl.int64) * N + q[:, None] * PK + k[None, :], mask=mask, other=0.0)
    p = gelu(tl.sum(v, 1) / PK) * scale
    tl.store(out_ptr + row, tl.max(tl.where(q < NP, p, -float("inf")), 0))


class ModelNew(nn.Module):
    def __init__(self, in_features, out_features, pool_kernel_size, scale_factor):
        super().__init__()
        self.matmul = nn.Linear(in_features, out_features)
        self.avg_pool = nn.AvgPool1d(kernel_size=pool_kernel_size)
        self.scale_factor = scale_factor
        self._graph = CUDAGraphForward(self._forward)

    def _pool_k(self) -> int:
        k = self.avg_pool.kernel_size
        return k[0] if isinstance(k, tuple) else int(k)

    def _fits(self, x: torch.Tensor) -> bool:
        ap = self.avg_pool
        k = self._pool_k()
        s = ap.stride[0] if isinstance(ap.stride, tuple) else ap.stride
        p = ap.padding[0] if isinstance(ap.padding, tuple) else ap.padding
        return (x.is_cuda and x.dtype == torch.float32 and x.dim() == 2 and s == k and p == 0 and not ap.ceil_mode
                and self.matmul.out_features // k >= 1 and self.matmul.out_features <= 16384)

    def _triton(self, x: torch.Tensor) -> torch.Tensor:
        y = F.linear(x, self.matmul.weight, self.matmul.bias).contiguous()
        m, n = y.shape
        k = self._pool_k()
        npool = n // k
        out = torch.empty((m,), device=y.device, dtype=torch.float32)
        _tail_kernel[(m,)](y, out, n, npool, k, float(self.scale_factor), BP=triton.next_power_of_2(npool),
                           BK=triton.next_power_of_2(k), num_warps=4)
        return out

    def _forward(self, x: torch.Tensor) -> torch.Tensor:
        if self._fits(x):
            return self._triton(x)
        v = self.avg_pool(F.linear(x, self.matmul.weight, self.matmul.bias).unsqueeze(1)).squeeze(1)
        return torch.amax(F.gelu(v) * self.scale_factor, dim=1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self._graph(x)
