"""Backward kernels of the pooling ops (avg_pool2d, avg_pool3d, max_pool2d, bias_relu_max_pool2d), written as
gathers: one program per (plane, input depth, BLOCK_H x BLOCK_W input tile) computes each input element's
gradient from the ``ceil(K / S)`` windows per dimension that can contain it, so every element of ``dx`` is
written exactly once (no zero fill, no atomics: the result is deterministic and the same on every run).
Window geometry as the forward (:mod:`._pool`): floor mode, no dilation, padding at most half the window.

Average: ``dx[i] = sum over windows w containing i of dy[w] / divisor(w)``; the divisor is the window size
(``count_include_pad``) or its number of in-bounds taps. One read of ``dy`` (re-read from L1/L2 where windows
overlap) and one write of ``dx``; ``x`` is not read.

Max (2-D): each covering window's argmax is recomputed from ``x`` with PyTorch's rule (row-major scan, ``v > best
or isnan(v)``: the first maximum wins a tie, the last NaN wins over everything, and a window of -inf routes to
its first in-bounds tap) and ``dy`` of the windows whose argmax is ``i`` is summed. With ``RELU`` the window is
taken over ``z = x + bias[channel]`` and its gradient routed only where ``relu`` passes it (``not z <= 0``, as
PyTorch's ``threshold_backward``: NaN passes); each program then also writes its tile's sum of ``dx`` (the
gradient of ``z``) as a partial of ``dbias``, summed per channel afterwards. Non-overlapping windows (stride >=
kernel, e.g. 2x2 stride 2) recompute one window per input element: one read of ``x`` and ``dy``, one write of
``dx``. Overlapping ones (3x3 stride 2) recompute up to ``ceil(K/S)^2`` windows per element from L1/L2,
the price of determinism against a scatter with atomics.

Shapes: ``x`` (N, C, *spatial) or (C, *spatial); ``dy`` the pooled shape; fp32, bf16 or fp16 (fp32 math, one
rounding at the store); ``dx`` contiguous in ``x``'s dtype.
"""

from __future__ import annotations

from collections.abc import Callable

import torch

from .._triton import tl, triton
from ..arch import check_table, pick
from ..kernel_specs import TritonKernel
from ..registry import on_kernels
from ._pool import pool_geometry

__all__ = ["CONFIGS", "avg_pool_backward", "avg_pool_backward_launch", "kernels", "max_pool2d_backward_launch"]

#: input tiles of BLOCK_H x BLOCK_W (the forward's tuned output tile, not re-tuned for the backward)
CONFIGS = {
    "sm80": {"BLOCK_H": 4, "BLOCK_W": 64, "num_warps": 4},
    "sm86": {"BLOCK_H": 4, "BLOCK_W": 64, "num_warps": 4},
    "sm89": {"BLOCK_H": 4, "BLOCK_W": 64, "num_warps": 4},
    "sm90": {"BLOCK_H": 4, "BLOCK_W": 64, "num_warps": 4},
}
check_table(CONFIGS, "pool_backward")


@triton.jit
def _avg_pool_bwd_kernel(dy_ptr, dx_ptr, D, H, W, OD, OH, OW,
                         KD: tl.constexpr, KH: tl.constexpr, KW: tl.constexpr, SD: tl.constexpr, SH: tl.constexpr,
                         SW: tl.constexpr, PD: tl.constexpr, PH: tl.constexpr, PW: tl.constexpr,
                         COUNT_PAD: tl.constexpr, BLOCK_H: tl.constexpr, BLOCK_W: tl.constexpr):
    pid0 = tl.program_id(0)
    d = pid0 % D
    plane = (pid0 // D).to(tl.int64)
    h = tl.program_id(1) * BLOCK_H + tl.arange(0, BLOCK_H)
    w = tl.program_id(2) * BLOCK_W + tl.arange(0, BLOCK_W)
    dv = h * 0 + d  # the input depth as a vector: one mask expression for the interpreter and the GPU
    h_in = h < H
    w_in = w < W
    acc = tl.zeros((BLOCK_H, BLOCK_W), tl.float32)
    for jd in tl.static_range((KD + SD - 1) // SD):
        od = (dv + PD) // SD - jd
        d_ok = (od >= 0) & (od < OD) & (dv + PD - od * SD < KD)
        cd = tl.minimum(od * SD - PD + KD, D) - tl.maximum(od * SD - PD, 0)
        for jh in tl.static_range((KH + SH - 1) // SH):
            oh = (h + PH) // SH - jh
            h_ok = d_ok & h_in & (oh >= 0) & (oh < OH) & (h + PH - oh * SH < KH)
            ch = cd * (tl.minimum(oh * SH - PH + KH, H) - tl.maximum(oh * SH - PH, 0))
            row = ((plane * OD + od) * OH + oh) * OW
            for jw in tl.static_range((KW + SW - 1) // SW):
                ow = (w + PW) // SW - jw
                w_ok = w_in & (ow >= 0) & (ow < OW) & (w + PW - ow * SW < KW)
                m = h_ok[:, None] & w_ok[None, :]
                g = tl.load(dy_ptr + row[:, None] + ow[None, :], mask=m, other=0.0).to(tl.float32)
                if COUNT_PAD:
                    acc += g
                else:
                    cw = tl.minimum(ow * SW - PW + KW, W) - tl.maximum(ow * SW - PW, 0)
                    acc += g / tl.maximum(ch[:, None] * cw[None, :], 1).to(tl.float32)
    if COUNT_PAD:
        acc = acc / (KD * KH * KW)
    x_off = ((plane * D + d) * H + h[:, None]) * W + w[None, :]
    tl.store(dx_ptr + x_off, acc.to(dx_ptr.dtype.element_ty), mask=h_in[:, None] & w_in[None, :])


@triton.jit
def _max_pool2d_bwd_kernel(x_ptr, b_ptr, dy_ptr, dx_ptr, dbp_ptr, C, H, W, OH, OW,
                           KH: tl.constexpr, KW: tl.constexpr, SH: tl.constexpr, SW: tl.constexpr,
                           PH: tl.constexpr, PW: tl.constexpr, RELU: tl.constexpr, HAS_B: tl.constexpr,
                           NEED_DX: tl.constexpr, NEED_DB: tl.constexpr, BLOCK_H: tl.constexpr,
                           BLOCK_W: tl.constexpr):
    plane = tl.program_id(0)
    h = tl.program_id(1) * BLOCK_H + tl.arange(0, BLOCK_H)
    w = tl.program_id(2) * BLOCK_W + tl.arange(0, BLOCK_W)
    x_base = x_ptr + plane.to(tl.int64) * H * W
    dy_base = dy_ptr + plane.to(tl.int64) * OH * OW
    if HAS_B:
        bias = tl.load(b_ptr + plane % C).to(tl.float32)
    h_in = h < H
    w_in = w < W
    acc = tl.zeros((BLOCK_H, BLOCK_W), tl.float32)
    for jh in tl.static_range((KH + SH - 1) // SH):
        oh = (h + PH) // SH - jh
        h_ok = h_in & (oh >= 0) & (oh < OH) & (h + PH - oh * SH < KH)
        h0 = oh * SH - PH
        for jw in tl.static_range((KW + SW - 1) // SW):
            ow = (w + PW) // SW - jw
            w_ok = w_in & (ow >= 0) & (ow < OW) & (w + PW - ow * SW < KW)
            w0 = ow * SW - PW
            win = h_ok[:, None] & w_ok[None, :]
            # window (oh, ow)'s argmax, PyTorch's scan: starts at the first in-bounds tap, takes v > best or NaN
            best = tl.full((BLOCK_H, BLOCK_W), float("-inf"), tl.float32)
            arg_h = tl.zeros((BLOCK_H, BLOCK_W), tl.int32) + tl.maximum(h0, 0)[:, None]
            arg_w = tl.zeros((BLOCK_H, BLOCK_W), tl.int32) + tl.maximum(w0, 0)[None, :]
            for kh in tl.static_range(KH):
                ih = h0 + kh
                ih_ok = win & ((ih >= 0) & (ih < H))[:, None]
                for kw in tl.static_range(KW):
                    iw = w0 + kw
                    m = ih_ok & ((iw >= 0) & (iw < W))[None, :]
                    v = tl.load(x_base + ih[:, None] * W + iw[None, :], mask=m, other=float("-inf")).to(tl.float32)
                    if HAS_B:
                        v = v + bias
                    take = m & ((v > best) | (v != v))
                    best = tl.where(take, v, best)
                    arg_h = tl.where(take, ih[:, None], arg_h)
                    arg_w = tl.where(take, iw[None, :], arg_w)
            hit = win & (arg_h == h[:, None]) & (arg_w == w[None, :])
            if RELU:
                hit = hit & ~(best <= 0.0)
            acc += tl.load(dy_base + oh[:, None] * OW + ow[None, :], mask=hit, other=0.0).to(tl.float32)
    if NEED_DX:
        x_off = plane.to(tl.int64) * H * W + h[:, None] * W + w[None, :]
        tl.store(dx_ptr + x_off, acc.to(dx_ptr.dtype.element_ty), mask=h_in[:, None] & w_in[None, :])
    if NEED_DB:
        tile = (plane * tl.num_programs(1) + tl.program_id(1)) * tl.num_programs(2) + tl.program_id(2)
        tl.store(dbp_ptr + tile, tl.sum(tl.sum(acc, 1), 0))


def _geometry(x: torch.Tensor, dy: torch.Tensor, nd: int, kernel_size, stride, padding
              ) -> tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...], tuple[int, ...], tuple[int, ...]]:
    """(kernel, stride, padding, spatial, out_spatial) of ``nd``-D pooling of ``x`` (``_pool.pool_geometry``),
    validated against ``dy``."""
    k, s, p, spatial, out_sp = pool_geometry(x, nd, kernel_size, stride, padding)
    if tuple(dy.shape) != (*x.shape[:-nd], *out_sp):
        raise ValueError(f"dy must have the pooled shape {(*x.shape[:-nd], *out_sp)}, got {tuple(dy.shape)}")
    return k, s, p, spatial, out_sp


def _tile(cfg: dict, h: int, w: int) -> tuple[int, int]:
    return min(cfg["BLOCK_H"], triton.next_power_of_2(h)), min(cfg["BLOCK_W"], triton.next_power_of_2(w))


def avg_pool_backward_launch(x: torch.Tensor, dy: torch.Tensor, nd: int, kernel_size, stride, padding,
                             count_include_pad: bool = True, config: dict | None = None) -> torch.Tensor:
    """``dx`` of ``nd``-D (2 or 3) average pooling of ``x`` (only its shape and dtype are used) for the output
    gradient ``dy``; ``stride`` None or empty: the kernel size. ``dx``: ``x``'s shape and dtype, contiguous."""
    k, s, p, spatial, out_sp = _geometry(x, dy, nd, kernel_size, stride, padding)
    if nd == 2:
        k, s, p, spatial, out_sp = (1, *k), (1, *s), (0, *p), (1, *spatial), (1, *out_sp)
    cfg = config or pick(CONFIGS, x.device if x.is_cuda else None)
    dx = torch.empty(x.shape, device=x.device, dtype=x.dtype)
    if dx.numel():
        if dy.numel() == 0:
            return dx.zero_()
        bh, bw = _tile(cfg, spatial[1], spatial[2])
        grid = (dx.numel() // (spatial[1] * spatial[2]), triton.cdiv(spatial[1], bh), triton.cdiv(spatial[2], bw))
        _avg_pool_bwd_kernel[grid](dy.contiguous(), dx, *spatial, *out_sp, KD=k[0], KH=k[1], KW=k[2], SD=s[0],
                                   SH=s[1], SW=s[2], PD=p[0], PH=p[1], PW=p[2], COUNT_PAD=count_include_pad,
                                   BLOCK_H=bh, BLOCK_W=bw, num_warps=cfg["num_warps"])
    return dx


def avg_pool_backward(nd: int) -> Callable[[list, list, tuple], tuple | None]:
    """The ``fast_backward`` of the ``nd``-D average pool op (args ``x, kernel_size, stride, padding[,
    count_include_pad]``): :func:`avg_pool_backward_launch` on CUDA, None elsewhere (``registry.kernel_backward``)."""

    def backward(args: list, grads: list, needs: tuple) -> tuple | None:
        x, kernel_size, stride, padding, *rest = args
        (dy,) = grads
        if not on_kernels(x):
            return None
        if dy is None or not needs[0]:
            return (None,) * len(args)
        dx = avg_pool_backward_launch(x, dy, nd, kernel_size, stride, padding, rest[0] if rest else True)
        return (dx, *(None for _ in args[1:]))

    return backward


def max_pool2d_backward_launch(x: torch.Tensor, dy: torch.Tensor, kernel_size, stride, padding, *,
                               bias: torch.Tensor | None = None, relu: bool = False, need_dx: bool = True,
                               need_dbias: bool = False, config: dict | None = None
                               ) -> tuple[torch.Tensor | None, torch.Tensor | None]:
    """``(dx, dbias)`` of ``max_pool2d(z)`` with ``z = x + bias[channel]`` (``bias`` (C,) or None), passed
    through ``relu`` first when ``relu``, for the output gradient ``dy``. ``dx``: ``x``'s shape and dtype,
    contiguous (None unless ``need_dx``); ``dbias``: ``bias``'s shape and dtype, summed in fp32 (None unless
    ``need_dbias``, which takes a ``bias``)."""
    if need_dbias and bias is None:
        raise ValueError("need_dbias takes a bias")
    k, s, p, (h, w), (oh, ow) = _geometry(x, dy, 2, kernel_size, stride, padding)
    c = x.shape[-3]
    if bias is not None and bias.numel() != c:
        raise ValueError(f"bias must have {c} elements (one per channel), got shape {tuple(bias.shape)}")
    cfg = config or pick(CONFIGS, x.device if x.is_cuda else None)
    xc = x.contiguous()
    planes = xc.numel() // max(1, h * w)
    bh, bw = _tile(cfg, max(h, 1), max(w, 1))
    grid = (planes, triton.cdiv(h, bh), triton.cdiv(w, bw))
    dx = torch.empty_like(xc) if need_dx else None
    dbp = torch.empty(grid[0] * grid[1] * grid[2], device=x.device, dtype=torch.float32) if need_dbias else None
    if xc.numel():
        b = bias.contiguous().view(-1) if bias is not None else xc
        _max_pool2d_bwd_kernel[grid](xc, b, dy.contiguous(), dx if need_dx else xc, dbp if need_dbias else xc,
                                     c, h, w, oh, ow, KH=k[0], KW=k[1], SH=s[0], SW=s[1], PH=p[0], PW=p[1],
                                     RELU=relu, HAS_B=bias is not None, NEED_DX=need_dx, NEED_DB=need_dbias,
                                     BLOCK_H=bh, BLOCK_W=bw, num_warps=cfg["num_warps"])
    dbias = None
    if need_dbias:
        dbias = dbp.view(-1, c, grid[1] * grid[2]).sum((0, 2)).to(bias.dtype).view(bias.shape)
    return dx, dbias


def kernels(*, avg: dict | None = None, max2d: dict | None = None) -> list[TritonKernel]:
    """The kernels as an op module declares them in ``TRITON_KERNELS`` (fp32, with the op's task window as
    constexprs; the module exposes this file's table as ``POOL_BWD_CONFIGS``)."""
    out = []
    if avg is not None:
        out.append(TritonKernel(_avg_pool_bwd_kernel.__name__, {"dy_ptr": "*fp32", "dx_ptr": "*fp32",
                                **{n: "i32" for n in ("D", "H", "W", "OD", "OH", "OW")}},
                                constexprs=avg, configs="POOL_BWD_CONFIGS", defined_in=__name__))
    if max2d is not None:
        out.append(TritonKernel(_max_pool2d_bwd_kernel.__name__,
                                {"x_ptr": "*fp32", "b_ptr": "*fp32", "dy_ptr": "*fp32", "dx_ptr": "*fp32",
                                 "dbp_ptr": "*fp32", **{n: "i32" for n in ("C", "H", "W", "OH", "OW")}},
                                constexprs=max2d, configs="POOL_BWD_CONFIGS", defined_in=__name__))
    return out
