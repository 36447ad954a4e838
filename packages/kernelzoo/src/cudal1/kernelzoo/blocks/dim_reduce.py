"""Max and min over one dimension in one Triton launch each, launched through
:class:`~cudal1.kernelzoo.fast_launch.FastLaunch`: :func:`amax_dim` and :func:`amin_dim` return what
``torch.max(x, dim)[0]`` and ``torch.min(x, dim)[0]`` return (the values, ``keepdim=False``). Used by KernelBench
level 1's ``kernelbench_v0/pending`` solutions 49 and 53.

Why: at those tasks' sizes (x (16, 256, 256) fp32, 4 MB, reduced over dim 1) a call is mostly host time, and
eager's ``torch.max(x, dim)`` computes and allocates two outputs (values and int64 indices) of which the task keeps
one; here the host path is one ``torch.empty`` and one launch through the compiled kernel's launcher. Not yet
measured on a GPU.

The kernel, fp32: x viewed as (OUTER, R, INNER) (contiguous), the output as (OUTER, INNER); one program per
(outer index, BI consecutive inner columns) (:func:`reduce_tile`; a 1-D grid, outer-major); a run-time loop over
R, BR rows at a time, each load a BR x BI tile whose rows are BI consecutive floats (coalesced), folded elementwise
into a BR x BI accumulator that is reduced over its rows at the end. Masked-off elements are ``-inf`` (max) /
``+inf`` (min); every step is ``tl.maximum`` / ``tl.minimum`` with ``propagate_nan=ALL``, so a NaN anywhere in a
reduced line gives NaN, as ``torch.max`` / ``torch.min`` over a dim do. Max and min are exact: the order of the
steps does not change the result.

Shapes and dtypes: x any rank >= 1, float32 CUDA, contiguous (made so); ``dim`` in ``[-x.dim(), x.dim())``;
returns x's shape without ``dim``, float32. Anything else (CPU tensors, other dtypes, a 0-d x, an empty reduced
dim, a bad ``dim``: PyTorch raises for the last two, 2**31 elements or more) calls ``torch.max`` / ``torch.min``;
under ``TRITON_INTERPRET=1`` the kernel runs in Triton's interpreter on CPU tensors (the tests).
"""

from __future__ import annotations

import math

import torch

from .._triton import tl, triton
from ..fast_launch import FastLaunch
from .small_conv import interpreted

__all__ = ["amax_dim", "amin_dim", "reduce_tile"]

#: elements of a program's BR x BI load tile and accumulator: 16 a thread at 4 warps
REDUCE_TILE = 2048
#: fewest programs :func:`reduce_tile` aims for (an H100 has 132 SMs)
MIN_PROGRAMS = 128


@triton.jit
def _max_nan(a, b):
    return tl.maximum(a, b, propagate_nan=tl.PropagateNan.ALL)


@triton.jit
def _min_nan(a, b):
    return tl.minimum(a, b, propagate_nan=tl.PropagateNan.ALL)


@triton.jit
def _reduce_dim_kernel(x_ptr, y_ptr, R, INNER, NBLK, IS_MAX: tl.constexpr, BR: tl.constexpr, BI: tl.constexpr):
    pid = tl.program_id(0)
    o = pid // NBLK
    i = (pid % NBLK) * BI + tl.arange(0, BI)
    im = i < INNER
    rr = tl.arange(0, BR)
    xb = x_ptr + o * R * INNER
    if IS_MAX:
        acc = tl.full([BR, BI], float("-inf"), tl.float32)
    else:
        acc = tl.full([BR, BI], float("inf"), tl.float32)
    for r0 in range(0, R, BR):
        r = r0 + rr
        m = (r < R)[:, None] & im[None, :]
        p = xb + r[:, None] * INNER + i[None, :]
        if IS_MAX:
            acc = _max_nan(acc, tl.load(p, mask=m, other=float("-inf")))
        else:
            acc = _min_nan(acc, tl.load(p, mask=m, other=float("inf")))
    if IS_MAX:
        out = tl.reduce(acc, 0, _max_nan)
    else:
        out = tl.reduce(acc, 0, _min_nan)
    tl.store(y_ptr + o * INNER + i, out, mask=im)


def _pow2(v: int) -> int:
    return 1 << max(0, (v - 1).bit_length())


def reduce_tile(outer: int, r: int, inner: int) -> tuple[int, int, int]:
    """(BR, BI, num_warps) for x viewed as (outer, r, inner) reduced over r: BI the inner length's power of two up
    to 128, halved (down to 16) while there are fewer than :data:`MIN_PROGRAMS` programs; BR filling
    :data:`REDUCE_TILE` elements but no more than r's power of two; 4 warps. KernelBench's (16, 256, 256) over dim 1:
    BR 64, BI 32, 16 x 8 = 128 programs of four steps each. Not yet tuned on a GPU."""
    bi = min(128, _pow2(inner))
    while bi > 16 and outer * -(-inner // bi) < MIN_PROGRAMS:
        bi //= 2
    return min(_pow2(r), max(1, REDUCE_TILE // bi)), bi, 4


_HANDLES: dict[tuple, FastLaunch] = {}


def _handle(**constexprs) -> FastLaunch:
    key = tuple(constexprs.items())
    h = _HANDLES.get(key)
    if h is None:
        h = _HANDLES[key] = FastLaunch(_reduce_dim_kernel, **constexprs)
    return h


#: (x.shape, dim, is_max, tile) -> (handle, grid, output shape, trailing launch arguments), or None where the kernel
#: does not apply (PyTorch runs the call): a call with a shape seen before does one dict lookup, one ``new_empty`` and
#: one launch on the host
_PLANS: dict[tuple, tuple[FastLaunch, tuple[int], tuple[int, ...], tuple[int, int, int]] | None] = {}


def _plan(x: torch.Tensor, dim: int, is_max: bool, tile: tuple[int, int, int] | None):
    """The launch reducing x's shape over ``dim``, or None (checked once per shape)."""
    nd = x.dim()
    if not (nd >= 1 and isinstance(dim, int) and -nd <= dim < nd and x.shape[dim] > 0 and 0 < x.numel() < 2**31):
        return None
    d = dim % nd
    outer, r, inner = math.prod(x.shape[:d]), x.shape[d], math.prod(x.shape[d + 1:])
    br, bi, num_warps = reduce_tile(outer, r, inner) if tile is None else tile
    nblk = -(-inner // bi)
    handle = _handle(IS_MAX=is_max, BR=br, BI=bi, num_warps=num_warps)
    return handle, (outer * nblk,), tuple(x.shape[:d] + x.shape[d + 1:]), (r, inner, nblk)


def _reduce(x: torch.Tensor, dim: int, is_max: bool, tile: tuple[int, int, int] | None) -> torch.Tensor:
    plan = None
    if x.dtype == torch.float32 and (x.is_cuda or (x.device.type == "cpu" and interpreted())):
        key = (x.shape, dim, is_max, tile)
        try:
            plan = _PLANS[key]
        except KeyError:
            plan = _PLANS[key] = _plan(x, dim, is_max, tile)
        except TypeError:  # an unhashable dim or tile: plan without keeping it
            plan = _plan(x, dim, is_max, tile)
    if plan is None:
        return (torch.max if is_max else torch.min)(x, dim)[0]
    handle, grid, out_shape, tail = plan
    y = x.new_empty(out_shape)
    handle(grid, x.contiguous(), y, *tail)
    return y


def amax_dim(x: torch.Tensor, dim: int, *, tile: tuple[int, int, int] | None = None) -> torch.Tensor:
    """``torch.max(x, dim)[0]``: x (..., R, ...) fp32, returns x's shape without ``dim``, fp32; NaN in a reduced
    line gives NaN. ``tile`` (BR, BI, num_warps) overrides :func:`reduce_tile`'s choice (tuning)."""
    return _reduce(x, dim, True, tile)


def amin_dim(x: torch.Tensor, dim: int, *, tile: tuple[int, int, int] | None = None) -> torch.Tensor:
    """``torch.min(x, dim)[0]``: x (..., R, ...) fp32, returns x's shape without ``dim``, fp32; NaN in a reduced
    line gives NaN. ``tile`` (BR, BI, num_warps) overrides :func:`reduce_tile`'s choice (tuning)."""
    return _reduce(x, dim, False, tile)
