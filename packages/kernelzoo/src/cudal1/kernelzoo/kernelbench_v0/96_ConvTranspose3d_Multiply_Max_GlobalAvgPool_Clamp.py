"""KernelBench level 2, 96_ConvTranspose3d_Multiply_Max_GlobalAvgPool_Clamp (x: (128, 3, 16, 32, 32) fp32;
ConvTranspose3d(3 -> 16, k=3, stride 2, padding 1) -> (128, 16, 31, 63, 63), 1 GB; ``* scale``; MaxPool3d(2)
-> (128, 16, 15, 31, 31); global average; clamp(0, 1) -> (128, 16, 1, 1, 1)).

Eager writes the 1 GB convolution output (cuDNN is slow with 3 input channels), rereads it for the scale
(read + write) and the max pool, then averages. Here one Triton kernel computes the transposed convolution
directly (per output depth plane and (oh, ow) parity class only the taps that land there: 3.4 of 27 on average,
all 16 output channels at once, fp32 FMA, no TF32): a program owns one pooled depth index (two output planes)
and a block of pooled rows; each 2x2x2 pooling window is exactly the 8 (plane, parity) tiles at the same
(jh, jw), so the window max is an elementwise max of 8 register tiles; the program writes only its per-channel
sum of window maxima. A second tiny kernel adds the partial sums, divides and clamps. Nothing of the 1 GB
intermediate is ever written.

Measured figures: ``kernelbench_v0/measured.json`` (per GPU and baseline, checked against the results stores);
the figures this docstring once carried: benchmarks/results/2026-12-05-kernelbench-v0-docstring-figures.md.
"""

import torch
import torch.nn as nn
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
def _convt_maxpool_sum_kernel(x_ptr, w_ptr, cb_ptr, part_ptr, scale, D_in, H_in, W_in, D_p, H_p, W_p,
                              PAD: tl.constexpr, CIN: tl.constexpr, COUT: tl.constexpr,
                              BH: tl.constexpr, BW: tl.constexpr):
    pid = tl.program_id(0)
    n = pid // D_p
    a = pid % D_p
    hb = tl.program_id(1)
    p = tl.arange(0, BH * BW)
    jh = hb * BH + p // BW  # pooled row = jh, pooled column = jw: window rows 2 jh + ph, columns 2 jw + pw
    jw = p % BW
    pm = (jh < H_p) & (jw < W_p)
    co = tl.arange(0, COUT)
    cb = tl.load(cb_ptr + co)
    mx = tl.full([BH * BW, COUT], float("-inf"), tl.float32)
    for dd in tl.static_range(2):
        for ph in tl.static_range(2):
            for pw in tl.static_range(2):
                acc = _convt_s2_tile(x_ptr, w_ptr, n, 2 * a + dd, jh, jw, pm, D_in, H_in, W_in, ph, pw, PAD, CIN,
                                     COUT, BH * BW)
                mx = tl.maximum(mx, (acc + cb[None, :]) * scale)
    s = tl.sum(tl.where(pm[:, None], mx, 0.0), 0)
    tl.store(part_ptr + (pid * tl.num_programs(1) + hb) * COUT + co, s)


@triton.jit
def _mean_clamp_kernel(part_ptr, y_ptr, n_part, inv_count, lo, hi, COUT: tl.constexpr, BLOCK_PART: tl.constexpr):
    n = tl.program_id(0)
    k = tl.arange(0, BLOCK_PART)
    co = tl.arange(0, COUT)
    v = tl.load(part_ptr + (n * n_part + k[:, None]) * COUT + co[None, :], mask=(k < n_part)[:, None], other=0.0)
    m = tl.sum(v, 0) * inv_count
    tl.store(y_ptr + n * COUT + co, tl.minimum(tl.maximum(m, lo), hi))


def _as3(v):
    return tuple(v) if isinstance(v, (tuple, list)) else (v, v, v)


class ModelNew(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, stride, padding, scale, maxpool_kernel_size):
        super().__init__()
        self.conv_transpose = nn.ConvTranspose3d(in_channels, out_channels, kernel_size, stride=stride,
                                                 padding=padding)
        self.scale = scale
        self.maxpool = nn.MaxPool3d(kernel_size=maxpool_kernel_size)
        self.global_avg_pool = nn.AdaptiveAvgPool3d((1, 1, 1))
        self.clamp_min = 0
        self.clamp_max = 1

    def _fits(self, x: torch.Tensor) -> bool:
        ct, mp = self.conv_transpose, self.maxpool
        cout = ct.out_channels
        return (x.is_cuda and x.dtype == torch.float32 and x.dim() == 5 and ct.kernel_size == (3, 3, 3)
                and ct.stride == (2, 2, 2) and ct.padding[0] == ct.padding[1] == ct.padding[2]
                and ct.dilation == (1, 1, 1) and ct.groups == 1 and ct.output_padding == (0, 0, 0)
                and ct.bias is not None and cout & (cout - 1) == 0 and cout <= 32
                and _as3(mp.kernel_size) == (2, 2, 2) and _as3(mp.stride) == (2, 2, 2)
                and _as3(mp.padding) == (0, 0, 0) and _as3(mp.dilation) == (1, 1, 1) and not mp.ceil_mode
                and tuple(self.global_avg_pool.output_size) == (1, 1, 1))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if not self._fits(x):
            y = self.maxpool(self.conv_transpose(x) * self.scale)
            return torch.clamp(self.global_avg_pool(y), min=self.clamp_min, max=self.clamp_max)
        return self._fused(x)

    def _fused(self, x: torch.Tensor) -> torch.Tensor:
        ct = self.conv_transpose
        x = x.contiguous()
        n, cin, d, h, w = x.shape
        cout, pad = ct.out_channels, ct.padding[0]
        do, ho, wo = (d - 1) * 2 - 2 * pad + 3, (h - 1) * 2 - 2 * pad + 3, (w - 1) * 2 - 2 * pad + 3
        dp, hp, wp = do // 2, ho // 2, wo // 2
        bw = triton.next_power_of_2(wp)
        bh = max(1, 128 // bw)
        grid = (n * dp, triton.cdiv(hp, bh))
        n_part = dp * grid[1]
        part = torch.empty(n * n_part, cout, device=x.device, dtype=torch.float32)
        _convt_maxpool_sum_kernel[grid](x, ct.weight.contiguous(), ct.bias, part, float(self.scale), d, h, w,
                                        dp, hp, wp, PAD=pad, CIN=cin, COUT=cout, BH=bh, BW=bw, num_warps=4)
        y = torch.empty(n, cout, 1, 1, 1, device=x.device, dtype=x.dtype)
        _mean_clamp_kernel[(n,)](part, y, n_part, 1.0 / (dp * hp * wp), float(self.clamp_min),
                                 float(self.clamp_max), COUT=cout, BLOCK_PART=triton.next_power_of_2(n_part),
                                 num_warps=4)
        return y
