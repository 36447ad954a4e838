"""KernelBench level 2, 58_ConvTranspose3d_LogSumExp_HardSwish_Subtract_Clamp_Max (x: (128, 3, 16, 32, 32) fp32;
ConvTranspose3d(3 -> 16, k=3, stride 2, padding 1) -> (128, 16, 31, 63, 63); logsumexp over channels; ``h *
sigmoid(h + 3) / 6``; minus ``bias`` (16, 1, 1, 1), which broadcasts the single channel to 16; clamp(-1, 1); max
over those 16 channels -> (128, 1, 31, 63, 63)).

Eager writes the 1 GB transposed-convolution output (cuDNN is slow for 3 input channels), then reads it again in
logsumexp's several kernels and runs four more passes on the 250 MB result. Here ONE Triton kernel computes the
transposed convolution directly and finishes the whole tail in registers: a program owns one output depth plane
``od`` of one sample and 8 input rows; for each of the four (oh, ow) parity classes of the stride-2 output only
the kernel taps that land there are summed (1 or 2 per dimension, 3.4 of 27 on average, for all 16 output
channels at once as an outer product), then logsumexp, the hard-swish-like gate, the 16 bias subtractions,
clamp and max happen per position and only the (128, 1, 31, 63, 63) result is written (one 250 MB write, no
1 GB intermediate). About 1.6 GFMA in fp32 (no TF32). The reference's time is mostly the 1 GB conv output and
its re-reads, which go. The harness marks this task degenerate (left out of every average).

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
def _lse_gate_tile(acc, cb, bmin):
    """logsumexp over channels, ``h * sigmoid(h + 3) / 6``, ``max_c clamp(h - bias_c, -1, 1)``."""
    v = acc + cb[None, :]
    mx = tl.max(v, 1)
    s = tl.sum(tl.exp(v - mx[:, None]), 1)
    h = mx + tl.log(s)
    h = h * (1.0 / (1.0 + tl.exp(-(h + 3.0)))) / 6.0
    r = h[:, None] - bmin[None, :]
    r = tl.minimum(tl.maximum(r, -1.0), 1.0)
    return tl.max(r, 1)


@triton.jit
def _convt_lse_kernel(x_ptr, w_ptr, cb_ptr, b_ptr, y_ptr, D_in, H_in, W_in, D_out, H_out, W_out,
                      PAD: tl.constexpr, CIN: tl.constexpr, COUT: tl.constexpr,
                      BH: tl.constexpr, BW: tl.constexpr):
    pid = tl.program_id(0)
    n = pid // D_out
    od = pid % D_out
    p = tl.arange(0, BH * BW)
    jh = tl.program_id(1) * BH + p // BW
    jw = p % BW
    co = tl.arange(0, COUT)
    cb = tl.load(cb_ptr + co)
    bias = tl.load(b_ptr + co)
    out_base = (n.to(tl.int64) * D_out + od) * H_out * W_out
    for ph in tl.static_range(2):
        for pw in tl.static_range(2):
            oh = 2 * jh + ph
            ow = 2 * jw + pw
            pm = (oh < H_out) & (ow < W_out)
            acc = _convt_s2_tile(x_ptr, w_ptr, n, od, jh, jw, pm, D_in, H_in, W_in,
                                 ph, pw, PAD, CIN, COUT, BH * BW)
            r = _lse_gate_tile(acc, cb, bias)
            tl.store(y_ptr + out_base + oh * W_out + ow, r, mask=pm)


class ModelNew(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, stride, padding, bias_shape):
        super().__init__()
        self.conv_transpose = nn.ConvTranspose3d(in_channels, out_channels, kernel_size, stride=stride,
                                                 padding=padding)
        self.bias = nn.Parameter(torch.randn(bias_shape))

    def _fits(self, x: torch.Tensor) -> bool:
        ct = self.conv_transpose
        cout = ct.out_channels
        return (x.is_cuda and x.dtype == torch.float32 and x.dim() == 5 and ct.kernel_size == (3, 3, 3)
                and ct.stride == (2, 2, 2) and ct.padding[0] == ct.padding[1] == ct.padding[2]
                and ct.dilation == (1, 1, 1) and ct.groups == 1 and ct.output_padding == (0, 0, 0)
                and ct.bias is not None and cout & (cout - 1) == 0 and cout <= 32
                and self.bias.numel() == cout and self.bias.shape[0] == cout)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if not self._fits(x):
            y = self.conv_transpose(x)
            y = torch.logsumexp(y, dim=1, keepdim=True)
            y = y * torch.sigmoid(y + 3) / 6
            y = torch.clamp(y - self.bias, min=-1, max=1)
            return torch.max(y, dim=1, keepdim=True)[0]
        return self._fused(x)

    def _fused(self, x: torch.Tensor) -> torch.Tensor:
        ct = self.conv_transpose
        x = x.contiguous()
        n, cin, d, h, w = x.shape
        pad = ct.padding[0]
        do, ho, wo = (d - 1) * 2 - 2 * pad + 3, (h - 1) * 2 - 2 * pad + 3, (w - 1) * 2 - 2 * pad + 3
        y = torch.empty(n, 1, do, ho, wo, device=x.device, dtype=x.dtype)
        bw = triton.next_power_of_2((wo + 1) // 2)
        bh = max(1, 256 // bw)
        grid = (n * do, triton.cdiv((ho + 1) // 2, bh))
        _convt_lse_kernel[grid](x, ct.weight.contiguous(), ct.bias, self.bias.reshape(-1).contiguous(), y,
                                d, h, w, do, ho, wo, PAD=pad, CIN=cin, COUT=ct.out_channels, BH=bh, BW=bw,
                                num_warps=4)
        return y
