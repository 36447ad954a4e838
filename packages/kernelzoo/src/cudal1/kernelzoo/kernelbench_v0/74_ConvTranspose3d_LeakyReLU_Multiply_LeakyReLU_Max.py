"""KernelBench level 2, 74_ConvTranspose3d_LeakyReLU_Multiply_LeakyReLU_Max (x: (16, 16, 16, 32, 32) fp32;
ConvTranspose3d(16 -> 32, k=3, stride 2, padding 1, output_padding 1) -> (16, 32, 32, 64, 64), 268 MB;
leaky_relu(0.2); ``* multiplier`` (32, 1, 1, 1); leaky_relu(0.2); MaxPool3d(2) -> (16, 32, 16, 32, 32)).

Eager runs cuDNN's transposed convolution (268 MB written), then leaky ReLU, multiply and leaky ReLU (each a
268 MB read + write) and the pool (read). Here ONE Triton kernel computes the transposed convolution directly
(per output depth plane and (oh, ow) parity class only the taps that land there: 3.4 of 27 on average, so 54
FMAs per output value for all 32 channels at once as an outer product, fp32, no TF32; 3.6 GFMA in all): a
program owns one pooled depth index (two output planes) and two pooled rows; each 2x2x2 pooling window is
exactly the 8 (plane, parity) tiles at the same (jh, jw), so the activations are applied per tile and the pool
is an elementwise max of 8 register tiles. Only the 34 MB pooled result is written.

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
def _convt_act_pool_kernel(x_ptr, w_ptr, cb_ptr, mul_ptr, y_ptr, slope, D_in, H_in, W_in, D_p, H_p, W_p,
                           PAD: tl.constexpr, CIN: tl.constexpr, COUT: tl.constexpr,
                           BH: tl.constexpr, BW: tl.constexpr):
    pid = tl.program_id(0)
    n = pid // D_p
    a = pid % D_p
    p = tl.arange(0, BH * BW)
    jh = tl.program_id(1) * BH + p // BW  # pooled row = jh, pooled column = jw: window rows 2 jh + ph, columns 2 jw + pw
    jw = p % BW
    pm = (jh < H_p) & (jw < W_p)
    co = tl.arange(0, COUT)
    cb = tl.load(cb_ptr + co)
    mul = tl.load(mul_ptr + co)
    mx = tl.full([BH * BW, COUT], float("-inf"), tl.float32)
    for dd in tl.static_range(2):
        for ph in tl.static_range(2):
            for pw in tl.static_range(2):
                acc = _convt_s2_tile(x_ptr, w_ptr, n, 2 * a + dd, jh, jw, pm, D_in, H_in, W_in, ph, pw, PAD, CIN,
                                     COUT, BH * BW)
                v = acc + cb[None, :]
                v = tl.where(v >= 0, v, v * slope) * mul[None, :]
                v = tl.where(v >= 0, v, v * slope)
                mx = tl.maximum(mx, v)
    hw = H_p * W_p
    out = ((n.to(tl.int64) * COUT + co[None, :]) * D_p + a) * hw + (jh * W_p + jw)[:, None]
    tl.store(y_ptr + out, mx, mask=pm[:, None])


def _as3(v):
    return tuple(v) if isinstance(v, (tuple, list)) else (v, v, v)


class ModelNew(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, stride, padding, output_padding, multiplier_shape):
        super().__init__()
        self.conv_transpose = nn.ConvTranspose3d(in_channels, out_channels, kernel_size, stride=stride,
                                                 padding=padding, output_padding=output_padding)
        self.multiplier = nn.Parameter(torch.randn(multiplier_shape))
        self.leaky_relu = nn.LeakyReLU(negative_slope=0.2)
        self.max_pool = nn.MaxPool3d(kernel_size=2)

    def _fits(self, x: torch.Tensor) -> bool:
        ct, mp = self.conv_transpose, self.max_pool
        cout = ct.out_channels
        op = ct.output_padding
        return (x.is_cuda and x.dtype == torch.float32 and x.dim() == 5 and ct.kernel_size == (3, 3, 3)
                and ct.stride == (2, 2, 2) and ct.padding[0] == ct.padding[1] == ct.padding[2]
                and ct.dilation == (1, 1, 1) and ct.groups == 1 and op[0] == op[1] == op[2] and op[0] in (0, 1)
                and ct.bias is not None and cout & (cout - 1) == 0 and cout <= 32
                and tuple(self.multiplier.shape) == (cout, 1, 1, 1)
                and _as3(mp.kernel_size) == (2, 2, 2) and _as3(mp.stride) == (2, 2, 2)
                and _as3(mp.padding) == (0, 0, 0) and _as3(mp.dilation) == (1, 1, 1) and not mp.ceil_mode)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if not self._fits(x):
            y = self.leaky_relu(self.conv_transpose(x))
            return self.max_pool(self.leaky_relu(y * self.multiplier))
        return self._fused(x)

    def _fused(self, x: torch.Tensor) -> torch.Tensor:
        ct = self.conv_transpose
        x = x.contiguous()
        n, cin, d, h, w = x.shape
        cout, pad, op = ct.out_channels, ct.padding[0], ct.output_padding[0]
        do, ho, wo = ((s - 1) * 2 - 2 * pad + 3 + op for s in (d, h, w))
        dp, hp, wp = do // 2, ho // 2, wo // 2
        bw = triton.next_power_of_2(wp)
        bh = max(1, 64 // bw)
        y = torch.empty(n, cout, dp, hp, wp, device=x.device, dtype=x.dtype)
        grid = (n * dp, triton.cdiv(hp, bh))
        _convt_act_pool_kernel[grid](x, ct.weight.contiguous(), ct.bias, self.multiplier.reshape(-1).contiguous(),
                                     y, float(self.leaky_relu.negative_slope), d, h, w, dp, hp, wp, PAD=pad,
                                     CIN=cin, COUT=cout, BH=bh, BW=bw, num_warps=4)
        return y
