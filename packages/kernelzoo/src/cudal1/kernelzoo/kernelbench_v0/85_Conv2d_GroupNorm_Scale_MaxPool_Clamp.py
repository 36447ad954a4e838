"""KernelBench level 2, 85_Conv2d_GroupNorm_Scale_MaxPool_Clamp (x: (128, 3, 32, 32) fp32; Conv2d(3 -> 16, k=3)
-> (128, 16, 30, 30), 7.4 MB; GroupNorm(8, 16), ``* scale`` (16, 1, 1), MaxPool2d(2), clamp [0, 1] ->
(128, 16, 15, 15)).

One Triton kernel does the whole model, the convolution included. With 3 input channels and a 3x3 kernel the
convolution is 27 multiply-adds per output: nothing for the GPU (50 MFMA) but a slow cuDNN implicit-GEMM launch
at these sizes. Each program owns one (sample, group): it computes the group's (2 channels, 900 positions) conv
output in fp32 registers (direct convolution, plain FMAs, no TF32) with the conv bias, takes the group mean and
two-pass variance, then computes the conv again at the four offsets of each 2x2 pool window (27 FMAs an
output, cheaper than storing and re-reading it), normalises, applies the group norm's affine and the scale,
takes the window max and clamps; only the pooled (128, 16, 15, 15) result (1.8 MB) is written. Eager runs the
conv, a bias pass, the group norm, mul, pool and clamp: 8 kernels, mostly launches. One launch here.

Measured figures: ``kernelbench_v0/measured.json`` (per GPU and baseline, checked against the results stores);
the figures this docstring once carried: benchmarks/results/2026-12-05-kernelbench-v0-docstring-figures.md.
"""

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _conv_tile(x_ptr, w_ptr, n, c, cmask, oh, ow, pmask, C_IN, H, W, K: tl.constexpr,
               BLOCK_C: tl.constexpr, BLOCK_P: tl.constexpr):
    """Direct stride-1, unpadded conv: (BLOCK_C out channels, BLOCK_P output positions) of sample n, fp32 FMAs."""
    acc = tl.zeros([BLOCK_C, BLOCK_P], tl.float32)
    for ci in range(C_IN):
        xb = x_ptr + (n * C_IN + ci).to(tl.int64) * H * W
        wb = w_ptr + (c * C_IN + ci) * (K * K)
        for kh in tl.static_range(K):
            for kw in tl.static_range(K):
                xv = tl.load(xb + (oh + kh) * W + ow + kw, mask=pmask, other=0.0)
                wv = tl.load(wb + kh * K + kw, mask=cmask, other=0.0)
                acc += wv[:, None] * xv[None, :]
    return acc


@triton.jit
def _fused_kernel(x_ptr, w_ptr, cb_ptr, gw_ptr, gb_ptr, s_ptr, out_ptr, C_IN, H, W, C, OH, OW, PH, PW, eps,
                  lo, hi, CPG: tl.constexpr, K: tl.constexpr, PK: tl.constexpr, BLOCK_C: tl.constexpr,
                  BLOCK_P: tl.constexpr, BLOCK_Q: tl.constexpr):
    n = tl.program_id(0)
    g = tl.program_id(1)
    c = g * CPG + tl.arange(0, BLOCK_C)
    cmask = (tl.arange(0, BLOCK_C) < CPG) & (c < C)
    cb = tl.load(cb_ptr + c, mask=cmask, other=0.0)
    # pass 1: group statistics over the full conv plane
    p = tl.arange(0, BLOCK_P)
    npos = OH * OW
    pmask = p < npos
    acc = _conv_tile(x_ptr, w_ptr, n, c, cmask, p // OW, p % OW, pmask, C_IN, H, W, K, BLOCK_C, BLOCK_P)
    mask = cmask[:, None] & pmask[None, :]
    v = tl.where(mask, acc + cb[:, None], 0.0)
    cnt = CPG * npos
    mean = tl.sum(tl.sum(v, 1), 0) / cnt
    d = tl.where(mask, v - mean, 0.0)
    var = tl.sum(tl.sum(d * d, 1), 0) / cnt
    rstd = 1.0 / tl.sqrt_rn(var + eps)
    a = tl.load(gw_ptr + c, mask=cmask, other=0.0) * rstd
    b = tl.load(gb_ptr + c, mask=cmask, other=0.0)
    sc = tl.load(s_ptr + c, mask=cmask, other=0.0)
    # pass 2: normalise, scale and max-pool, the conv recomputed at each window offset
    q = tl.arange(0, BLOCK_Q)
    qmask = q < PH * PW
    ph = q // PW
    pw = q % PW
    best = tl.full([BLOCK_C, BLOCK_Q], -float("inf"), tl.float32)
    for dh in tl.static_range(PK):
        for dw in tl.static_range(PK):
            t = _conv_tile(x_ptr, w_ptr, n, c, cmask, ph * PK + dh, pw * PK + dw, qmask, C_IN, H, W, K,
                           BLOCK_C, BLOCK_Q)
            y = ((t + cb[:, None] - mean) * a[:, None] + b[:, None]) * sc[:, None]
            best = tl.maximum(best, y)
    out = tl.minimum(tl.maximum(best, lo), hi)
    offs = (n * C + c).to(tl.int64)[:, None] * (PH * PW) + q[None, :]
    tl.store(out_ptr + offs, out, mask=cmask[:, None] & qmask[None, :])


class ModelNew(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, num_groups, scale_shape, maxpool_kernel_size,
                 clamp_min, clamp_max):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size)
        self.group_norm = nn.GroupNorm(num_groups, out_channels)
        self.scale = nn.Parameter(torch.ones(scale_shape))
        self.maxpool = nn.MaxPool2d(kernel_size=maxpool_kernel_size)
        self.clamp_min = clamp_min
        self.clamp_max = clamp_max

    def _triton(self, x: torch.Tensor) -> torch.Tensor:
        conv, gn = self.conv, self.group_norm
        x = x.contiguous()
        n, c_in, h, w = x.shape
        c = conv.out_channels
        k = conv.kernel_size[0]
        pk = self.maxpool.kernel_size
        oh, ow = h - k + 1, w - k + 1
        ph, pw = oh // pk, ow // pk
        out = torch.empty((n, c, ph, pw), device=x.device, dtype=x.dtype)
        cpg = c // gn.num_groups
        _fused_kernel[(n, gn.num_groups)](
            x, conv.weight, conv.bias, gn.weight, gn.bias, self.scale, out, c_in, h, w, c, oh, ow, ph, pw, gn.eps,
            float(self.clamp_min), float(self.clamp_max), CPG=cpg, K=k, PK=pk,
            BLOCK_C=triton.next_power_of_2(cpg), BLOCK_P=triton.next_power_of_2(oh * ow),
            BLOCK_Q=triton.next_power_of_2(max(ph * pw, 1)), num_warps=4)
        return out

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if not x.is_cuda:
            v = self.maxpool(self.group_norm(self.conv(x)) * self.scale)
            return torch.clamp(v, self.clamp_min, self.clamp_max)
        return self._triton(x)
