"""KernelBench level 2, 66_Matmul_Dropout_Mean_Softmax (x: (128, 100) fp32; Linear(100 -> 50); Dropout(0.2),
the identity in eval mode; mean over the 50 features -> (128, 1); softmax over that size-1 dim).

One Triton kernel: the 128x100x50 product with plain fp32 FMAs (a runtime loop over K into a (BLOCK_M,
next_pow2(N)) register tile, no TF32), the bias, the row mean, and the softmax over one element computed as the
reference's formula does it, ``exp(m - max) / sum`` = ``e / e`` with ``e = exp(m - m)`` (1.0, or NaN where the
mean is not finite, as in the reference); one write of the (128, 1) result. Replayed through a CUDA graph
(``CUDAGraphForward``): per call one input copy, one graph launch and one output copy of host time, against eager's
addmm, dropout (a no-op), mean and softmax launches. In training mode (dropout active) the PyTorch form runs.

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
def _fused_kernel(x_ptr, w_ptr, b_ptr, y_ptr, M, N, K, BM: tl.constexpr, BN: tl.constexpr):
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rn = tl.arange(0, BN)
    mm = rm < M
    nm = rn < N
    acc = tl.zeros((BM, BN), tl.float32)
    for k in range(K):
        a = tl.load(x_ptr + rm * K + k, mask=mm, other=0.0)
        b = tl.load(w_ptr + rn * K + k, mask=nm, other=0.0)
        acc += a[:, None] * b[None, :]
    v = acc + tl.load(b_ptr + rn, mask=nm, other=0.0)[None, :]
    mean = tl.sum(tl.where(nm[None, :], v, 0.0), 1) / N
    e = tl.exp(mean - mean)
    tl.store(y_ptr + rm, e / e, mask=mm)


class ModelNew(nn.Module):
    def __init__(self, in_features, out_features, dropout_p):
        super().__init__()
        self.matmul = nn.Linear(in_features, out_features)
        self.dropout = nn.Dropout(dropout_p)
        self._graph = CUDAGraphForward(self._forward)

    def _triton(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        w = self.matmul.weight.contiguous()
        m, k = x.shape
        n = w.shape[0]
        y = torch.empty((m, 1), device=x.device, dtype=torch.float32)
        _fused_kernel[(triton.cdiv(m, 32),)](x, w, self.matmul.bias, y, m, n, k, BM=32,
                                             BN=max(2, triton.next_power_of_2(n)), num_warps=4)
        return y

    def _forward(self, x: torch.Tensor) -> torch.Tensor:
        lin = self.matmul
        if (x.is_cuda and x.dtype == torch.float32 and x.dim() == 2 and lin.bias is not None and not self.training
                and lin.out_features <= 128 and lin.in_features <= 1024):
            return self._triton(x)
        v = self.dropout(F.linear(x, lin.weight, lin.bias))
        return torch.softmax(v.mean(dim=1, keepdim=True), dim=1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if self.training:
            return self._forward(x)
        return self._graph(x)
