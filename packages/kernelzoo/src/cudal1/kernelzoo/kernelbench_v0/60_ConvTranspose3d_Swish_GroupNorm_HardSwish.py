"""KernelBench level 2, 60_ConvTranspose3d_Swish_GroupNorm_HardSwish (x: (128, 3, 16, 32, 32) fp32;
ConvTranspose3d(3 -> 16, k=3, stride 2, padding 1) -> (128, 16, 31, 63, 63), 1 GB; ``v * sigmoid(v)``;
GroupNorm(4 groups, eps 1e-5, affine); hardswish).

Eager writes the 1 GB convolution output (cuDNN is slow with 3 input channels), then runs sigmoid, multiply,
group norm (statistics + apply) and hardswish, each reading and writing 1 GB. Here the transposed convolution is
computed directly in Triton (per output depth plane and (oh, ow) parity class only the taps that land there: 3.4
of 27 on average, all 16 output channels at once, fp32 FMA, no TF32) and is cheap enough to run twice:
1. statistics kernel: conv + swish in registers, per-program per-channel (count, mean, M2) partials (no
   E[x^2] - E[x]^2 cancellation); nothing else is written;
2. a tiny kernel merges the partials of each (sample, group) (Chan's formula) into mean and 1/sqrt(var + eps);
3. apply kernel: conv + swish again, normalise, affine, hardswish, one 1 GB write.
Memory traffic drops from about 9 GB to the 1 GB output plus the 25 MB input.

Measured figures: ``kernelbench_v0/measured.json`` (per GPU and baseline, checked against the results stores);
the figures this docstring once carried: benchmarks/results/2026-12-05-kernelbench-v0-docstring-figures.md.
"""

import torch
import torch.nn as nn
import torch.nn.functional as F
import triton
import triton.language as tl


@triton.jit
def _convt_s2_tile(x_ptr, w_ptr, n, od, jh, jw, pmask, D_in, H_in, W_in,
                   PH: tl.constexpr, PW: tl.constexpr, PAD: tl.constexpr, CIN: tl.constexpr, COUT: tl.constexpr,
                   BLOCK_P: tl.constexpr):
    """Transposed conv (k=3, stride 2) outputs at depth ``od`` and (oh, ow) = (2 jh + PH, 2 jw + PW) for every
    output channel: a (BLOCK_P, COUT) fp32 tile, bias not added. Only taps with matching parity are visited."""
    co = tl.arange(0, COUT)
    acc = tl.zeros([BLOCK_P, COUT], tl.float32)
    plane = H_in * W_in
    for kd in tl.static_range(3):
        t = od + PAD - kd
        idd = t // 2
        if (t >= 0) & (t % 2 == 0) & (idd < D_in):
            for kh in tl.static_range(3):
                if (PH + PAD - kh) % 2 == 0:
                    ih = jh + (PH + PAD - kh) // 2
                    for kw in tl.static_range(3):
                        if (PW + PAD - kw) % 2 == 0:
                            iw = jw + (PW + PAD - kw) // 2
                            m = pmask & (ih >= 0) & (ih < H_in) & (iw >= 0) & (iw < W_in)
                            for ci in range(CIN):
                                xv = tl.load(x_ptr + ((n * CIN + ci) * D_in + idd) * plane + ih * W_in + iw,
                                             mask=m, other=0.0)
                                wv = tl.load(w_ptr + (ci * COUT + co) * 27 + (kd * 9 + kh * 3 + kw))
                                acc += xv[:, None] * wv[None, :]
    return acc


@triton.jit
def _swish(v):
    return v * (1.0 / (1.0 + tl.exp(-v)))


@triton.jit
def _stats_kernel(x_ptr, w_ptr, cb_ptr, cnt_ptr, mean_ptr, m2_ptr, D_in, H_in, W_in, D_out, H_out, W_out,
                  PAD: tl.constexpr, CIN: tl.constexpr, COUT: tl.constexpr, BH: tl.constexpr, BW: tl.constexpr):
    pid = tl.program_id(0)
    n = pid // D_out
    od = pid % D_out
    hb = tl.program_id(1)
    p = tl.arange(0, BH * BW)
    jh = hb * BH + p // BW
    jw = p % BW
    co = tl.arange(0, COUT)
    cb = tl.load(cb_ptr + co)
    n_a = tl.sum(tl.zeros([COUT], tl.float32), 0)  # running count, mean and M2 per channel
    mean_a = tl.zeros([COUT], tl.float32)
    m2_a = tl.zeros([COUT], tl.float32)
    for ph in tl.static_range(2):
        for pw in tl.static_range(2):
            pm = (2 * jh + ph < H_out) & (2 * jw + pw < W_out)
            acc = _convt_s2_tile(x_ptr, w_ptr, n, od, jh, jw, pm, D_in, H_in, W_in, ph, pw, PAD, CIN, COUT, BH * BW)
            s = _swish(acc + cb[None, :])
            n_t = tl.sum(pm.to(tl.float32), 0)
            mean_t = tl.sum(tl.where(pm[:, None], s, 0.0), 0) / tl.maximum(n_t, 1.0)
            dev = tl.where(pm[:, None], s - mean_t[None, :], 0.0)
            m2_t = tl.sum(dev * dev, 0)
            n_new = n_a + n_t
            delta = mean_t - mean_a
            frac = n_t / tl.maximum(n_new, 1.0)
            mean_a = mean_a + delta * frac
            m2_a = m2_a + m2_t + delta * delta * n_a * frac
            n_a = n_new
    part = pid * tl.num_programs(1) + hb  # = (n * D_out + od) * HB + hb
    tl.store(cnt_ptr + part, n_a)
    tl.store(mean_ptr + part * COUT + co, mean_a)
    tl.store(m2_ptr + part * COUT + co, m2_a)


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
def _apply_kernel(x_ptr, w_ptr, cb_ptr, stat_ptr, gamma_ptr, beta_ptr, y_ptr, D_in, H_in, W_in, D_out, H_out, W_out,
                  PAD: tl.constexpr, CIN: tl.constexpr, COUT: tl.constexpr, G: tl.constexpr,
                  BH: tl.constexpr, BW: tl.constexpr):
    pid = tl.program_id(0)
    n = pid // D_out
    od = pid % D_out
    p = tl.arange(0, BH * BW)
    jh = tl.program_id(1) * BH + p // BW
    jw = p % BW
    co = tl.arange(0, COUT)
    cb = tl.load(cb_ptr + co)
    grp = n * G + co // (COUT // G)
    mean = tl.load(stat_ptr + grp * 2)
    rstd = tl.load(stat_ptr + grp * 2 + 1)
    gamma = tl.load(gamma_ptr + co)
    beta = tl.load(beta_ptr + co)
    hw = H_out * W_out
    base = ((n.to(tl.int64) * COUT + co) * D_out + od) * hw  # (COUT,)
    for ph in tl.static_range(2):
        for pw in tl.static_range(2):
            oh = 2 * jh + ph
            ow = 2 * jw + pw
            pm = (oh < H_out) & (ow < W_out)
            acc = _convt_s2_tile(x_ptr, w_ptr, n, od, jh, jw, pm, D_in, H_in, W_in, ph, pw, PAD, CIN, COUT, BH * BW)
            s = _swish(acc + cb[None, :])
            y = (s - mean[None, :]) * rstd[None, :] * gamma[None, :] + beta[None, :]
            y = y * tl.minimum(tl.maximum(y + 3.0, 0.0), 6.0) / 6.0
            tl.store(y_ptr + base[None, :] + (oh * W_out + ow)[:, None], y, mask=pm[:, None])


class ModelNew(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, stride, padding, groups, eps, bias=True):
        super().__init__()
        self.conv_transpose = nn.ConvTranspose3d(in_channels, out_channels, kernel_size, stride=stride,
                                                 padding=padding, bias=bias)
        self.group_norm = nn.GroupNorm(num_groups=groups, num_channels=out_channels, eps=eps)

    def _fits(self, x: torch.Tensor) -> bool:
        ct, gn = self.conv_transpose, self.group_norm
        cout = ct.out_channels
        cpg = cout // gn.num_groups
        return (x.is_cuda and x.dtype == torch.float32 and x.dim() == 5 and ct.kernel_size == (3, 3, 3)
                and ct.stride == (2, 2, 2) and ct.padding[0] == ct.padding[1] == ct.padding[2]
                and ct.dilation == (1, 1, 1) and ct.groups == 1 and ct.output_padding == (0, 0, 0)
                and ct.bias is not None and cout & (cout - 1) == 0 and cout <= 32 and gn.affine
                and cpg & (cpg - 1) == 0)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if not self._fits(x):
            y = self.conv_transpose(x)
            y = torch.sigmoid(y) * y
            return F.hardswish(self.group_norm(y))
        return self._fused(x)

    def _fused(self, x: torch.Tensor) -> torch.Tensor:
        ct, gn = self.conv_transpose, self.group_norm
        x = x.contiguous()
        w = ct.weight.contiguous()
        n, cin, d, h, wi = x.shape
        cout, g, pad = ct.out_channels, gn.num_groups, ct.padding[0]
        do, ho, wo = (d - 1) * 2 - 2 * pad + 3, (h - 1) * 2 - 2 * pad + 3, (wi - 1) * 2 - 2 * pad + 3
        bw = triton.next_power_of_2((wo + 1) // 2)
        bh = max(1, 256 // bw)
        grid = (n * do, triton.cdiv((ho + 1) // 2, bh))
        n_part = do * grid[1]
        cnt = torch.empty(n * n_part, device=x.device, dtype=torch.float32)
        mean = torch.empty(n * n_part, cout, device=x.device, dtype=torch.float32)
        m2 = torch.empty_like(mean)
        stats = torch.empty(n * g, 2, device=x.device, dtype=torch.float32)
        consts = dict(PAD=pad, CIN=cin, COUT=cout, BH=bh, BW=bw)
        _stats_kernel[grid](x, w, ct.bias, cnt, mean, m2, d, h, wi, do, ho, wo, **consts, num_warps=4)
        _finalize_kernel[(n * g,)](cnt, mean, m2, stats, n_part, gn.eps, G=g, COUT=cout, CPG=cout // g,
                                   BLOCK_PART=triton.next_power_of_2(n_part), num_warps=4)
        y = torch.empty(n, cout, do, ho, wo, device=x.device, dtype=x.dtype)
        _apply_kernel[grid](x, w, ct.bias, stats, gn.weight, gn.bias, y, d, h, wi, do, ho, wo, **consts, G=g,
                            num_warps=4)
        return y
