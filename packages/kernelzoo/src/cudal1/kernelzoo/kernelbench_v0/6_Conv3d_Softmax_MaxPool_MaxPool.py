"""KernelBench level 2, 6_Conv3d_Softmax_MaxPool_MaxPool (x: (128, 3, 16, 32, 32) fp32; Conv3d(3 -> 16, k=3)
-> (128, 16, 14, 30, 30), 103 MB; softmax over the 16 channels; MaxPool3d(2) twice -> (128, 16, 3, 7, 7)).

Two non-overlapping 2-pools in a row are one 4-pool with stride 4 (the windows nest and
floor(floor(n / 2) / 2) = floor(n / 4)): exact. cuDNN runs the convolution without its bias (F.conv3d with the
module's weight, fp32) and one Triton kernel does the rest: each program owns one sample and one pooled
(d', h') row; for each of the 16 input rows (4d' + i, 4h' + j) it loads a (16 channels, W) slab, adds the conv
bias, takes the channel softmax in registers and folds groups of 4 columns into the running window max; then
writes 0.8 MB. One read of the conv output (the rows the pools drop are never read); eager makes a bias pass,
the softmax (read + write 103 MB) and two pools (read 103 MB + 13 MB): about 0.43 GB and four launches against
our 0.1 GB and two.

Measured figures: ``kernelbench_v0/measured.json`` (per GPU and baseline, checked against the results stores);
the figures this docstring once carried: benchmarks/results/2026-12-05-kernelbench-v0-docstring-figures.md.
"""

import torch
import torch.nn as nn
import torch.nn.functional as F
import triton
import triton.language as tl


@triton.jit
def _softmax_pool4_kernel(y_ptr, cb_ptr, out_ptr, n_ch, D, H, W, D4, H4, W4,
                          BLOCK_C: tl.constexpr, BLOCK_W: tl.constexpr):
    pid = tl.program_id(0)  # (n, d', h')
    h4 = pid % H4
    d4 = (pid // H4) % D4
    n = pid // (H4 * D4)
    c = tl.arange(0, BLOCK_C)
    w = tl.arange(0, BLOCK_W)
    cmask = c < n_ch
    mask = cmask[:, None] & (w < 4 * W4)[None, :]
    cb = tl.load(cb_ptr + c, mask=cmask, other=0.0)[:, None]
    m = tl.full([BLOCK_C, BLOCK_W // 4], -float("inf"), tl.float32)
    for i in tl.static_range(4):
        for j in tl.static_range(4):
            row = ((n.to(tl.int64) * n_ch + c) * D + 4 * d4 + i) * H + 4 * h4 + j
            v = tl.load(y_ptr + (row * W)[:, None] + w[None, :], mask=mask, other=0.0) + cb
            v = tl.where(cmask[:, None], v, -float("inf"))
            e = tl.exp(v - tl.max(v, 0)[None, :])
            p = e / tl.sum(e, 0)[None, :]
            m = tl.maximum(m, tl.max(tl.reshape(p, [BLOCK_C, BLOCK_W // 4, 4]), 2))
    w4 = tl.arange(0, BLOCK_W // 4)
    offs = ((n.to(tl.int64) * n_ch + c) * D4 + d4) * H4 + h4
    tl.store(out_ptr + (offs * W4)[:, None] + w4[None, :], m, mask=cmask[:, None] & (w4 < W4)[None, :])


class ModelNew(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, pool_kernel_size):
        super().__init__()
        self.conv = nn.Conv3d(in_channels, out_channels, kernel_size)
        self.pool1 = nn.MaxPool3d(pool_kernel_size)
        self.pool2 = nn.MaxPool3d(pool_kernel_size)
        if pool_kernel_size != 2:
            raise ValueError("the fused kernel folds two MaxPool3d(2) into one 4-pool")

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        conv = self.conv
        if not x.is_cuda:
            return self.pool2(self.pool1(torch.softmax(conv(x), dim=1)))
        y = F.conv3d(x, conv.weight, None, conv.stride, conv.padding, conv.dilation, conv.groups).contiguous()
        n, c, d, h, w = y.shape
        d4, h4, w4 = d // 4, h // 4, w // 4
        out = torch.empty((n, c, d4, h4, w4), device=y.device, dtype=y.dtype)
        if out.numel() == 0:
            return out
        block_w = max(4, triton.next_power_of_2(4 * w4))
        _softmax_pool4_kernel[(n * d4 * h4,)](y, conv.bias, out, c, d, h, w, d4, h4, w4,
                                             BLOCK_C=triton.next_power_of_2(c), BLOCK_W=block_w, num_warps=4)
        return out
