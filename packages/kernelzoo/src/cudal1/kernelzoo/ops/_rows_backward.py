"""Backward kernels of the row ops (softmax, log_softmax, l2_normalize) and of max over a dimension, written once;
the explicit backward of sum and mean over a dimension; and the registration of the three dimension reductions.

Each kernel recomputes its row statistics in fp32 from ``x`` (the forward saves nothing but its inputs) and
writes ``dx`` in one pass, ``dy`` the output gradient (``p = softmax(x)``, ``y`` the op's output)::

    softmax:       dx = p * (dy - sum(dy * p))
    log_softmax:   dx = dy - p * sum(dy)
    l2_normalize:  dx = (dy - y * sum(dy * y)) / d,   d = max(||x||, eps), y = x / d;
                   dx = dy / eps where ||x|| < eps (the clamp passes no gradient to the norm, as torch)
    max_dim:       dx = (dy / count) * (x == max)     (torch.amax's rule: ties share the gradient evenly; a row
                   with a NaN has no match, so count 0 and the whole row gets NaN, as torch)

Rows (the last dimension of a contiguous (R, N) view) up to ``MAX_N`` columns are held whole in registers
(a (BLOCK_M, next_pow2(N)) tile per program, ``_rows.row_tile``): one read of ``x`` and ``dy``, one write of
``dx``. Longer rows: one program per row, an online statistics pass (max and rescaled sums, as the forward's
looped kernels), then a write pass (two reads, one write). Max over a middle dimension (``inner > 1`` in the
(outer, R, inner) view): ``_max_bwd_mid_kernel``, tiles coalesced along the contiguous inner dimension, a
max-and-count pass down R and a write pass. fp32, bf16, fp16 (fp32 math, one rounding at the store); CUDA.

sum and mean need no kernel: their gradient is ``dy`` broadcast back over the reduced dimension (scaled by
``1 / R`` for the mean), an expanded view of ``dy`` that costs nothing until a consumer reads it (autograd's
accumulation materialises a leaf's ``.grad`` in one pass); any kernel would write the R-times larger tensor
that the view avoids. :data:`REDUCE_BACKWARDS` holds the three reductions' backwards, which ``_reduce.reduce_op``
registers as their ``fast_backward=``.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import torch

from .._triton import tl, triton
from ..arch import check_table, pick
from ..kernel_specs import TritonKernel
from ..registry import on_kernels
from ._reduce import MID_CONFIGS
from ._rows import row_tile

__all__ = ["CONFIGS", "OPS", "TILE_CONFIGS", "expand_backward", "kernels", "max_backward_launch", "REDUCE_BACKWARDS",
           "row_fast_backward", "rows_backward_launch"]

#: op -> the kernels' OP code
OPS = {"softmax": 0, "log_softmax": 1, "l2_normalize": 2, "max_dim": 3}

#: MAX_N/MIN_TILE/EPT/MAX_WARPS: the registers-resident tile (``_rows.row_tile``; two tensors per element, so
#: half the forward's MAX_N); BLOCK/num_warps: the looped kernel for rows longer than MAX_N (untuned)
CONFIGS = {
    "sm80": {"MAX_N": 16384, "MIN_TILE": 2048, "EPT": 16, "MAX_WARPS": 32, "BLOCK": 2048, "num_warps": 8},
    "sm86": {"MAX_N": 16384, "MIN_TILE": 2048, "EPT": 16, "MAX_WARPS": 32, "BLOCK": 2048, "num_warps": 8},
    "sm89": {"MAX_N": 16384, "MIN_TILE": 2048, "EPT": 16, "MAX_WARPS": 32, "BLOCK": 2048, "num_warps": 8},
    "sm90": {"MAX_N": 16384, "MIN_TILE": 4096, "EPT": 16, "MAX_WARPS": 32, "BLOCK": 4096, "num_warps": 16},
}
check_table(CONFIGS, "rows_backward")
#: the largest tile each family runs (one row of MAX_N), for the compile check
TILE_CONFIGS = {fam: row_tile(1, cfg["MAX_N"], cfg) for fam, cfg in CONFIGS.items()}


@triton.jit
def _rows_bwd_tile_kernel(x_ptr, dy_ptr, dx_ptr, n_rows, n_cols, eps, OP: tl.constexpr, BLOCK_M: tl.constexpr,
                          BLOCK_N: tl.constexpr):
    """dx (n_rows, n_cols) from x (n_rows, n_cols) and dy (n_rows, n_cols), or (n_rows,) for max."""
    rows = tl.program_id(0).to(tl.int64) * BLOCK_M + tl.arange(0, BLOCK_M)
    rmask = rows < n_rows
    cols = tl.arange(0, BLOCK_N)
    mask = rmask[:, None] & (cols < n_cols)[None, :]
    offs = rows[:, None] * n_cols + cols[None, :]
    if OP == 2:  # l2_normalize
        x = tl.load(x_ptr + offs, mask=mask, other=0.0).to(tl.float32)
        dy = tl.load(dy_ptr + offs, mask=mask, other=0.0).to(tl.float32)
        norm = tl.sqrt(tl.sum(x * x, 1))
        d = tl.where(norm < eps, eps, norm)[:, None]  # NaN norm stays NaN
        y = x / d
        k = tl.where(norm >= eps, tl.sum(dy * y, 1), 0.0)[:, None]
        dx = (dy - y * k) / d
    elif OP == 3:  # max_dim
        x = tl.load(x_ptr + offs, mask=mask, other=float("-inf")).to(tl.float32)
        g = tl.load(dy_ptr + rows, mask=rmask, other=0.0).to(tl.float32)
        has_nan = tl.max((x != x).to(tl.int32), 1) > 0
        m = tl.where(has_nan, float("nan"), tl.max(x, 1))
        hit = ((x == m[:, None]) & mask).to(tl.float32)  # padding (-inf) must not tie with a row of -inf
        dx = (g / tl.sum(hit, 1))[:, None] * hit
    else:
        x = tl.load(x_ptr + offs, mask=mask, other=float("-inf")).to(tl.float32)
        dy = tl.load(dy_ptr + offs, mask=mask, other=0.0).to(tl.float32)
        e = tl.exp(x - tl.max(x, 1)[:, None])  # a row of -inf or with a NaN gives NaN, as torch
        p = e / tl.sum(e, 1)[:, None]
        if OP == 0:
            dx = p * (dy - tl.sum(dy * p, 1)[:, None])
        else:
            dx = dy - p * tl.sum(dy, 1)[:, None]
    tl.store(dx_ptr + offs, dx.to(dx_ptr.dtype.element_ty), mask=mask)


@triton.jit
def _rows_bwd_loop_kernel(x_ptr, dy_ptr, dx_ptr, n_cols, eps, OP: tl.constexpr, BLOCK: tl.constexpr):
    """As ``_rows_bwd_tile_kernel``, one program per row of any length: a statistics pass, then a write pass."""
    row = tl.program_id(0).to(tl.int64)
    base = row * n_cols
    if OP == 2:
        a = tl.zeros([BLOCK], tl.float32)  # sum of x^2
    else:
        a = tl.full([BLOCK], float("-inf"), tl.float32)  # running max (NaN counted apart)
    b = tl.zeros([BLOCK], tl.float32)  # sum of exp(x - a) | l2: sum of dy * x | max: ties of a
    c = tl.zeros([BLOCK], tl.float32)  # softmax: sum of dy * exp(x - a) | log_softmax: sum of dy
    nan = tl.zeros([BLOCK], tl.int32)
    for start in range(0, n_cols, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        mask = cols < n_cols
        if OP == 2:
            x = tl.load(x_ptr + base + cols, mask=mask, other=0.0).to(tl.float32)
            dy = tl.load(dy_ptr + base + cols, mask=mask, other=0.0).to(tl.float32)
            a += x * x
            b += dy * x
        else:
            x = tl.load(x_ptr + base + cols, mask=mask, other=float("-inf")).to(tl.float32)
            nan = nan | (x != x).to(tl.int32)
            x = tl.where(x != x, float("-inf"), x)
            m = tl.maximum(a, x)
            if OP == 3:
                b = tl.where(m > a, 0.0, b) + ((x == m) & mask).to(tl.float32)
            else:
                dy = tl.load(dy_ptr + base + cols, mask=mask, other=0.0).to(tl.float32)
                # lanes that have seen only -inf keep 0 (avoid inf - inf)
                scale = tl.where(m == float("-inf"), 0.0, tl.exp(a - m))
                e = tl.where(m == float("-inf"), 0.0, tl.exp(x - m))
                b = b * scale + e
                if OP == 0:
                    c = c * scale + dy * e
                else:
                    c += dy
            a = m
    if OP == 2:
        norm = tl.sqrt(tl.sum(a, 0))
        d = tl.where(norm < eps, eps, norm)
        k = tl.where(norm >= eps, tl.sum(b, 0) / d, 0.0)  # sum(dy * y)
    else:
        mx = tl.max(a, 0)
        has_nan = tl.max(nan, 0) > 0
        if OP == 3:
            count = tl.where(has_nan, 0.0, tl.sum(tl.where(a == mx, b, 0.0), 0))
            g = tl.load(dy_ptr + row).to(tl.float32) / count
        else:
            f = tl.where(a == float("-inf"), 0.0, tl.exp(a - mx))
            s = tl.sum(b * f, 0)
            if OP == 0:
                k = tl.sum(c * f, 0) / s  # sum(dy * p)
            else:
                k = tl.sum(c, 0)
        mx = tl.where(has_nan, float("nan"), mx)
    for start in range(0, n_cols, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        mask = cols < n_cols
        if OP == 2:
            x = tl.load(x_ptr + base + cols, mask=mask, other=0.0).to(tl.float32)
            dy = tl.load(dy_ptr + base + cols, mask=mask, other=0.0).to(tl.float32)
            dx = (dy - x / d * k) / d
        elif OP == 3:
            x = tl.load(x_ptr + base + cols, mask=mask, other=0.0).to(tl.float32)
            dx = g * (x == mx).to(tl.float32)
        else:
            x = tl.load(x_ptr + base + cols, mask=mask, other=0.0).to(tl.float32)
            dy = tl.load(dy_ptr + base + cols, mask=mask, other=0.0).to(tl.float32)
            p = tl.exp(x - mx) / s
            if OP == 0:
                dx = p * (dy - k)
            else:
                dx = dy - p * k
        tl.store(dx_ptr + base + cols, dx.to(dx_ptr.dtype.element_ty), mask=mask)


@triton.jit
def _max_bwd_mid_kernel(x_ptr, dy_ptr, dx_ptr, n_red, inner, BLOCK_R: tl.constexpr, BLOCK_I: tl.constexpr):
    """dx (outer, n_red, inner) of max over the middle dimension of x (outer, n_red, inner), dy (outer, inner);
    grid (outer, cdiv(inner, BLOCK_I))."""
    o = tl.program_id(0).to(tl.int64)
    cols = tl.program_id(1) * BLOCK_I + tl.arange(0, BLOCK_I)
    cmask = cols < inner
    base = o * n_red * inner + cols[None, :]
    m = tl.full([BLOCK_R, BLOCK_I], float("-inf"), tl.float32)
    ties = tl.zeros([BLOCK_R, BLOCK_I], tl.float32)
    nan = tl.zeros([BLOCK_R, BLOCK_I], tl.int32)
    for start in range(0, n_red, BLOCK_R):
        r = start + tl.arange(0, BLOCK_R)
        mask = (r < n_red)[:, None] & cmask[None, :]
        x = tl.load(x_ptr + base + r.to(tl.int64)[:, None] * inner, mask=mask, other=float("-inf")).to(tl.float32)
        nan = nan | (x != x).to(tl.int32)
        x = tl.where(x != x, float("-inf"), x)
        m_new = tl.maximum(m, x)
        ties = tl.where(m_new > m, 0.0, ties) + ((x == m_new) & mask).to(tl.float32)
        m = m_new
    mx = tl.max(m, 0)
    has_nan = tl.max(nan, 0) > 0
    count = tl.where(has_nan, 0.0, tl.sum(tl.where(m == mx[None, :], ties, 0.0), 0))
    mx = tl.where(has_nan, float("nan"), mx)
    g = tl.load(dy_ptr + o * inner + cols, mask=cmask, other=0.0).to(tl.float32) / count
    for start in range(0, n_red, BLOCK_R):
        r = start + tl.arange(0, BLOCK_R)
        mask = (r < n_red)[:, None] & cmask[None, :]
        offs = base + r.to(tl.int64)[:, None] * inner
        x = tl.load(x_ptr + offs, mask=mask, other=0.0).to(tl.float32)
        dx = g[None, :] * (x == mx[None, :]).to(tl.float32)
        tl.store(dx_ptr + offs, dx.to(dx_ptr.dtype.element_ty), mask=mask)


def _launch_rows(code: int, x: torch.Tensor, dy: torch.Tensor, n_rows: int, n_cols: int, eps: float,
                 cfg: dict) -> torch.Tensor:
    """dx of contiguous ``x`` viewed as (n_rows, n_cols) with the tile kernel, or the looped one past MAX_N."""
    dx = torch.empty_like(x)
    if not (n_rows and n_cols):
        return dx
    tile = row_tile(n_rows, n_cols, cfg)
    if tile is not None:
        _rows_bwd_tile_kernel[(triton.cdiv(n_rows, tile["BLOCK_M"]),)](x, dy, dx, n_rows, n_cols, eps, OP=code,
                                                                       **tile)
    else:
        _rows_bwd_loop_kernel[(n_rows,)](x, dy, dx, n_cols, eps, OP=code, BLOCK=cfg["BLOCK"],
                                         num_warps=cfg["num_warps"])
    return dx


def rows_backward_launch(op: str, x: torch.Tensor, dy: torch.Tensor, eps: float = 0.0,
                         config: dict | None = None) -> torch.Tensor:
    """``dx`` of row op ``op`` ("softmax", "log_softmax" or "l2_normalize", over the last dimension) at ``x``
    (..., N) for the output gradient ``dy`` (``x``'s shape); ``eps``: l2_normalize's. Contiguous, ``x``'s dtype."""
    if op not in ("softmax", "log_softmax", "l2_normalize"):
        raise ValueError(f"no row backward kernel for {op!r}; known: softmax, log_softmax, l2_normalize")
    if dy.shape != x.shape:
        raise ValueError(f"dy must have x's shape {tuple(x.shape)}, got {tuple(dy.shape)}")
    cfg = config or pick(CONFIGS, x.device if x.is_cuda else None)
    n_cols = x.shape[-1] if x.dim() else 1
    return _launch_rows(OPS[op], x.contiguous(), dy.contiguous(), x.numel() // max(n_cols, 1), n_cols, float(eps),
                        cfg)


def max_backward_launch(x: torch.Tensor, dim: int, dy: torch.Tensor, config: dict | None = None,
                        mid_config: dict | None = None) -> torch.Tensor:
    """``dx`` of ``torch.amax(x, dim)`` for the output gradient ``dy`` (the reduced shape, with or without
    keepdim): ``dy / count`` at every maximum of its slice (NaN over a slice holding a NaN), 0 elsewhere.
    Contiguous, ``x``'s shape and dtype. ``config``: this module's table (last dimension); ``mid_config``:
    BLOCK_R/BLOCK_I/num_warps (a middle dimension; default ``_reduce.MID_CONFIGS``)."""
    nd = max(x.dim(), 1)
    if not -nd <= dim < nd:
        raise IndexError(f"dim {dim} is out of range for a tensor of {x.dim()} dimensions")
    d = dim % nd
    shape = tuple(x.shape) if x.dim() else (1,)
    outer, n_red, inner = math.prod(shape[:d]), shape[d], math.prod(shape[d + 1:])
    if dy.numel() != outer * inner:
        raise ValueError(f"dy must have the reduced shape of x {tuple(x.shape)} over dim {dim}, got "
                         f"{tuple(dy.shape)}")
    xc, dyc = x.contiguous(), dy.contiguous()
    dev = x.device if x.is_cuda else None
    if inner == 1:
        return _launch_rows(OPS["max_dim"], xc, dyc, outer, n_red, 0.0, config or pick(CONFIGS, dev))
    dx = torch.empty_like(xc)
    if xc.numel():
        cfg = mid_config or pick(MID_CONFIGS, dev)
        bi = min(cfg["BLOCK_I"], triton.next_power_of_2(inner))
        br = min(cfg["BLOCK_R"], triton.next_power_of_2(n_red))
        _max_bwd_mid_kernel[(outer, triton.cdiv(inner, bi))](xc, dyc, dx, n_red, inner, BLOCK_R=br, BLOCK_I=bi,
                                                            num_warps=cfg["num_warps"])
    return dx


def row_fast_backward(op: str) -> Callable[[list, list, tuple], Any]:
    """The ``fast_backward=`` of row op ``op`` (``registry.kernel_backward``; its arguments are ``x`` then, for
    l2_normalize, ``eps``): the kernels on CUDA fp32/bf16/fp16, None (the reference's VJP) elsewhere."""

    def backward(args: list, grads: list, needs: tuple) -> tuple | None:
        x, *scalars = args
        (dy,) = grads
        if dy is None or not on_kernels(x):
            return None
        dx = rows_backward_launch(op, x, dy, *scalars) if needs[0] else None
        return (dx, *(None for _ in scalars))

    return backward


def _max_backward(args: list, grads: list, needs: tuple) -> tuple | None:
    (x, dim, _keepdim), (dy,) = args, grads
    if dy is None or not on_kernels(x):
        return None
    return max_backward_launch(x, dim, dy) if needs[0] else None, None, None


def expand_backward(mean: bool) -> Callable[[list, list, tuple], Any]:
    """The backward of sum (``mean=False``) or mean over ``dim``: ``dy`` (divided by the reduced size for the
    mean, on the small tensor) broadcast back to ``x``'s shape as an expanded view, as torch's VJP (which
    divides after the expansion, writing a full tensor). Exact on every device and dtype, so it never declines."""

    def backward(args: list, grads: list, needs: tuple) -> tuple | None:
        (x, dim, keepdim), (dy,) = args, grads
        if dy is None:
            return None
        if not needs[0]:
            return None, None, None
        if x.dim() == 0:
            return dy.reshape(()), None, None
        d = dim % x.dim()
        g = dy if keepdim else dy.unsqueeze(d)
        if mean and x.shape[d]:
            g = g / x.shape[d]
        return g.expand(x.shape), None, None

    return backward


#: reduction -> its backward (``registry.kernel_backward``'s ``fast``)
REDUCE_BACKWARDS = {"sum": expand_backward(False), "mean": expand_backward(True), "max": _max_backward}


_PTRS = {"x_ptr": "*bf16", "dy_ptr": "*bf16", "dx_ptr": "*bf16"}


def kernels(op: str) -> list[TritonKernel]:
    """The backward kernels as op ``op``'s module declares them in ``TRITON_KERNELS`` (bf16); the module exposes
    this file's ``CONFIGS`` as ``ROWS_BWD_CONFIGS`` and ``TILE_CONFIGS`` as ``ROWS_BWD_TILE_CONFIGS`` (and, for
    max_dim, ``_reduce.MID_CONFIGS`` as ``MID_CONFIGS``)."""
    const = {"OP": OPS[op]}
    out = [TritonKernel(_rows_bwd_tile_kernel.__name__, {**_PTRS, "n_rows": "i32", "n_cols": "i32", "eps": "fp32"},
                        constexprs=const, configs="ROWS_BWD_TILE_CONFIGS", defined_in=__name__),
           TritonKernel(_rows_bwd_loop_kernel.__name__, {**_PTRS, "n_cols": "i32", "eps": "fp32"}, constexprs=const,
                        configs="ROWS_BWD_CONFIGS", defined_in=__name__)]
    if op == "max_dim":
        out.append(TritonKernel(_max_bwd_mid_kernel.__name__, {**_PTRS, "n_red": "i32", "inner": "i32"},
                                configs="MID_CONFIGS", defined_in=__name__))
    return out
