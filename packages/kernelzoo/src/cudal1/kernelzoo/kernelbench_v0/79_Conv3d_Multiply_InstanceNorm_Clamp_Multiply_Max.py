"""KernelBench level 2, 79_Conv3d_Multiply_InstanceNorm_Clamp_Multiply_Max (x: (128, 3, 16, 32, 32) fp32;
Conv3d(3 -> 16, k=3) -> (128, 16, 14, 30, 30), 103 MB; ``* multiplier`` (16, 1, 1, 1); InstanceNorm3d (no
affine, eps 1e-5); clamp(-1, 1); ``* multiplier``; max over the channels -> (128, 14, 30, 30)).

Eager runs cuDNN's convolution (3 input channels: little work per output, poor use of its GEMM tiling), then a
multiply, the instance norm (statistics + apply), a clamp, a multiply and the channel max, each reading (and
most writing) the 103 MB tensor. Here:
1. one Triton kernel computes the convolution directly (a program owns one output depth plane of one sample and
   8 output rows; each of the 81 (input channel, tap) pairs adds a coalesced input row segment times the 16
   output channels' weights as an outer product; fp32 FMA, no TF32), adds the bias, multiplies by the
   multiplier, writes v once and also writes per-program per-channel (count, mean, M2) partials of v (no
   E[x^2] - E[x]^2 cancellation);
2. a tiny kernel merges the partials of each (sample, channel) (Chan's formula) into mean and 1/sqrt(var + eps);
3. one kernel reads v once, normalises, clamps, multiplies and takes the channel max in registers, writing
   only the 6 MB result.
Traffic drops from about 1.1 GB to about 0.24 GB and seven launches become three. The same direct convolution
serves 90_Conv3d_LeakyReLU_Sum_Clamp_GELU.

Measured figures: ``kernelbench_v0/measured.json`` (per GPU and baseline, checked against the results stores);
the figures this docstring once carried: benchmarks/results/2026-12-05-kernelbench-v0-docstring-figures.md.
"""

import torch
import torch.nn as nn
import torch.nn.functional as F
import triton
import triton.language as tl


@triton.jit
def _conv3_scale_stats_kernel(x_ptr, w_ptr, cb_ptr, mul_ptr, v_ptr, cnt_ptr, mean_ptr, m2_ptr, D_in, H_in, W_in,
                              D_out, H_out, W_out, CIN: tl.constexpr, COUT: tl.constexpr, BH: tl.constexpr,
                              BW: tl.constexpr):
    pid = tl.program_id(0)
    n = pid // D_out
    od = pid % D_out
    hb = tl.program_id(1)
    p = tl.arange(0, BH * BW)
    oh = hb * BH + p // BW
    ow = p % BW
    pm = (oh < H_out) & (ow < W_out)
    co = tl.arange(0, COUT)
    acc = tl.zeros([BH * BW, COUT], tl.float32)
    plane = H_in * W_in
    for ci in range(CIN):
        for kd in tl.static_range(3):
            row0 = ((n * CIN + ci) * D_in + od + kd) * plane
            for kh in tl.static_range(3):
                for kw in tl.static_range(3):
                    xv = tl.load(x_ptr + row0 + (oh + kh) * W_in + ow + kw, mask=pm, other=0.0)
                    wv = tl.load(w_ptr + (co * CIN + ci) * 27 + (kd * 9 + kh * 3 + kw))
                    acc += xv[:, None] * wv[None, :]
    v = (acc + tl.load(cb_ptr + co)[None, :]) * tl.load(mul_ptr + co)[None, :]
    out = ((n.to(tl.int64) * COUT + co[None, :]) * D_out + od) * (H_out * W_out) + (oh * W_out + ow)[:, None]
    tl.store(v_ptr + out, v, mask=pm[:, None])
    n_t = tl.sum(pm.to(tl.float32), 0)
    mean_t = tl.sum(tl.where(pm[:, None], v, 0.0), 0) / tl.maximum(n_t, 1.0)
    dev = tl.where(pm[:, None], v - mean_t[None, :], 0.0)
    part = pid * tl.num_programs(1) + hb  # = (n * D_out + od) * HB + hb
    tl.store(cnt_ptr + part, n_t)
    tl.store(mean_ptr + part * COUT + co, mean_t)
    tl.store(m2_ptr + part * COUT + co, tl.sum(dev * dev, 0))


@triton.jit
def _finalize_kernel(cnt_ptr, mean_ptr, m2_ptr, stat_ptr, n_part, eps, G: tl.constexpr, COUT: tl.constexpr,
                     CPG: tl.constexpr, BLOCK_PART: tl.constexpr):
    pid = tl.program_id(0)  # n * G + g
    n = pid // G
    g = pid % G
    k = tl.arange(0, BLOCK_PART)
    c = tl.arange(0, CPG)
    km = k < n_part
    cnt = tl.load(cnt_ptr + n * n_part + k, mask=km, other=0.0)
    offs = (n * n_part + k[:, None]) * COUT + g * CPG + c[None, :]
    mean = tl.load(mean_ptr + offs, mask=km[:, None], other=0.0)
    m2 = tl.load(m2_ptr + offs, mask=km[:, None], other=0.0)
    total = tl.sum(cnt, 0) * CPG
    gmean = tl.sum(tl.sum(cnt[:, None] * mean, 1), 0) / total
    d = mean - gmean
    gm2 = tl.sum(tl.sum(m2 + cnt[:, None] * d * d, 1), 0)
    tl.store(stat_ptr + pid * 2, gmean)
    tl.store(stat_ptr + pid * 2 + 1, 1.0 / tl.sqrt(gm2 / total + eps))


@triton.jit
def _norm_clamp_mul_max_kernel(v_ptr, stat_ptr, mul_ptr, y_ptr, S, lo, hi, COUT: tl.constexpr,
                               BLOCK: tl.constexpr):
    n = tl.program_id(0)
    s = tl.program_id(1) * BLOCK + tl.arange(0, BLOCK)
    sm = s < S
    best = tl.full([BLOCK], float("-inf"), tl.float32)
    for c in tl.static_range(COUT):
        v = tl.load(v_ptr + (n.to(tl.int64) * COUT + c) * S + s, mask=sm, other=0.0)
        mean = tl.load(stat_ptr + (n * COUT + c) * 2)
        rstd = tl.load(stat_ptr + (n * COUT + c) * 2 + 1)
        z = tl.minimum(tl.maximum((v - mean) * rstd, lo), hi) * tl.load(mul_ptr + c)
        best = tl.maximum(best, z)
    tl.store(y_ptr + n.to(tl.int64) * S + s, best, mask=sm)


class ModelNew(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, multiplier_shape, clamp_min, clamp_max):
        super().__init__()
        self.conv = nn.Conv3d(in_channels, out_channels, kernel_size)
        self.multiplier = nn.Parameter(torch.randn(multiplier_shape))
        self.instance_norm = nn.InstanceNorm3d(out_channels)
        self.clamp_min = clamp_min
        self.clamp_max = clamp_max

    def _fits(self, x: torch.Tensor) -> bool:
        c, inn = self.conv, self.instance_norm
        cout = c.out_channels
        return (x.is_cuda and x.dtype == torch.float32 and x.dim() == 5 and c.kernel_size == (3, 3, 3)
                and c.stride == (1, 1, 1) and c.padding == (0, 0, 0) and c.dilation == (1, 1, 1)
                and c.groups == 1 and c.bias is not None and cout & (cout - 1) == 0 and cout <= 32
                and tuple(self.multiplier.shape) == (cout, 1, 1, 1) and c.in_channels <= 8
                and not inn.affine and not inn.track_running_stats)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if not self._fits(x):
            y = F.instance_norm(self.conv(x) * self.multiplier, eps=self.instance_norm.eps)
            y = torch.clamp(y, self.clamp_min, self.clamp_max) * self.multiplier
            return torch.amax(y, dim=1)
        return self._fused(x)

    def _fused(self, x: torch.Tensor) -> torch.Tensor:
        c = self.conv
        x = x.contiguous()
        n, cin, d, h, w = x.shape
        cout = c.out_channels
        do, ho, wo = d - 2, h - 2, w - 2
        bw = triton.next_power_of_2(wo)
        bh = max(1, 256 // bw)
        grid = (n * do, triton.cdiv(ho, bh))
        n_part = do * grid[1]
        mul = self.multiplier.reshape(-1).contiguous()
        v = torch.empty(n, cout, do, ho, wo, device=x.device, dtype=x.dtype)
        cnt = torch.empty(n * n_part, device=x.device, dtype=torch.float32)
        mean = torch.empty(n * n_part, cout, device=x.device, dtype=torch.float32)
        m2 = torch.empty_like(mean)
        stats = torch.empty(n * cout, 2, device=x.device, dtype=torch.float32)
        _conv3_scale_stats_kernel[grid](x, c.weight.contiguous(), c.bias, mul, v, cnt, mean, m2, d, h, w, do, ho, wo,
                                        CIN=cin, COUT=cout, BH=bh, BW=bw, num_warps=4)
        _finalize_kernel[(n * cout,)](cnt, mean, m2, stats, n_part, self.instance_norm.eps, G=cout, COUT=cout,
                                      CPG=1, BLOCK_PART=triton.next_power_of_2(n_part), num_warps=2)
        s = do * ho * wo
        y = torch.empty(n, do, ho, wo, device=x.device, dtype=x.dtype)
        block = 1024
        _norm_clamp_mul_max_kernel[(n, triton.cdiv(s, block))](v, stats, mul, y, s, float(self.clamp_min),
                                                               float(self.clamp_max), COUT=cout, BLOCK=block,
                                                               num_warps=4)
        return y
