"""KernelBench level 2, 23_Conv3d_GroupNorm_Mean (x: (128, 3, 16, 32, 32) fp32; Conv3d(3 -> 16, k=3) ->
(128, 16, 14, 30, 30), 103 MB; GroupNorm(8 groups, affine); mean over (C, D, H, W) -> (128,)).

The mean of the group norm's output needs only statistics: with per-channel means m_c and per-group mean mu_g
and 1/std r_g, mean_{c,s}(gamma_c (v - mu_g) r_g + beta_c) = (1/C) sum_c [gamma_c (m_c - mu_g) r_g + beta_c]
(exact algebra, every input and parameter value). cuDNN runs the convolution (module weight, fp32, no TF32,
without its bias) and ONE Triton kernel, a program per (sample, group), reads the group's channel planes once:
per channel the mean (bias added) and, re-reading the just-loaded 50 KB plane from L1/L2, the centred sum of
squares; channels merge into group statistics with Chan's formula (no E[x^2] - E[x]^2 cancellation); it writes
the group's share of the mean, and a (128, 8) sum gives the result. Eager adds the bias, runs the group norm
(statistics read + normalise read/write of 103 MB) and the mean (another read): our tail is one read of the conv
output and two launches.

Measured figures: ``kernelbench_v0/measured.json`` (per GPU and baseline, checked against the results stores);
the figures this docstring once carried: benchmarks/results/2026-12-05-kernelbench-v0-docstring-figures.md.
"""

import torch
import torch.nn as nn
import torch.nn.functional as F
import triton
import triton.language as tl


@triton.jit
def _gn_mean_kernel(y_ptr, cb_ptr, gamma_ptr, beta_ptr, part_ptr, plane, eps, G,
                    C: tl.constexpr, CPG: tl.constexpr, CPG2: tl.constexpr, BLOCK: tl.constexpr):
    pid = tl.program_id(0)  # n * G + g
    g = pid % G
    j = tl.arange(0, CPG2)
    jm = j < CPG
    zero = tl.sum(tl.zeros([BLOCK], tl.float32), 0)
    means = tl.zeros([CPG2], tl.float32)
    cnt_a = zero
    mean_a = zero
    m2_a = zero
    for k in range(CPG):
        c = g * CPG + k
        base = (pid.to(tl.int64) * CPG + k) * plane  # = (n * C + c) * plane
        cb = tl.load(cb_ptr + c)
        s = tl.zeros([BLOCK], tl.float32)
        for start in range(0, plane, BLOCK):
            o = start + tl.arange(0, BLOCK)
            s += tl.load(y_ptr + base + o, mask=o < plane, other=0.0)
        m = tl.sum(s, 0) / plane + cb  # channel mean with the conv bias
        q = tl.zeros([BLOCK], tl.float32)
        for start in range(0, plane, BLOCK):  # centred pass: the 50 KB plane was just read (L1/L2)
            o = start + tl.arange(0, BLOCK)
            d = tl.where(o < plane, tl.load(y_ptr + base + o, mask=o < plane, other=0.0) + cb - m, 0.0)
            q += d * d
        means = tl.where(j == k, m, means)
        cnt_new = cnt_a + plane
        delta = m - mean_a
        frac = plane / cnt_new
        mean_a = mean_a + delta * frac
        m2_a = m2_a + tl.sum(q, 0) + delta * delta * cnt_a * frac
        cnt_a = cnt_new
    rstd = 1.0 / tl.sqrt(m2_a / cnt_a + eps)
    gam = tl.load(gamma_ptr + g * CPG + j, mask=jm, other=0.0)
    bet = tl.load(beta_ptr + g * CPG + j, mask=jm, other=0.0)
    contrib = tl.sum(tl.where(jm, gam * (means - mean_a) * rstd + bet, 0.0), 0)
    tl.store(part_ptr + pid, contrib / C)


class ModelNew(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, num_groups):
        super().__init__()
        self.conv = nn.Conv3d(in_channels, out_channels, kernel_size)
        self.group_norm = nn.GroupNorm(num_groups, out_channels)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        conv, gn = self.conv, self.group_norm
        if not (x.is_cuda and x.dtype == torch.float32 and conv.bias is not None and gn.affine):
            return gn(conv(x)).mean(dim=[1, 2, 3, 4])
        y = F.conv3d(x, conv.weight, None, conv.stride, conv.padding, conv.dilation, conv.groups).contiguous()
        n, c = y.shape[:2]
        plane = y[0, 0].numel()
        G = gn.num_groups
        cpg = c // G
        part = torch.empty((n, G), device=y.device, dtype=y.dtype)
        block = max(16, min(2048, triton.next_power_of_2(plane)))
        _gn_mean_kernel[(n * G,)](y, conv.bias, gn.weight, gn.bias, part, plane, gn.eps, G,
                                  C=c, CPG=cpg, CPG2=triton.next_power_of_2(cpg), BLOCK=block, num_warps=8)
        return part.sum(dim=1)
