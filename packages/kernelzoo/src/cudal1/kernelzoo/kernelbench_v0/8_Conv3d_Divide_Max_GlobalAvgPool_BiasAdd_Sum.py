"""KernelBench level 2, 8_Conv3d_Divide_Max_GlobalAvgPool_BiasAdd_Sum (x: (128, 3, 16, 32, 32) fp32;
Conv3d(3 -> 16, k=3) -> (128, 16, 14, 30, 30), 103 MB; ``/ divisor``; MaxPool3d(2) -> (128, 16, 7, 15, 15);
global average pool; ``+ bias`` (16, 1, 1, 1); sum over channels -> (128, 1, 1, 1)).

cuDNN runs the convolution without its bias (F.conv3d with the module's weight, fp32, no TF32) and ONE Triton
kernel does the tail: a program per (sample, channel) plane reads it once, adds the conv bias, divides, takes
each 2x2x2 pool window's max in registers, averages the windows and adds the bias; a (128, 16) sum over channels
finishes. Eager adds the conv bias, then runs divide (read + write 103 MB), max pool (read 103 MB),
average pool, add and sum: five more launches and about 0.3 GB of traffic against our one 103 MB read and two launches.

Measured figures: ``kernelbench_v0/measured.json`` (per GPU and baseline, checked against the results stores);
the figures this docstring once carried: benchmarks/results/2026-12-05-kernelbench-v0-docstring-figures.md.
"""

import torch
import torch.nn as nn
import torch.nn.functional as F
import triton
import triton.language as tl


@triton.jit
def _tail_kernel(y_ptr, cb_ptr, b_ptr, part_ptr, divisor, C, D, H, W, PD, PH, PW,
                 KD: tl.constexpr, KH: tl.constexpr, KW: tl.constexpr, KE: tl.constexpr, BLOCK: tl.constexpr):
    row = tl.program_id(0)  # n * C + c
    c = row % C
    e = tl.arange(0, KE)  # position inside a pool window (KE = next power of 2 of KD*KH*KW)
    emask = e < KD * KH * KW
    ed = e // (KH * KW)
    eh = (e // KW) % KH
    ew = e % KW
    n_win = PD * PH * PW
    base = row.to(tl.int64) * D * H * W
    cb = tl.load(cb_ptr + c)
    acc = tl.zeros([BLOCK], tl.float32)
    for start in range(0, n_win, BLOCK):
        wi = start + tl.arange(0, BLOCK)
        wmask = wi < n_win
        pd = wi // (PH * PW)
        ph = (wi // PW) % PH
        pw = wi % PW
        sp = ((pd * KD)[:, None] + ed[None, :]) * (H * W) + ((ph * KH)[:, None] + eh[None, :]) * W \
            + (pw * KW)[:, None] + ew[None, :]
        m = wmask[:, None] & emask[None, :]
        v = (tl.load(y_ptr + base + sp, mask=m, other=0.0) + cb) / divisor
        v = tl.where(m, v, float("-inf"))
        acc += tl.where(wmask, tl.max(v, 1), 0.0)
    tl.store(part_ptr + row, tl.sum(acc, 0) / n_win + tl.load(b_ptr + c))


class ModelNew(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, divisor, pool_size, bias_shape, sum_dim):
        super().__init__()
        self.conv = nn.Conv3d(in_channels, out_channels, kernel_size)
        self.divisor = divisor
        self.max_pool = nn.MaxPool3d(pool_size)
        self.global_avg_pool = nn.AdaptiveAvgPool3d((1, 1, 1))
        self.bias = nn.Parameter(torch.randn(bias_shape))
        self.sum_dim = sum_dim

    def _reference(self, x):
        x = self.global_avg_pool(self.max_pool(self.conv(x) / self.divisor)) + self.bias
        return torch.sum(x, dim=self.sum_dim)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        conv, mp = self.conv, self.max_pool
        k = mp.kernel_size if isinstance(mp.kernel_size, tuple) else (mp.kernel_size,) * 3
        s = mp.stride if isinstance(mp.stride, tuple) else (mp.stride,) * 3
        simple_pool = (k == s and mp.padding in (0, (0, 0, 0)) and mp.dilation in (1, (1, 1, 1))
                       and not mp.ceil_mode)
        if not (x.is_cuda and x.dtype == torch.float32 and simple_pool and self.sum_dim == 1
                and conv.bias is not None and self.bias.numel() == conv.out_channels):
            return self._reference(x)
        y = F.conv3d(x, conv.weight, None, conv.stride, conv.padding, conv.dilation, conv.groups).contiguous()
        n, c, d, h, w = y.shape
        pd, ph, pw = d // k[0], h // k[1], w // k[2]
        part = torch.empty((n, c), device=y.device, dtype=y.dtype)  # per (sample, channel): pooled mean + bias
        ke = triton.next_power_of_2(k[0] * k[1] * k[2])
        block = max(16, min(512, triton.next_power_of_2(pd * ph * pw)))
        _tail_kernel[(n * c,)](y, conv.bias, self.bias, part, float(self.divisor), c, d, h, w, pd, ph, pw,
                               KD=k[0], KH=k[1], KW=k[2], KE=ke, BLOCK=block, num_warps=4)
        return part.sum(dim=1).view(n, 1, 1, 1)
