"""KernelBench level 2, 78_ConvTranspose3d_Max_Max_Sum (x: (16, 8, 16, 32, 32) fp32; ConvTranspose3d(8 -> 16,
k=3, stride 2, padding 1) -> (16, 16, 31, 63, 63); MaxPool3d(2) -> (16, 16, 15, 31, 31); MaxPool3d(3) ->
(16, 16, 5, 10, 10); sum over channels -> (16, 1, 5, 10, 10)).

Two non-overlapping max pools in a row are one max over each 6x6x6 block that starts at a multiple of 6 (the
floors drop conv indices 30 and 60..62). Eager writes the 126 MB convolution output (cuDNN), reads it for the
first pool, then pools and sums the small remainder (four launches). Here ONE Triton kernel computes the
transposed convolution directly, only where the result uses it (per output depth plane and (oh, ow) parity class
only the taps that land there: 3.4 of 27 on average, all 16 channels at once, fp32 FMA, no TF32): a program
owns one output block row (6 planes x 6 rows x 10 blocks), takes the elementwise max of its (plane, sub-row,
sub-column, parity) register tiles, sums the channels and writes 10 values. Nothing else is written.

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
def _convt_max6_sum_kernel(x_ptr, w_ptr, cb_ptr, y_ptr, D_in, H_in, W_in, D_q, H_q, W_q,
                           PAD: tl.constexpr, CIN: tl.constexpr, COUT: tl.constexpr,
                           BH: tl.constexpr, BW: tl.constexpr):
    pid = tl.program_id(0)
    n = pid // D_q
    a = pid % D_q
    p = tl.arange(0, BH * BW)
    bh = tl.program_id(1) * BH + p // BW  # output block (a, bh, bw) covers conv rows 6 bh .. 6 bh + 5
    bw = p % BW
    pm = (bh < H_q) & (bw < W_q)
    co = tl.arange(0, COUT)
    mx = tl.full([BH * BW, COUT], float("-inf"), tl.float32)
    for dd in range(6):
        for th in tl.static_range(3):
            for tw in tl.static_range(3):
                for ph in tl.static_range(2):  # conv row 2 (3 bh + th) + ph
                    for pw in tl.static_range(2):
                        acc = _convt_s2_tile(x_ptr, w_ptr, n, 6 * a + dd, 3 * bh + th, 3 * bw + tw, pm,
                                             D_in, H_in, W_in, ph, pw, PAD, CIN, COUT, BH * BW)
                        mx = tl.maximum(mx, acc)
    s = tl.sum(mx + tl.load(cb_ptr + co)[None, :], 1)
    tl.store(y_ptr + ((n.to(tl.int64) * D_q + a) * H_q + bh) * W_q + bw, s, mask=pm)


def _as3(v):
    return tuple(v) if isinstance(v, (tuple, list)) else (v, v, v)


def _is_pool(p: nn.MaxPool3d, k: int) -> bool:
    return (_as3(p.kernel_size) == (k, k, k) and _as3(p.stride) == (k, k, k) and _as3(p.padding) == (0, 0, 0)
            and _as3(p.dilation) == (1, 1, 1) and not p.ceil_mode and not p.return_indices)


class ModelNew(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, stride, padding):
        super().__init__()
        self.conv_transpose = nn.ConvTranspose3d(in_channels, out_channels, kernel_size, stride=stride,
                                                 padding=padding)
        self.max_pool1 = nn.MaxPool3d(kernel_size=2)
        self.max_pool2 = nn.MaxPool3d(kernel_size=3)

    def _fits(self, x: torch.Tensor) -> bool:
        ct = self.conv_transpose
        cout = ct.out_channels
        return (x.is_cuda and x.dtype == torch.float32 and x.dim() == 5 and ct.kernel_size == (3, 3, 3)
                and ct.stride == (2, 2, 2) and ct.padding[0] == ct.padding[1] == ct.padding[2]
                and ct.dilation == (1, 1, 1) and ct.groups == 1 and ct.output_padding == (0, 0, 0)
                and ct.bias is not None and cout & (cout - 1) == 0 and cout <= 32
                and _is_pool(self.max_pool1, 2) and _is_pool(self.max_pool2, 3))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if not self._fits(x):
            y = self.max_pool2(self.max_pool1(self.conv_transpose(x)))
            return torch.sum(y, dim=1, keepdim=True)
        return self._fused(x)

    def _fused(self, x: torch.Tensor) -> torch.Tensor:
        ct = self.conv_transpose
        x = x.contiguous()
        n, cin, d, h, w = x.shape
        cout, pad = ct.out_channels, ct.padding[0]
        dq, hq, wq = (((s - 1) * 2 - 2 * pad + 3) // 2 // 3 for s in (d, h, w))
        bw = triton.next_power_of_2(wq)
        bh = max(1, 16 // bw)
        y = torch.empty(n, 1, dq, hq, wq, device=x.device, dtype=x.dtype)
        grid = (n * dq, triton.cdiv(hq, bh))
        _convt_max6_sum_kernel[grid](x, ct.weight.contiguous(), ct.bias, y, d, h, w, dq, hq, wq, PAD=pad, CIN=cin,
                                     COUT=cout, BH=bh, BW=bw, num_warps=1)
        return y
