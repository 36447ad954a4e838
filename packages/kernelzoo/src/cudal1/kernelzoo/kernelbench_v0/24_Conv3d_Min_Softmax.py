"""KernelBench level 2, 24_Conv3d_Min_Softmax (x: (128, 3, 16, 32, 32) fp32; Conv3d(3 -> 16, k=3) ->
(128, 16, 14, 30, 30), 103 MB; min over depth (dim 2) -> (128, 16, 30, 30); softmax over the 16 channels).

cuDNN runs the convolution without its bias (F.conv3d with the module's weight, fp32) and one Triton kernel
does the rest: each program owns one sample and BLOCK_S (h, w) positions, walks the 14 depth planes loading a
(16 channels, BLOCK_S) slab each (rows contiguous, coalesced) and keeps the running minimum, adds the conv bias
(``min_d(v + b_c) = min_d(v) + b_c`` exactly: the same bias on every d), takes the channel softmax in registers
and writes the 7.4 MB result. One read of the conv output; eager makes a bias pass (read + write 103 MB), the
min reduction (read 103 MB, write values and int64 indices) and the softmax: about 0.3 GB and four launches
against our 0.11 GB and two.

Measured figures: ``kernelbench_v0/measured.json`` (per GPU and baseline, checked against the results stores);
the figures this docstring once carried: benchmarks/results/2026-12-05-kernelbench-v0-docstring-figures.md.
"""

import torch
import torch.nn as nn
import torch.nn.functional as F
import triton
import triton.language as tl


@triton.jit
def _min_depth_softmax_kernel(y_ptr, cb_ptr, out_ptr, n_ch, depth, plane,
                              BLOCK_C: tl.constexpr, BLOCK_S: tl.constexpr):
    s = tl.program_id(0) * BLOCK_S + tl.arange(0, BLOCK_S)
    n = tl.program_id(1).to(tl.int64)
    c = tl.arange(0, BLOCK_C)
    cmask = c < n_ch
    mask = cmask[:, None] & (s < plane)[None, :]
    ptrs = y_ptr + n * n_ch * depth * plane + (c * depth * plane)[:, None] + s[None, :]
    m = tl.full([BLOCK_C, BLOCK_S], float("inf"), tl.float32)
    for d in range(depth):
        m = tl.minimum(m, tl.load(ptrs + d * plane, mask=mask, other=0.0))
    v = m + tl.load(cb_ptr + c, mask=cmask, other=0.0)[:, None]
    v = tl.where(cmask[:, None], v, -float("inf"))
    e = tl.exp(v - tl.max(v, 0)[None, :])
    offs = n * n_ch * plane + (c * plane)[:, None] + s[None, :]
    tl.store(out_ptr + offs, e / tl.sum(e, 0)[None, :], mask=mask)


class ModelNew(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, dim):
        super().__init__()
        self.conv = nn.Conv3d(in_channels, out_channels, kernel_size)
        self.dim = dim
        if dim != 2:
            raise ValueError("the fused kernel takes the minimum over depth (dim=2), as the task does")

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        conv = self.conv
        if not x.is_cuda:
            return torch.softmax(torch.min(conv(x), dim=self.dim)[0], dim=1)
        y = F.conv3d(x, conv.weight, None, conv.stride, conv.padding, conv.dilation, conv.groups).contiguous()
        n, c, d, h, w = y.shape
        out = torch.empty((n, c, h, w), device=y.device, dtype=y.dtype)
        block_c = triton.next_power_of_2(c)
        block_s = max(32, min(256, 4096 // block_c))
        _min_depth_softmax_kernel[(triton.cdiv(h * w, block_s), n)](y, conv.bias, out, c, d, h * w,
                                                                   BLOCK_C=block_c, BLOCK_S=block_s, num_warps=4)
        return out
