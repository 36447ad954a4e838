"""KernelBench level 2, 83_Conv3d_GroupNorm_Min_Clamp_Dropout (x: (128, 3, 16, 32, 32) fp32; Conv3d(3 -> 16,
k=3) -> (128, 16, 14, 30, 30), 103 MB; GroupNorm(8 groups, eps 1e-5, affine); ``min(., 0.0)``; clamp(0, 1);
Dropout(0.2), the identity in eval mode, where the harness runs models).

Eager runs cuDNN's convolution (3 input channels: little work per output, poor use of its GEMM tiling), the
group norm (statistics + apply), a minimum and a clamp, each reading (and most writing) the 103 MB tensor.
Here:
1. one Triton kernel computes the convolution directly (a program owns one output depth plane of one sample and
   8 output rows; each of the 81 (input channel, tap) pairs adds a coalesced input row segment times the 16
   output channels' weights as an outer product; fp32 FMA, no TF32), adds the bias, writes it once and also
   writes per-program per-channel (count, mean, M2) partials (no E[x^2] - E[x]^2 cancellation);
2. a tiny kernel merges the partials of each (sample, group) (Chan's formula) into mean and 1/sqrt(var + eps);
3. one kernel normalises, applies the affine, the minimum and the clamp in place: one read, one write.
The formula is computed as written (min then clamp; with these constants every finite value becomes 0, a
property of the task, not assumed here). In training mode the module's dropout is applied afterwards as in the
task. Traffic drops from about 0.75 GB to about 0.33 GB and five launches become three. The direct convolution is
the one of 90_Conv3d_LeakyReLU_Sum_Clamp_GELU.

Measured figures: ``kernelbench_v0/measured.json`` (per GPU and baseline, checked against the results stores);
the figures this docstring once carried: benchmarks/results/2026-12-05-kernelbench-v0-docstring-figures.md.
"""

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _conv3_stats_kernel(x_ptr, w_ptr, cb_ptr, v_ptr, cnt_ptr, mean_ptr, m2_ptr, D_in, H_in, W_in, D_out,
                        H_out, W_out, CIN: tl.constexpr, COUT: tl.constexpr, BH: tl.constexpr, BW: tl.constexpr):
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
    v = acc + tl.load(cb_ptr + co)[None, :]
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
def _norm_min_clamp_kernel(v_ptr, stat_ptr, gamma_ptr, beta_ptr, S, min_value, max_value, COUT: tl.constexpr,
                           G: tl.constexpr, BLOCK: tl.constexpr):
    row = tl.program_id(0)  # n * COUT + c
    n = row // COUT
    c = row % COUT
    grp = n * G + c // (COUT // G)
    scale = tl.load(stat_ptr + grp * 2 + 1) * tl.load(gamma_ptr + c)
    shift = tl.load(beta_ptr + c) - tl.load(stat_ptr + grp * 2) * scale
    s = tl.program_id(1) * BLOCK + tl.arange(0, BLOCK)
    sm = s < S
    ptr = v_ptr + row.to(tl.int64) * S + s
    y = tl.load(ptr, mask=sm, other=0.0) * scale + shift
    y = tl.minimum(y, min_value)
    y = tl.minimum(tl.maximum(y, min_value), max_value)
    tl.store(ptr, y, mask=sm)


class ModelNew(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, groups, min_value, max_value, dropout_p):
        super().__init__()
        self.conv = nn.Conv3d(in_channels, out_channels, kernel_size)
        self.norm = nn.GroupNorm(groups, out_channels)
        self.dropout = nn.Dropout(dropout_p)
        self.min_value = min_value
        self.max_value = max_value

    def _fits(self, x: torch.Tensor) -> bool:
        c, gn = self.conv, self.norm
        cout = c.out_channels
        cpg = cout // gn.num_groups
        return (x.is_cuda and x.dtype == torch.float32 and x.dim() == 5 and c.kernel_size == (3, 3, 3)
                and c.stride == (1, 1, 1) and c.padding == (0, 0, 0) and c.dilation == (1, 1, 1)
                and c.groups == 1 and c.bias is not None and cout & (cout - 1) == 0 and cout <= 32
                and c.in_channels <= 8 and gn.affine and cpg & (cpg - 1) == 0)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if not self._fits(x):
            y = torch.minimum(self.norm(self.conv(x)), torch.tensor(self.min_value, device=x.device))
            y = torch.clamp(y, min=self.min_value, max=self.max_value)
        else:
            y = self._fused(x)
        return self.dropout(y)

    def _fused(self, x: torch.Tensor) -> torch.Tensor:
        c, gn = self.conv, self.norm
        x = x.contiguous()
        n, cin, d, h, w = x.shape
        cout, g = c.out_channels, gn.num_groups
        do, ho, wo = d - 2, h - 2, w - 2
        bw = triton.next_power_of_2(wo)
        bh = max(1, 256 // bw)
        grid = (n * do, triton.cdiv(ho, bh))
        n_part = do * grid[1]
        v = torch.empty(n, cout, do, ho, wo, device=x.device, dtype=x.dtype)
        cnt = torch.empty(n * n_part, device=x.device, dtype=torch.float32)
        mean = torch.empty(n * n_part, cout, device=x.device, dtype=torch.float32)
        m2 = torch.empty_like(mean)
        stats = torch.empty(n * g, 2, device=x.device, dtype=torch.float32)
        _conv3_stats_kernel[grid](x, c.weight.contiguous(), c.bias, v, cnt, mean, m2, d, h, w, do, ho, wo, CIN=cin,
                                  COUT=cout, BH=bh, BW=bw, num_warps=4)
        _finalize_kernel[(n * g,)](cnt, mean, m2, stats, n_part, gn.eps, G=g, COUT=cout, CPG=cout // g,
                                   BLOCK_PART=triton.next_power_of_2(n_part), num_warps=2)
        s = do * ho * wo
        block = 2048
        _norm_min_clamp_kernel[(n * cout, triton.cdiv(s, block))](v, stats, gn.weight, gn.bias, s,
                                                                  float(self.min_value), float(self.max_value),
                                                                  COUT=cout, G=g, BLOCK=block, num_warps=4)
        return v
