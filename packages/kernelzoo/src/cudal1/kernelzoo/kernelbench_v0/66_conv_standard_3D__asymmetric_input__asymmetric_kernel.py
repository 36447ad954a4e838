"""KernelBench level 1, 66_conv_standard_3D__asymmetric_input__asymmetric_kernel (x: (16, 3, 16, 256, 256) fp32, ``nn.Conv3d(3, 64, (3, 5, 7))``, stride 1, no padding, no bias by default -> (16, 64, 14, 252, 250) fp32).

With only 3 input channels a dense conv is mostly output: 50 MB read, 3.6 GB written, 284 G multiply-adds here, a reduction of
C_in * kernel-volume terms per output element. Eager runs cuDNN's generic ``implicit_convolveNd_sgemm`` (40.5 ms per call on an H100 in the
2026-11-24 self-run), which does poorly at so short a reduction. Here one Triton kernel computes the conv
directly: a program owns 128 output positions of one image and (up to) 64 output channels, walks the input
channels (runtime loop) and the kernel taps (unrolled), loads each tap's 128 shifted inputs once (the taps'
overlap served from L1/L2) and adds their outer product with the tap's weight column to a (64, 128) fp32
register accumulator; then adds the bias and writes the tile with contiguous stores. fp32 multiply-adds
throughout (no tensor cores), in the order channel, then taps. Expected ~2x: the output write and the fp32
multiply-adds are the floor, and the kernel needs neither an im2col buffer nor a padded copy. groups != 1 or
a non-zero padding mode falls back to PyTorch. Not yet measured on a GPU.
"""

import torch
import torch.nn as nn
import torch.nn.functional as F
import triton
import triton.language as tl


@triton.jit
def _direct_conv_kernel(x_ptr, w_ptr, b_ptr, y_ptr, C_IN, C_OUT, D, H, W, OD, OH, OW,
                        KD: tl.constexpr, KH: tl.constexpr, KW: tl.constexpr,
                        SD: tl.constexpr, SH: tl.constexpr, SW: tl.constexpr,
                        PD: tl.constexpr, PH: tl.constexpr, PW: tl.constexpr,
                        DD: tl.constexpr, DH: tl.constexpr, DW: tl.constexpr,
                        HAS_BIAS: tl.constexpr, BLOCK_P: tl.constexpr, BLOCK_CO: tl.constexpr):
    p = tl.program_id(0) * BLOCK_P + tl.arange(0, BLOCK_P)
    co = tl.program_id(1) * BLOCK_CO + tl.arange(0, BLOCK_CO)
    n = tl.program_id(2).to(tl.int64)
    out_plane = OD * OH * OW
    p_ok = p < out_plane
    co_ok = co < C_OUT
    od = p // (OH * OW)
    oh = (p // OW) % OH
    ow = p % OW
    acc = tl.zeros((BLOCK_CO, BLOCK_P), tl.float32)
    w_co = w_ptr + co * (C_IN * KD * KH * KW)
    for c in range(C_IN):
        x_base = x_ptr + (n * C_IN + c) * D * H * W
        for kd in tl.static_range(KD):
            i_d = od * SD - PD + kd * DD
            d_ok = p_ok & (i_d >= 0) & (i_d < D)
            for kh in tl.static_range(KH):
                i_h = oh * SH - PH + kh * DH
                h_ok = d_ok & (i_h >= 0) & (i_h < H)
                row = (i_d * H + i_h) * W
                for kw in tl.static_range(KW):
                    i_w = ow * SW - PW + kw * DW
                    m = h_ok & (i_w >= 0) & (i_w < W)
                    xv = tl.load(x_base + row + i_w, mask=m, other=0.0)
                    wv = tl.load(w_co + ((c * KD + kd) * KH + kh) * KW + kw, mask=co_ok, other=0.0)
                    acc += wv[:, None] * xv[None, :]
    if HAS_BIAS:
        acc += tl.load(b_ptr + co, mask=co_ok, other=0.0)[:, None]
    y_off = (n * C_OUT + co[:, None]) * out_plane + p[None, :]
    tl.store(y_ptr + y_off, acc, mask=co_ok[:, None] & p_ok[None, :])


def direct_conv(x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor | None, stride, padding,
                dilation) -> torch.Tensor:
    """Dense (groups = 1) conv of ``x`` (N, C_in, *spatial) with 1-3 spatial dims, ``weight`` (C_out, C_in,
    *kernel), ``bias`` (C_out,) or None, fp32, zero padding; stride/padding/dilation one int per spatial dim."""
    nd = x.dim() - 2
    lead = (1,) * (3 - nd)
    n, c_in = x.shape[:2]
    d, h, w = lead + tuple(x.shape[2:])
    c_out = weight.shape[0]
    kd, kh, kw = lead + tuple(weight.shape[2:])
    (sd, sh, sw), (pd, ph, pw), (dd, dh, dw) = lead + tuple(stride), (0,) * (3 - nd) + tuple(padding), \
        lead + tuple(dilation)
    od = (d + 2 * pd - dd * (kd - 1) - 1) // sd + 1
    oh = (h + 2 * ph - dh * (kh - 1) - 1) // sh + 1
    ow = (w + 2 * pw - dw * (kw - 1) - 1) // sw + 1
    y = torch.empty((n, c_out) + (od, oh, ow)[3 - nd:], device=x.device, dtype=torch.float32)
    block_co = min(64, triton.next_power_of_2(c_out))
    block_p = 128
    wc = weight.contiguous()
    grid = (triton.cdiv(od * oh * ow, block_p), triton.cdiv(c_out, block_co), n)
    _direct_conv_kernel[grid](x.contiguous(), wc, bias if bias is not None else wc, y, c_in, c_out, d, h, w,
                              od, oh, ow, KD=kd, KH=kh, KW=kw, SD=sd, SH=sh, SW=sw, PD=pd, PH=ph, PW=pw,
                              DD=dd, DH=dh, DW=dw, HAS_BIAS=bias is not None, BLOCK_P=block_p,
                              BLOCK_CO=block_co, num_warps=4)
    return y


class ModelNew(nn.Module):
    def __init__(self, in_channels: int, out_channels: int, kernel_size: tuple, stride: tuple = (1, 1, 1), padding: tuple = (0, 0, 0), dilation: tuple = (1, 1, 1), groups: int = 1, bias: bool = False):
        super().__init__()
        self.conv3d = nn.Conv3d(in_channels, out_channels, kernel_size, stride=stride, padding=padding, dilation=dilation, groups=groups, bias=bias)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        c = self.conv3d
        if not x.is_cuda or c.groups != 1 or isinstance(c.padding, str) or c.padding_mode != "zeros":
            return F.conv3d(x, c.weight, c.bias, c.stride, c.padding, c.dilation, c.groups)
        return direct_conv(x, c.weight, c.bias, c.stride, c.padding, c.dilation)
