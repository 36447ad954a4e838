"""KernelBench level 2, 10_ConvTranspose2d_MaxPool_Hardtanh_Mean_Tanh (x: (128, 32, 16, 16) fp32;
ConvTranspose2d(32 -> 64, k=4, stride 2, padding 1) -> (128, 64, 32, 32), 34 MB; MaxPool2d(2, 2) -> 16 x 16;
Hardtanh(-1, 1); mean over (H, W), keepdim; tanh -> (128, 64, 1, 1)).

cuDNN runs the transposed convolution without its bias (module weight, fp32, no TF32) and ONE Triton kernel does
the whole tail, a program per (sample, channel) plane: conv bias, 2x2 max in registers, clamp, mean, tanh; it
writes one number per plane. Eager adds the bias, then runs max pool, hardtanh, mean and tanh, four more launches
(max pool reads the 34 MB conv output, the rest touch 8 MB). Reference 0.52 ms (2026-11-24 H100 self-run); the
tail is about 0.1 ms of it; expect about 1.2x. Measured through the harness on an H100 (2026-11-25, eager baseline): 1.13x, 95% CI [1.13, 1.14] (benchmarks/results/2026-11-25-kernelbench-v0-level2-h100.md).
"""

import torch
import torch.nn as nn
import torch.nn.functional as F
import triton
import triton.language as tl


@triton.jit
def _tail_kernel(y_ptr, cb_ptr, out_ptr, C, H, W, PH, PW, lo, hi,
                 K: tl.constexpr, KE: tl.constexpr, BLOCK: tl.constexpr):
    row = tl.program_id(0)  # n * C + c
    cb = tl.load(cb_ptr + row % C)
    base = row.to(tl.int64) * H * W
    e = tl.arange(0, KE)
    emask = e < K * K
    eh = e // K
    ew = e % K
    n_win = PH * PW
    acc = tl.zeros([BLOCK], tl.float32)
    for start in range(0, n_win, BLOCK):
        wi = start + tl.arange(0, BLOCK)
        wmask = wi < n_win
        sp = ((wi // PW) * K)[:, None] * W + eh[None, :] * W + ((wi % PW) * K)[:, None] + ew[None, :]
        m = wmask[:, None] & emask[None, :]
        v = tl.where(m, tl.load(y_ptr + base + sp, mask=m, other=0.0) + cb, float("-inf"))
        p = tl.minimum(tl.maximum(tl.max(v, 1), lo), hi)
        acc += tl.where(wmask, p, 0.0)
    z = tl.sum(acc, 0) / n_win
    t = tl.exp(-2.0 * tl.abs(z))  # tanh without cancellation
    r = (1.0 - t) / (1.0 + t)
    tl.store(out_ptr + row, tl.where(z < 0, -r, r))


class ModelNew(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, stride, padding, maxpool_kernel_size, maxpool_stride,
                 hardtanh_min, hardtanh_max):
        super().__init__()
        self.conv_transpose = nn.ConvTranspose2d(in_channels, out_channels, kernel_size, stride=stride,
                                                 padding=padding)
        self.maxpool = nn.MaxPool2d(kernel_size=maxpool_kernel_size, stride=maxpool_stride)
        self.hardtanh = nn.Hardtanh(min_val=hardtanh_min, max_val=hardtanh_max)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        ct, mp, ht = self.conv_transpose, self.maxpool, self.hardtanh
        k = mp.kernel_size
        if not (x.is_cuda and x.dtype == torch.float32 and isinstance(k, int) and mp.stride == k
                and mp.padding == 0 and mp.dilation == 1 and not mp.ceil_mode and ct.bias is not None):
            return torch.tanh(torch.mean(ht(mp(ct(x))), dim=(2, 3), keepdim=True))
        y = F.conv_transpose2d(x, ct.weight, None, ct.stride, ct.padding, ct.output_padding, ct.groups,
                               ct.dilation).contiguous()
        n, c, h, w = y.shape
        ph, pw = (h - k) // k + 1, (w - k) // k + 1
        out = torch.empty((n, c, 1, 1), device=y.device, dtype=y.dtype)
        block = max(16, min(512, triton.next_power_of_2(ph * pw)))
        _tail_kernel[(n * c,)](y, ct.bias, out, c, h, w, ph, pw, float(ht.min_val), float(ht.max_val),
                               K=k, KE=triton.next_power_of_2(k * k), BLOCK=block, num_warps=4)
        return out
