"""KernelBench level 2, 43_Conv3d_Max_LogSumExp_ReLU (x: (128, 3, 16, 32, 32) fp32; Conv3d(3 -> 16, k=3, pad=1)
-> (128, 16, 16, 32, 32), 134 MB; MaxPool3d(2) -> (128, 16, 8, 16, 16); logsumexp over the 16 channels
(keepdim); relu -> (128, 1, 8, 16, 16)).

cuDNN runs the convolution without its bias (F.conv3d with the module's weight, fp32) and one Triton kernel
does the rest: each program owns one sample and one pooled (d', h') row; it loads the four input rows
(2d' + i, 2h' + j) as (16 channels, W) slabs, takes the max over each pair of columns and over the four rows
(the 2x2x2 window), adds the conv bias (``max(v + b_c) = max(v) + b_c``: the same bias in the window), then
the channel logsumexp and relu, and writes 2 MB. One read of the conv output; eager makes a bias pass (read +
write 134 MB), the pool (read 134 MB), logsumexp (several kernels) and relu: about 0.45 GB and five-plus
launches against our 0.14 GB and two.

Measured figures: ``kernelbench_v0/measured.json`` (per GPU and baseline, checked against the results stores);
the figures this docstring once carried: benchmarks/results/2026-12-05-kernelbench-v0-docstring-figures.md.
"""

import torch
import torch.nn as nn
import torch.nn.functional as F
import triton
import triton.language as tl


@triton.jit
def _pool_lse_relu_kernel(y_ptr, cb_ptr, out_ptr, n_ch, D, H, W, D2, H2, W2,
                          BLOCK_C: tl.constexpr, BLOCK_W: tl.constexpr):
    pid = tl.program_id(0)  # (n, d', h')
    h2 = pid % H2
    d2 = (pid // H2) % D2
    n = pid // (H2 * D2)
    c = tl.arange(0, BLOCK_C)
    w = tl.arange(0, BLOCK_W)
    cmask = c < n_ch
    mask = cmask[:, None] & (w < 2 * W2)[None, :]
    m = tl.full([BLOCK_C, BLOCK_W // 2], -float("inf"), tl.float32)
    for i in tl.static_range(2):
        for j in tl.static_range(2):
            row = ((n.to(tl.int64) * n_ch + c) * D + 2 * d2 + i) * H + 2 * h2 + j
            v = tl.load(y_ptr + (row * W)[:, None] + w[None, :], mask=mask, other=-float("inf"))
            m = tl.maximum(m, tl.max(tl.reshape(v, [BLOCK_C, BLOCK_W // 2, 2]), 2))
    v = m + tl.load(cb_ptr + c, mask=cmask, other=0.0)[:, None]
    v = tl.where(cmask[:, None], v, -float("inf"))
    mx = tl.max(v, 0)
    lse = mx + tl.log(tl.sum(tl.exp(v - mx[None, :]), 0))
    w2 = tl.arange(0, BLOCK_W // 2)
    tl.store(out_ptr + pid.to(tl.int64) * W2 + w2, tl.maximum(lse, 0.0), mask=w2 < W2)


class ModelNew(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, stride, padding):
        super().__init__()
        self.conv = nn.Conv3d(in_channels, out_channels, kernel_size, stride=stride, padding=padding)
        self.max_pool = nn.MaxPool3d(kernel_size=2, stride=2)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        conv = self.conv
        if not x.is_cuda:
            return torch.relu(torch.logsumexp(self.max_pool(conv(x)), dim=1, keepdim=True))
        y = F.conv3d(x, conv.weight, None, conv.stride, conv.padding, conv.dilation, conv.groups).contiguous()
        n, c, d, h, w = y.shape
        d2, h2, w2 = d // 2, h // 2, w // 2
        out = torch.empty((n, 1, d2, h2, w2), device=y.device, dtype=y.dtype)
        if out.numel() == 0:
            return out
        block_w = max(2, triton.next_power_of_2(2 * w2))
        _pool_lse_relu_kernel[(n * d2 * h2,)](y, conv.bias, out, c, d, h, w, d2, h2, w2,
                                             BLOCK_C=triton.next_power_of_2(c), BLOCK_W=block_w, num_warps=4)
        return out
