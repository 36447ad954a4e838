"""Small convolutions in one Triton launch each, launched through :class:`~cudal1.kernelzoo.fast_launch.FastLaunch`:
depthwise 2-D (:func:`depthwise_conv2d`), 1-D (:func:`conv1d`) and transposed 1-D (:func:`conv_transpose1d`).
Used by KernelBench level 1's ``kernelbench_v0`` solutions 82 and 83 (and ``pending/85``).

Why: at these sizes (0.03-25 MB, microseconds of GPU work) a call is mostly host time. Eager's ``nn.Conv1d`` /
``nn.ConvTranspose1d`` / depthwise ``nn.Conv2d`` go through ``aten::convolution``'s dispatch and cuDNN's (or
PyTorch's depthwise) host path, sometimes two kernels (cuDNN's transposed convolution adds a
``scalePackedTensor``); here the host path is one ``torch.empty`` and one launch through the compiled kernel's
launcher. Earlier Triton versions of these kernels lost to eager on ``kernel[grid]``'s launch time alone
(benchmarks/results/2026-11-26-kernelbench-v0-release-h100.md).

What it gained, through the harness (eager baseline;
benchmarks/results/2026-11-27-kernelbench-v0-thirteenth-pass-h100.md): 83 (3x1 depthwise) and 82 (3x3) beat eager in
each of two runs; 85 (3x5) won once, then lost; 84 and the 1-D tasks 64, 67, 74, 76, 79 lost or tied. One launch plus
the allocation costs about what eager's whole call does at these sizes.

The kernels, fp32 (no TF32), every geometry value a compile-time constant:

* depthwise 2-D: one program per (plane ``n * C + c``, BH x BW output tile); the KH x KW taps unrolled as shifted
  masked loads (the overlaps come from L1/L2: DRAM sees about one read of x and one write of y); the sum in
  (row, column) tap order, bias added last. Zero padding, any stride and dilation.
* 1-D and transposed 1-D: one program per (sample, BC output channels, BL output positions); a run-time loop over
  the input channels BCI at a time, the K taps unrolled, each tap a ``tl.dot`` (``input_precision="ieee"``: fp32
  multiply-adds) of BC x BCI weights and BCI x BL inputs. The transposed form gathers: output j takes input
  ``i = (j + padding - k * dilation) / stride`` where that is a whole number inside the input (``output_padding``
  only lengthens the output). ``groups == 1``.

Shapes and dtypes: x (N, C, H, W) / (N, C_in, L) float32 CUDA, contiguous (made so); weight as the module holds it
((C, 1, KH, KW); (C_out, C_in, K); transposed (C_in, C_out, K)); bias (C_out,) or None. Output sizes follow
``torch.nn.functional``. Anything else (CPU tensors, other dtypes) calls ``torch.nn.functional``; under
``TRITON_INTERPRET=1`` the kernels run in Triton's interpreter on CPU tensors (the tests).
"""

from __future__ import annotations

import torch
import torch.nn.functional as F

from .._triton import HAVE_TRITON, tl, triton
from ..fast_launch import FastLaunch

__all__ = ["conv1d", "conv_transpose1d", "depthwise_conv2d", "depthwise_tile", "interpreted", "line_tile"]

#: output values a depthwise program computes (BH x BW): 8 a thread at 4 warps
DEPTHWISE_TILE = 1024


@triton.jit
def _depthwise_kernel(x_ptr, w_ptr, b_ptr, y_ptr, C, H, W, OH, OW,
                      KH: tl.constexpr, KW: tl.constexpr, SH: tl.constexpr, SW: tl.constexpr, PH: tl.constexpr,
                      PW: tl.constexpr, DH: tl.constexpr, DW: tl.constexpr, HAS_BIAS: tl.constexpr,
                      BH: tl.constexpr, BW: tl.constexpr):
    plane = tl.program_id(0)
    c = plane % C
    oh = tl.program_id(1) * BH + tl.arange(0, BH)
    ow = tl.program_id(2) * BW + tl.arange(0, BW)
    xb = x_ptr + plane.to(tl.int64) * H * W
    acc = tl.zeros([BH, BW], tl.float32)
    for kh in tl.static_range(KH):
        ih = oh * SH - PH + kh * DH
        rows = (ih >= 0) & (ih < H)
        for kw in tl.static_range(KW):
            iw = ow * SW - PW + kw * DW
            m = rows[:, None] & ((iw >= 0) & (iw < W))[None, :]
            wv = tl.load(w_ptr + c * (KH * KW) + kh * KW + kw)
            acc += tl.load(xb + ih[:, None] * W + iw[None, :], mask=m, other=0.0) * wv
    if HAS_BIAS:
        acc += tl.load(b_ptr + c)
    out = (oh < OH)[:, None] & (ow < OW)[None, :]
    tl.store(y_ptr + plane.to(tl.int64) * OH * OW + oh[:, None] * OW + ow[None, :], acc, mask=out)


@triton.jit
def _line_conv_kernel(x_ptr, w_ptr, b_ptr, y_ptr, CI, L, CO, OL,
                      K: tl.constexpr, STRIDE: tl.constexpr, PAD: tl.constexpr, DIL: tl.constexpr,
                      TRANSPOSED: tl.constexpr, HAS_BIAS: tl.constexpr, BC: tl.constexpr, BCI: tl.constexpr,
                      BL: tl.constexpr):
    n = tl.program_id(0)
    co = tl.program_id(1) * BC + tl.arange(0, BC)
    j = tl.program_id(2) * BL + tl.arange(0, BL)
    cr = tl.arange(0, BCI)
    cm = co < CO
    jm = j < OL
    xb = x_ptr + n.to(tl.int64) * CI * L
    acc = tl.zeros([BC, BL], tl.float32)
    for c0 in range(0, CI, BCI):
        ci = c0 + cr
        cim = ci < CI
        for k in tl.static_range(K):
            if TRANSPOSED:
                t = j + PAD - k * DIL
                i = t // STRIDE
                ok = jm & (t >= 0) & (i * STRIDE == t) & (i < L)
                wv = tl.load(w_ptr + (ci[None, :] * CO + co[:, None]) * K + k, mask=cm[:, None] & cim[None, :],
                             other=0.0)
            else:
                i = j * STRIDE - PAD + k * DIL
                ok = jm & (i >= 0) & (i < L)
                wv = tl.load(w_ptr + (co[:, None] * CI + ci[None, :]) * K + k, mask=cm[:, None] & cim[None, :],
                             other=0.0)
            xv = tl.load(xb + ci[:, None] * L + i[None, :], mask=cim[:, None] & ok[None, :], other=0.0)
            acc += tl.dot(wv, xv, input_precision="ieee")
    if HAS_BIAS:
        acc += tl.load(b_ptr + co, mask=cm, other=0.0)[:, None]
    y = y_ptr + n.to(tl.int64) * CO * OL + co[:, None] * OL + j[None, :]
    tl.store(y, acc, mask=cm[:, None] & jm[None, :])


def _pow2(v: int) -> int:
    return 1 << max(0, (v - 1).bit_length())


def depthwise_tile(oh: int, ow: int) -> tuple[int, int, int]:
    """(BH, BW, num_warps) of the depthwise kernel for an (oh, ow) output plane: BW the row's power of two up to
    256, BH filling :data:`DEPTHWISE_TILE` values but no taller than the plane, 4 warps (the tiles from 2x256
    to 64x64 were within the probe's noise of each other at KernelBench's sizes:
    benchmarks/results/2026-11-27-kernelbench-v0-thirteenth-pass-h100/call2-probe-small-conv.txt)."""
    bw = min(256, _pow2(ow))
    return min(max(1, DEPTHWISE_TILE // bw), _pow2(oh)), bw, 4


def line_tile(c_in: int, c_out: int, out_len: int) -> tuple[int, int, int, int]:
    """(BC, BCI, BL, num_warps) of the 1-D kernel, a ``tl.dot`` of BC x BCI weights and BCI x BL inputs per tap
    (each at least 16): BC the output channels' power of two up to 32, BCI 16, BL 32, 2 warps. In the probe (same
    file as :func:`depthwise_tile`) that tile was the fastest or close to it on four of the five 1-D tasks and
    a little behind a 64x32x32 tile on 64; the probe's run-to-run noise is larger than those gaps."""
    return min(32, max(16, _pow2(c_out))), 16, min(32, max(16, _pow2(out_len))), 2


_HANDLES: dict[tuple, FastLaunch] = {}


def _handle(kernel, **constexprs) -> FastLaunch:
    key = (id(kernel), *constexprs.items())
    h = _HANDLES.get(key)
    if h is None:
        h = _HANDLES[key] = FastLaunch(kernel, **constexprs)
    return h


def interpreted() -> bool:
    """Whether Triton runs kernels in its CPU interpreter (``TRITON_INTERPRET=1``)."""
    knobs = getattr(triton, "knobs", None) if HAVE_TRITON else None
    return bool(knobs is not None and knobs.runtime.interpret)


def _kernel_path(x: torch.Tensor) -> bool:
    return x.dtype == torch.float32 and (x.is_cuda or (x.device.type == "cpu" and interpreted()))


def _pair(v) -> tuple[int, int]:
    return (int(v), int(v)) if isinstance(v, int) else (int(v[0]), int(v[1]))


def _single(v) -> int:
    return int(v) if isinstance(v, int) else int(v[0])


def depthwise_conv2d(x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor | None, stride=1, padding=0,
                     dilation=1, *, tile: tuple[int, int, int] | None = None) -> torch.Tensor:
    """Depthwise ``conv2d`` (``groups == C``, one filter per channel, zero padding). x (N, C, H, W) fp32,
    weight (C, 1, KH, KW), bias (C,) or None; returns (N, C, OH, OW) fp32. ``tile`` (BH, BW, num_warps)
    overrides :func:`depthwise_tile`'s choice (tuning)."""
    if weight.dim() != 4 or weight.shape[1] != 1 or x.dim() != 4 or weight.shape[0] != x.shape[1]:
        raise ValueError(f"depthwise_conv2d needs x (N, C, H, W) and weight (C, 1, KH, KW); got "
                         f"{tuple(x.shape)} and {tuple(weight.shape)}")
    sh, sw = _pair(stride)
    ph, pw = _pair(padding)
    dh, dw = _pair(dilation)
    if not _kernel_path(x):
        return F.conv2d(x, weight, bias, (sh, sw), (ph, pw), (dh, dw), x.shape[1])
    n, c, h, w = x.shape
    kh, kw = weight.shape[2], weight.shape[3]
    oh = (h + 2 * ph - dh * (kh - 1) - 1) // sh + 1
    ow = (w + 2 * pw - dw * (kw - 1) - 1) // sw + 1
    y = torch.empty((n, c, max(oh, 0), max(ow, 0)), device=x.device, dtype=x.dtype)
    if y.numel() == 0:
        return y
    bh, bw, num_warps = depthwise_tile(oh, ow) if tile is None else tile
    handle = _handle(_depthwise_kernel, KH=kh, KW=kw, SH=sh, SW=sw, PH=ph, PW=pw, DH=dh, DW=dw,
                     HAS_BIAS=bias is not None, BH=bh, BW=bw, num_warps=num_warps)
    wc = weight.contiguous()
    handle((n * c, -(-oh // bh), -(-ow // bw)), x.contiguous(), wc, wc if bias is None else bias.contiguous(), y,
           c, h, w, oh, ow)
    return y


def _line(x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor | None, c_out: int, out_len: int, k: int,
          stride: int, padding: int, dilation: int, transposed: bool,
          tile: tuple[int, int, int, int] | None) -> torch.Tensor:
    n, c_in, length = x.shape
    y = torch.empty((n, c_out, max(out_len, 0)), device=x.device, dtype=x.dtype)
    if y.numel() == 0:
        return y
    bc, bci, bl, num_warps = line_tile(c_in, c_out, out_len) if tile is None else tile
    handle = _handle(_line_conv_kernel, K=k, STRIDE=stride, PAD=padding, DIL=dilation, TRANSPOSED=transposed,
                     HAS_BIAS=bias is not None, BC=bc, BCI=bci, BL=bl, num_warps=num_warps)
    wc = weight.contiguous()
    handle((n, -(-c_out // bc), -(-out_len // bl)), x.contiguous(), wc, wc if bias is None else bias.contiguous(),
           y, c_in, length, c_out, out_len)
    return y


def conv1d(x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor | None, stride=1, padding=0,
           dilation=1, *, tile: tuple[int, int, int, int] | None = None) -> torch.Tensor:
    """``conv1d`` with ``groups == 1`` and zero padding. x (N, C_in, L) fp32, weight (C_out, C_in, K), bias
    (C_out,) or None; returns (N, C_out, OL) fp32. ``tile`` (BC, BCI, BL, num_warps) overrides
    :func:`line_tile`'s choice (tuning)."""
    if x.dim() != 3 or weight.dim() != 3 or weight.shape[1] != x.shape[1]:
        raise ValueError(f"conv1d needs x (N, C_in, L) and weight (C_out, C_in, K) (groups 1); got "
                         f"{tuple(x.shape)} and {tuple(weight.shape)}")
    s, p, d = _single(stride), _single(padding), _single(dilation)
    if not _kernel_path(x):
        return F.conv1d(x, weight, bias, s, p, d)
    k = weight.shape[2]
    out_len = (x.shape[2] + 2 * p - d * (k - 1) - 1) // s + 1
    return _line(x, weight, bias, weight.shape[0], out_len, k, s, p, d, False, tile)


def conv_transpose1d(x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor | None, stride=1, padding=0,
                     output_padding=0, dilation=1, *,
                     tile: tuple[int, int, int, int] | None = None) -> torch.Tensor:
    """``conv_transpose1d`` with ``groups == 1``. x (N, C_in, L) fp32, weight (C_in, C_out, K), bias (C_out,) or
    None; returns (N, C_out, (L - 1) * stride - 2 * padding + dilation * (K - 1) + output_padding + 1) fp32.
    ``tile`` (BC, BCI, BL, num_warps) overrides :func:`line_tile`'s choice (tuning)."""
    if x.dim() != 3 or weight.dim() != 3 or weight.shape[0] != x.shape[1]:
        raise ValueError(f"conv_transpose1d needs x (N, C_in, L) and weight (C_in, C_out, K) (groups 1); got "
                         f"{tuple(x.shape)} and {tuple(weight.shape)}")
    s, p, op, d = _single(stride), _single(padding), _single(output_padding), _single(dilation)
    if not _kernel_path(x):
        return F.conv_transpose1d(x, weight, bias, s, p, op, 1, d)
    k = weight.shape[2]
    out_len = (x.shape[2] - 1) * s - 2 * p + d * (k - 1) + op + 1
    return _line(x, weight, bias, weight.shape[1], out_len, k, s, p, d, True, tile)
