"""2-D convolution with few input channels (and the depthwise-separable pair folded into one) as an outer-product
Triton kernel, launched through :class:`~cudal1.kernelzoo.fast_launch.FastLaunch`: :func:`conv2d` and
:func:`separable_conv2d`. Written for KernelBench level 1's 2-D convolutions of 3 input channels to 64 output
channels (55, 56, 62, 63, 80, 86, 87: 16 images of 128-256 x 128-256, 130-270 MB of output).

Why: cuDNN's fp32 convolutions (TF32 off) with 3 input channels run far below the GPU's rates there, and the CUDA C
direct convolution of :mod:`.conv_rows_cuda` writes its output at ~1 TB/s (1.03-1.09x on 62, 63, 80, 87; 0.96-0.98x
on 55, 56; its folded separable pair 0.69x on 86). The work is small per output (3 x KH x KW multiply-adds) and
the output large, so the kernel is built around the output: each program computes a BCO x BW tile (output
channels x consecutive positions of one output row) in registers, as a sum over the taps of outer products of a
weight column (BCO values) and a shifted input row segment (BW values, from L1/L2), and writes each channel's row
segment with coalesced stores.

The kernel, fp32 FMA (no TF32, no ``tl.dot``), every geometry value a compile-time constant: one program per
(image, output row, BW-wide column block) and BCO output channels; the taps in (input channel, kernel row, kernel
column) order, unrolled; zero padding as masked loads; bias added last. Separable: the tap weight is
``pointwise[co, c] * depthwise[c, kh, kw]``, formed in the kernel (the pair is one linear map, exact for every
input and weight; only the rounding order differs from running the two convolutions), and the depthwise bias
enters as ``sum_c pointwise[co, c] * depthwise_bias[c]``.

Shapes and dtypes: x (N, C_in, H, W) float32 CUDA, contiguous (made so); weight (C_out, C_in, KH, KW); separable:
depthwise weight (C_in, 1, KH, KW), pointwise weight (C_out, C_in, 1, 1); biases (C_out,) / (C_in,) or None;
returns (N, C_out, OH, OW) float32 with OH, OW as ``torch.nn.functional.conv2d`` computes them. One group (dense)
or ``groups == C_in`` depthwise (separable), at most :data:`MAX_TAPS` taps. Anything else (CPU tensors, other
dtypes, more taps) calls ``torch.nn.functional``; under ``TRITON_INTERPRET=1`` the kernel runs in Triton's
interpreter on CPU tensors (the tests).
"""

from __future__ import annotations

import torch
import torch.nn.functional as F

from .._triton import tl, triton
from ..fast_launch import FastLaunch
from .small_conv import interpreted

__all__ = ["MAX_TAPS", "conv2d", "conv_tile", "separable_conv2d"]

#: C_in x KH x KW taps the unrolled kernel takes (3 x 7 x 7 = 147); more go to PyTorch
MAX_TAPS = 160


@triton.jit
def _narrow_conv_kernel(x_ptr, w_ptr, dw_ptr, b_ptr, db_ptr, y_ptr, H, W, OH, OW, NWB,
                        CIN: tl.constexpr, COUT: tl.constexpr, KH: tl.constexpr, KW: tl.constexpr,
                        SH: tl.constexpr, SW: tl.constexpr, PH: tl.constexpr, PW: tl.constexpr,
                        DH: tl.constexpr, DW: tl.constexpr, SEPARABLE: tl.constexpr, HAS_BIAS: tl.constexpr,
                        HAS_DW_BIAS: tl.constexpr, BCO: tl.constexpr, BW: tl.constexpr):
    pid = tl.program_id(0)
    wb = pid % NWB
    t = pid // NWB
    oh = t % OH
    n = (t // OH).to(tl.int64)
    co = tl.program_id(1) * BCO + tl.arange(0, BCO)
    cm = co < COUT
    ow = wb * BW + tl.arange(0, BW)
    om = ow < OW
    xn = x_ptr + n * CIN * H * W
    acc = tl.zeros([BCO, BW], tl.float32)
    for c in tl.static_range(CIN):
        if SEPARABLE:
            pc = tl.load(w_ptr + co * CIN + c, mask=cm, other=0.0)
        for kh in tl.static_range(KH):
            ih = oh * SH - PH + kh * DH
            ihv = ih + tl.zeros([BW], tl.int32)  # a vector: Triton 3.x's interpreter turns vector & scalar into ints
            row_ok = om & (ihv >= 0) & (ihv < H)
            xr = xn + c * H * W + ih * W
            for kw in tl.static_range(KW):
                iw = ow * SW - PW + kw * DW
                xv = tl.load(xr + iw, mask=row_ok & (iw >= 0) & (iw < W), other=0.0)
                if SEPARABLE:
                    wv = pc * tl.load(dw_ptr + (c * KH + kh) * KW + kw)
                else:
                    wv = tl.load(w_ptr + co * (CIN * KH * KW) + (c * KH + kh) * KW + kw, mask=cm, other=0.0)
                acc += wv[:, None] * xv[None, :]
    if HAS_DW_BIAS:
        db = tl.zeros([BCO], tl.float32)
        for c in tl.static_range(CIN):
            db += tl.load(w_ptr + co * CIN + c, mask=cm, other=0.0) * tl.load(db_ptr + c)
        acc += db[:, None]
    if HAS_BIAS:
        acc += tl.load(b_ptr + co, mask=cm, other=0.0)[:, None]
    y = y_ptr + n * COUT * OH * OW + co[:, None] * (OH * OW) + oh * OW + ow[None, :]
    tl.store(y, acc, mask=cm[:, None] & om[None, :])


def _pow2(v: int) -> int:
    return 1 << max(0, (v - 1).bit_length())


def conv_tile(c_out: int, ow: int) -> tuple[int, int, int]:
    """(BCO, BW, num_warps): all output channels up to 64 (their power of two), the output row's power of two up to
    256, one warp per 2048 accumulator values (4-8 warps at KernelBench's sizes: 32 a thread). Not yet tuned."""
    bco, bw = min(64, _pow2(c_out)), min(256, _pow2(ow))
    return bco, bw, max(1, min(8, bco * bw // 2048))


_HANDLES: dict[tuple, FastLaunch] = {}


def _handle(**constexprs) -> FastLaunch:
    key = tuple(constexprs.items())
    h = _HANDLES.get(key)
    if h is None:
        h = _HANDLES[key] = FastLaunch(_narrow_conv_kernel, **constexprs)
    return h


def _pair(v) -> tuple[int, int]:
    return (int(v), int(v)) if isinstance(v, int) else (int(v[0]), int(v[1]))


def _kernel_path(x: torch.Tensor, taps: int) -> bool:
    return (x.dtype == torch.float32 and x.dim() == 4 and taps <= MAX_TAPS and x.numel() < 2**31
            and (x.is_cuda or (x.device.type == "cpu" and interpreted())))


def _launch(x: torch.Tensor, w: torch.Tensor, dw: torch.Tensor | None, b: torch.Tensor | None,
            db: torch.Tensor | None, c_out: int, kh: int, kw: int, stride, padding, dilation,
            tile: tuple[int, int, int] | None) -> torch.Tensor:
    (sh, sw), (ph, pw), (dh, dwl) = _pair(stride), _pair(padding), _pair(dilation)
    n, c_in, h, wd = x.shape
    oh = (h + 2 * ph - dh * (kh - 1) - 1) // sh + 1
    ow = (wd + 2 * pw - dwl * (kw - 1) - 1) // sw + 1
    y = x.new_empty((n, c_out, max(oh, 0), max(ow, 0)))
    if y.numel() == 0:
        return y
    bco, bw, num_warps = conv_tile(c_out, ow) if tile is None else tile
    handle = _handle(CIN=c_in, COUT=c_out, KH=kh, KW=kw, SH=sh, SW=sw, PH=ph, PW=pw, DH=dh, DW=dwl,
                     SEPARABLE=dw is not None, HAS_BIAS=b is not None, HAS_DW_BIAS=db is not None, BCO=bco, BW=bw,
                     num_warps=num_warps)
    nwb = -(-ow // bw)
    wc = w.contiguous()
    handle((n * oh * nwb, -(-c_out // bco)), x.contiguous(), wc, wc if dw is None else dw.contiguous(),
           wc if b is None else b.contiguous(), wc if db is None else db.contiguous(), y, h, wd, oh, ow, nwb)
    return y


def conv2d(x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor | None, stride=1, padding=0, dilation=1,
           groups: int = 1, *, tile: tuple[int, int, int] | None = None) -> torch.Tensor:
    """``F.conv2d`` with zero padding. x (N, C_in, H, W) fp32, weight (C_out, C_in, KH, KW), bias (C_out,) or None;
    returns (N, C_out, OH, OW) fp32. ``groups`` other than 1 runs PyTorch. ``tile`` (BCO, BW, num_warps) overrides
    :func:`conv_tile`'s choice (tuning)."""
    taps = weight.shape[1] * weight.shape[2] * weight.shape[3] if weight.dim() == 4 else MAX_TAPS + 1
    if groups != 1 or weight.dim() != 4 or weight.shape[1] != x.shape[1] or not _kernel_path(x, taps):
        return F.conv2d(x, weight, bias, stride, padding, dilation, groups)
    return _launch(x, weight, None, bias, None, weight.shape[0], weight.shape[2], weight.shape[3], stride, padding,
                   dilation, tile)


def separable_conv2d(x: torch.Tensor, depthwise_weight: torch.Tensor, depthwise_bias: torch.Tensor | None,
                     pointwise_weight: torch.Tensor, pointwise_bias: torch.Tensor | None, stride=1, padding=0,
                     dilation=1, *, tile: tuple[int, int, int] | None = None) -> torch.Tensor:
    """``F.conv2d(F.conv2d(x, depthwise_weight, depthwise_bias, stride, padding, dilation, C_in), pointwise_weight,
    pointwise_bias)`` as one launch. x (N, C_in, H, W) fp32, depthwise_weight (C_in, 1, KH, KW), pointwise_weight
    (C_out, C_in, 1, 1); returns (N, C_out, OH, OW) fp32. ``tile`` as :func:`conv2d`'s."""
    c_in = x.shape[1] if x.dim() == 4 else -1
    ok = (depthwise_weight.dim() == 4 and tuple(depthwise_weight.shape[:2]) == (c_in, 1)
          and pointwise_weight.dim() == 4 and tuple(pointwise_weight.shape[1:]) == (c_in, 1, 1))
    taps = c_in * depthwise_weight.shape[2] * depthwise_weight.shape[3] if ok else MAX_TAPS + 1
    if not (ok and _kernel_path(x, taps)):
        mid = F.conv2d(x, depthwise_weight, depthwise_bias, stride, padding, dilation, max(c_in, 1))
        return F.conv2d(mid, pointwise_weight, pointwise_bias)
    return _launch(x, pointwise_weight, depthwise_weight, pointwise_bias, depthwise_bias, pointwise_weight.shape[0],
                   depthwise_weight.shape[2], depthwise_weight.shape[3], stride, padding, dilation, tile)
