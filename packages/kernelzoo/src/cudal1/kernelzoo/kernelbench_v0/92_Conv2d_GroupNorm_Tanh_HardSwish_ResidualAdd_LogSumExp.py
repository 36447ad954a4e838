"""KernelBench level 2, 92_Conv2d_GroupNorm_Tanh_HardSwish_ResidualAdd_LogSumExp (x: (128, 3, 32, 32) fp32;
Conv2d(3 -> 16, k=3) -> (128, 16, 30, 30); GroupNorm(8, 16, eps); tanh; hardswish; ``conv + that``; logsumexp over
the 16 channels -> (128, 1, 30, 30)).

ONE Triton kernel does the whole forward, the convolution included: one program per sample computes all 16
channels x 900 positions of the conv in fp32 registers (direct 3-input-channel conv from
``cudal1.kernelzoo.blocks.direct_conv``, plain FMAs, no TF32), the group statistics (per-channel sums combined
across each group's channels by a (16, 16) same-group mask; mean, then the biased variance of the centred values,
as GroupNorm), normalisation and affine, tanh, hardswish, the residual add and the channel logsumexp (max + log of
the sum of exp(v - max)), and writes only the (128, 1, 30, 30) result. Replayed through a CUDA graph
(``CUDAGraphForward``): per call one input copy, one graph launch and one output copy of host time, against
eager's conv (+ bias), group norm, tanh, hardswish, add and logsumexp (several kernels) launches. Other
configurations run the PyTorch form.

Measured figures: ``kernelbench_v0/measured.json`` (per GPU and baseline, checked against the results stores);
the figures this docstring once carried: benchmarks/results/2026-12-05-kernelbench-v0-docstring-figures.md.
"""

import torch
import torch.nn as nn
import triton
import triton.language as tl

from cudal1.kernelzoo.blocks.cudagraph import CUDAGraphForward
from cudal1.kernelzoo.blocks.direct_conv import conv2d_tile, direct_ok, tanh


@triton.jit
def _fused_kernel(x_ptr, w_ptr, cb_ptr, gw_ptr, gb_ptr, out_ptr, C_IN, H, W, C, OH, OW, CG, eps,
                  K: tl.constexpr, BLOCK_C: tl.constexpr, BLOCK_P: tl.constexpr):
    n = tl.program_id(0)
    c = tl.arange(0, BLOCK_C)
    cmask = c < C
    p = tl.arange(0, BLOCK_P)
    npos = OH * OW
    pmask = p < npos
    mask = cmask[:, None] & pmask[None, :]
    xc = conv2d_tile(x_ptr, w_ptr, n, c, cmask, p // OW, p % OW, pmask, C_IN, H, W, K, BLOCK_C, BLOCK_P)
    xc += tl.load(cb_ptr + c, mask=cmask, other=0.0)[:, None]
    c2 = tl.arange(0, BLOCK_C)
    same = ((c[:, None] // CG) == (c2[None, :] // CG)) & (c2 < C)[None, :]
    cnt = CG * npos
    csum = tl.sum(tl.where(mask, xc, 0.0), 1)
    mean = tl.sum(tl.where(same, tl.reshape(csum, (1, BLOCK_C)), 0.0), 1) / cnt
    d = tl.where(mask, xc - mean[:, None], 0.0)
    csq = tl.sum(d * d, 1)
    var = tl.sum(tl.where(same, tl.reshape(csq, (1, BLOCK_C)), 0.0), 1) / cnt
    t = tanh(d / tl.sqrt(var + eps)[:, None] * tl.load(gw_ptr + c, mask=cmask, other=0.0)[:, None]
             + tl.load(gb_ptr + c, mask=cmask, other=0.0)[:, None])
    r = tl.where(mask, xc + t * tl.minimum(tl.maximum(t + 3.0, 0.0), 6.0) / 6.0, -float("inf"))
    mx = tl.max(r, 0)
    mx_safe = tl.where((mx == float("inf")) | (mx == -float("inf")), 0.0, mx)
    lse = tl.log(tl.sum(tl.exp(r - mx_safe[None, :]), 0)) + mx_safe
    tl.store(out_ptr + n.to(tl.int64) * npos + p, lse, mask=pmask)


class ModelNew(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, groups, eps=1e-5):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size)
        self.group_norm = nn.GroupNorm(groups, out_channels, eps=eps)
        self.tanh = nn.Tanh()
        self.hard_swish = nn.Hardswish()
        self._graph = CUDAGraphForward(self._forward)

    def _fits(self, x: torch.Tensor) -> bool:
        k = self.conv.kernel_size[0]
        if not (direct_ok(self.conv, x) and self.group_norm.affine):
            return False
        npos = (x.shape[2] - k + 1) * (x.shape[3] - k + 1)
        return triton.next_power_of_2(npos) * triton.next_power_of_2(self.conv.out_channels) <= 16384

    def _triton(self, x: torch.Tensor) -> torch.Tensor:
        conv, gn = self.conv, self.group_norm
        x = x.contiguous()
        n, c_in, h, w = x.shape
        c, k = conv.out_channels, conv.kernel_size[0]
        oh, ow = h - k + 1, w - k + 1
        out = torch.empty((n, 1, oh, ow), device=x.device, dtype=x.dtype)
        block_c, block_p = triton.next_power_of_2(c), triton.next_power_of_2(oh * ow)
        _fused_kernel[(n,)](x, conv.weight, conv.bias, gn.weight, gn.bias, out, c_in, h, w, c, oh, ow,
                            c // gn.num_groups, float(gn.eps), K=k, BLOCK_C=block_c, BLOCK_P=block_p,
                            num_warps=8 if block_c * block_p >= 8192 else 4)
        return out

    def _forward(self, x: torch.Tensor) -> torch.Tensor:
        if self._fits(x):
            return self._triton(x)
        xc = self.conv(x)
        return torch.logsumexp(xc + self.hard_swish(self.tanh(self.group_norm(xc))), dim=1, keepdim=True)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self._graph(x)
