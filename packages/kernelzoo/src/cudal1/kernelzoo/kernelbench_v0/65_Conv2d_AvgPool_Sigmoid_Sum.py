"""KernelBench level 2, 65_Conv2d_AvgPool_Sigmoid_Sum (x: (128, 3, 32, 32) fp32; Conv2d(3 -> 16, k=3) -> (128, 16,
30, 30); AvgPool2d(2) -> (128, 16, 15, 15); sigmoid; sum over channels and positions -> (128,)).

ONE Triton kernel does the whole forward, the convolution included: one program per sample computes, for all 16
channels and all 225 pooled positions, the conv at each of the 4 offsets of the pool window in fp32 registers
(direct 3-input-channel conv from ``cudal1.kernelzoo.blocks.direct_conv``, plain FMAs, no TF32), adds the conv
bias, averages the window (sum / 4, as the pool does; the pool's dropped border rows/columns are never computed),
applies sigmoid and sums everything; only the (128,) result is written (the 7.4 MB conv output never exists).
Replayed through a CUDA graph (``CUDAGraphForward``): per call one input copy, one graph launch and one output copy
of host time, against eager's conv (+ bias), pool, sigmoid and sum launches. Other configurations (pool stride
other than its kernel, padding, ceil mode) run the PyTorch form.

Measured figures: ``kernelbench_v0/measured.json`` (per GPU and baseline, checked against the results stores);
the figures this docstring once carried: benchmarks/results/2026-12-05-kernelbench-v0-docstring-figures.md.
"""

import torch
import torch.nn as nn
import triton
import triton.language as tl

from cudal1.kernelzoo.blocks.cudagraph import CUDAGraphForward
from cudal1.kernelzoo.blocks.direct_conv import conv2d_tile, direct_ok


@triton.jit
def _fused_kernel(x_ptr, w_ptr, cb_ptr, out_ptr, C_IN, H, W, C, PH, PW,
                  K: tl.constexpr, PK: tl.constexpr, BLOCK_C: tl.constexpr, BLOCK_Q: tl.constexpr):
    n = tl.program_id(0)
    c = tl.arange(0, BLOCK_C)
    cmask = c < C
    total = tl.zeros([BLOCK_C, BLOCK_Q], tl.float32)
    nq = PH * PW
    for q0 in range(0, nq, BLOCK_Q):
        q = q0 + tl.arange(0, BLOCK_Q)
        qmask = q < nq
        ph = q // PW
        pw = q % PW
        acc = tl.zeros([BLOCK_C, BLOCK_Q], tl.float32)
        for dh in tl.static_range(PK):
            for dw in tl.static_range(PK):
                acc += conv2d_tile(x_ptr, w_ptr, n, c, cmask, ph * PK + dh, pw * PK + dw, qmask, C_IN, H, W, K,
                                   BLOCK_C, BLOCK_Q)
        v = (acc + PK * PK * tl.load(cb_ptr + c, mask=cmask, other=0.0)[:, None]) / (PK * PK)
        s = 1.0 / (1.0 + tl.exp(-v))
        total += tl.where(cmask[:, None] & qmask[None, :], s, 0.0)
    tl.store(out_ptr + n, tl.sum(tl.sum(total, 1), 0))


class ModelNew(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, pool_kernel_size):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size)
        self.avg_pool = nn.AvgPool2d(pool_kernel_size)
        self._graph = CUDAGraphForward(self._forward)

    def _pool_k(self):
        k, s, p = self.avg_pool.kernel_size, self.avg_pool.stride, self.avg_pool.padding
        k = k if isinstance(k, int) else (k[0] if k[0] == k[1] else None)
        s = s if isinstance(s, int) else (s[0] if s[0] == s[1] else None)
        ok = k is not None and s == k and p in (0, (0, 0)) and not self.avg_pool.ceil_mode \
            and self.avg_pool.divisor_override is None
        return k if ok else None

    def _fits(self, x: torch.Tensor) -> bool:
        pk, k = self._pool_k(), self.conv.kernel_size[0]
        return (pk is not None and direct_ok(self.conv, x) and (x.shape[2] - k + 1) >= pk
                and (x.shape[3] - k + 1) >= pk)

    def _triton(self, x: torch.Tensor) -> torch.Tensor:
        conv = self.conv
        x = x.contiguous()
        n, c_in, h, w = x.shape
        c, k = conv.out_channels, conv.kernel_size[0]
        pk = self._pool_k()
        ph, pw = (h - k + 1) // pk, (w - k + 1) // pk
        out = torch.empty((n,), device=x.device, dtype=x.dtype)
        block_c = triton.next_power_of_2(c)
        block_q = min(triton.next_power_of_2(ph * pw), max(16, 4096 // block_c))
        _fused_kernel[(n,)](x, conv.weight, conv.bias, out, c_in, h, w, c, ph, pw, K=k, PK=pk, BLOCK_C=block_c,
                            BLOCK_Q=block_q, num_warps=4)
        return out

    def _forward(self, x: torch.Tensor) -> torch.Tensor:
        if self._fits(x):
            return self._triton(x)
        return torch.sum(torch.sigmoid(self.avg_pool(self.conv(x))), dim=[1, 2, 3])

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self._graph(x)
