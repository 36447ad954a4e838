"""Sum / mean / max over one dimension of a tensor: the kernels, launcher and op registration shared by
:mod:`.sum_dim`, :mod:`.mean_dim` and :mod:`.max_dim` (:func:`reduce_op`).

``x`` (contiguous) is viewed as ``(outer, R, inner)`` with ``R`` the reduced dimension:

* ``inner == 1`` (last dimension): ``_reduce_rows_kernel``, one program per BLOCK_M rows, a
  (BLOCK_M, BLOCK_N) tile loaded per step along the contiguous row, fp32 accumulators reduced at the end.
* ``inner > 1`` (a middle dimension): ``_reduce_mid_kernel``, no transpose: one program per
  (outer index, BLOCK_I inner columns), stepping down the R rows with (BLOCK_R, BLOCK_I) tiles that are
  coalesced along the contiguous inner dimension. When ``outer * ceil(inner / BLOCK_I)`` programs would not
  fill the GPU for several waves (``MIN_PROGRAMS``), R is split over a third grid axis into fp32 partials
  ``(outer, split, inner)``, reduced by the same kernel in a second, small launch. A last-dimension
  reduction of few long rows takes this path too, with ``inner = 1`` (contiguous along R).

One read of the input (4 bytes per fp32 element) and one write of the output; fp32 accumulation; max
propagates NaN (as ``torch.amax``); mean divides the fp32 sum by R.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import torch

from .._triton import tl, triton
from ..arch import check_table, pick
from ..kernel_specs import TritonKernel
from ..registry import call, zoo_custom_op

__all__ = ["MID_CONFIGS", "ROW_CONFIGS", "reduce_dim_launch", "reduce_kernels", "reduce_op", "reduced_shape"]

#: last-dimension reductions: BLOCK_M rows x BLOCK_N columns per step
ROW_CONFIGS = {
    "sm80": {"BLOCK_M": 4, "BLOCK_N": 1024, "num_warps": 8},
    "sm86": {"BLOCK_M": 4, "BLOCK_N": 512, "num_warps": 4},
    "sm89": {"BLOCK_M": 4, "BLOCK_N": 512, "num_warps": 4},
    "sm90": {"BLOCK_M": 4, "BLOCK_N": 1024, "num_warps": 8},
}
#: middle-dimension reductions: BLOCK_R reduced rows x BLOCK_I inner columns per step. R is split over more
#: programs while fewer than MIN_PROGRAMS (about 64 per SM) would run: with only a wave or two of long
#: programs the last, partial wave would leave most SMs idle; the fp32 partials cost ~0.1% extra traffic.
MID_CONFIGS = {
    "sm80": {"BLOCK_R": 32, "BLOCK_I": 128, "num_warps": 4, "MIN_PROGRAMS": 6912},
    "sm86": {"BLOCK_R": 16, "BLOCK_I": 128, "num_warps": 4, "MIN_PROGRAMS": 5248},
    "sm89": {"BLOCK_R": 16, "BLOCK_I": 128, "num_warps": 4, "MIN_PROGRAMS": 9088},
    "sm90": {"BLOCK_R": 32, "BLOCK_I": 128, "num_warps": 4, "MIN_PROGRAMS": 8448},
}
check_table(ROW_CONFIGS, "reduce rows")
check_table(MID_CONFIGS, "reduce mid")


@triton.jit
def _reduce_rows_kernel(x_ptr, y_ptr, n_rows, n_cols, divisor, IS_MAX: tl.constexpr, BLOCK_M: tl.constexpr,
                        BLOCK_N: tl.constexpr):
    rows = tl.program_id(0).to(tl.int64) * BLOCK_M + tl.arange(0, BLOCK_M)
    rmask = rows < n_rows
    base = rows[:, None] * n_cols
    if IS_MAX:
        acc = tl.full([BLOCK_M, BLOCK_N], float("-inf"), tl.float32)
    else:
        acc = tl.zeros([BLOCK_M, BLOCK_N], tl.float32)
    for start in range(0, n_cols, BLOCK_N):
        cols = start + tl.arange(0, BLOCK_N)
        mask = rmask[:, None] & (cols < n_cols)[None, :]
        if IS_MAX:
            x = tl.load(x_ptr + base + cols[None, :], mask=mask, other=float("-inf")).to(tl.float32)
            acc = tl.where((x > acc) | (x != x), x, acc)  # NaN sticks
        else:
            acc += tl.load(x_ptr + base + cols[None, :], mask=mask, other=0.0).to(tl.float32)
    if IS_MAX:
        has_nan = tl.max((acc != acc).to(tl.int32), 1) > 0
        r = tl.where(has_nan, float("nan"), tl.max(acc, 1))
    else:
        r = tl.sum(acc, 1) / divisor
    tl.store(y_ptr + rows, r.to(y_ptr.dtype.element_ty), mask=rmask)


@triton.jit
def _reduce_mid_kernel(x_ptr, y_ptr, n_red, inner, r_chunk, divisor, IS_MAX: tl.constexpr, BLOCK_R: tl.constexpr,
                       BLOCK_I: tl.constexpr):
    """y[o, s, i] = reduce over r in chunk s of x[o, r, i]; grid (outer, cdiv(inner, BLOCK_I), split)."""
    o = tl.program_id(0).to(tl.int64)
    split = tl.program_id(2)
    cols = tl.program_id(1) * BLOCK_I + tl.arange(0, BLOCK_I)
    cmask = cols < inner
    r_lo = split * r_chunk
    r_hi = tl.minimum(r_lo + r_chunk, n_red)
    base = x_ptr + o * n_red * inner + cols[None, :]
    if IS_MAX:
        acc = tl.full([BLOCK_R, BLOCK_I], float("-inf"), tl.float32)
    else:
        acc = tl.zeros([BLOCK_R, BLOCK_I], tl.float32)
    for start in range(r_lo, r_hi, BLOCK_R):
        r = start + tl.arange(0, BLOCK_R)
        mask = (r < r_hi)[:, None] & cmask[None, :]
        ptrs = base + r.to(tl.int64)[:, None] * inner
        if IS_MAX:
            x = tl.load(ptrs, mask=mask, other=float("-inf")).to(tl.float32)
            acc = tl.where((x > acc) | (x != x), x, acc)
        else:
            acc += tl.load(ptrs, mask=mask, other=0.0).to(tl.float32)
    if IS_MAX:
        has_nan = tl.max((acc != acc).to(tl.int32), 0) > 0
        res = tl.where(has_nan, float("nan"), tl.max(acc, 0))
    else:
        res = tl.sum(acc, 0) / divisor
    out = y_ptr + (o * tl.num_programs(2) + split) * inner + cols
    tl.store(out, res.to(y_ptr.dtype.element_ty), mask=cmask)


def reduced_shape(shape: tuple[int, ...] | torch.Size, dim: int, keepdim: bool) -> tuple[int, ...]:
    """Output shape of a reduction of ``shape`` over ``dim`` (already normalised)."""
    shape = tuple(shape)
    return shape[:dim] + ((1,) if keepdim else ()) + shape[dim + 1:]


def _normalise_dim(x: torch.Tensor, dim: int) -> int:
    nd = max(x.dim(), 1)
    if not -nd <= dim < nd:
        raise IndexError(f"dim {dim} is out of range for a tensor of {x.dim()} dimensions")
    return dim % nd


def reduce_dim_launch(x: torch.Tensor, dim: int, kind: str, keepdim: bool = False,
                      row_config: dict | None = None, mid_config: dict | None = None) -> torch.Tensor:
    """``kind`` ("sum", "mean" or "max") of ``x`` over ``dim`` with the Triton kernels (the interpreter
    included); output fp32-accumulated, in ``x``'s dtype, shape ``reduced_shape(x.shape, dim, keepdim)``."""
    if kind not in ("sum", "mean", "max"):
        raise ValueError(f"kind must be 'sum', 'mean' or 'max', got {kind!r}")
    if not x.is_floating_point():
        raise TypeError(f"expected a floating-point tensor, got {x.dtype}")
    d = _normalise_dim(x, dim)
    xc = x.contiguous()
    shape = tuple(xc.shape) if xc.dim() else (1,)
    outer, n_red, inner = math.prod(shape[:d]), shape[d], math.prod(shape[d + 1:])
    out_shape = reduced_shape(x.shape, d, keepdim) if x.dim() else ()
    if n_red == 0 and kind == "max":
        raise RuntimeError("max over an empty dimension has no identity: the reduced dimension has size 0")
    y = torch.empty(out_shape, dtype=x.dtype, device=x.device)
    if y.numel() == 0:
        return y
    if n_red == 0:
        return y.fill_(0.0 if kind == "sum" else float("nan"))
    is_max = kind == "max"
    divisor = float(n_red) if kind == "mean" else 1.0
    dev = x.device if x.is_cuda else None
    rcfg = row_config or pick(ROW_CONFIGS, dev)
    mcfg = mid_config or pick(MID_CONFIGS, dev)
    if inner == 1:
        bn = min(rcfg["BLOCK_N"], triton.next_power_of_2(n_red))
        bm = min(rcfg["BLOCK_M"], triton.next_power_of_2(outer))
        if triton.cdiv(outer, bm) >= mcfg["MIN_PROGRAMS"] or n_red < 8 * bn:
            _reduce_rows_kernel[(triton.cdiv(outer, bm),)](xc, y, outer, n_red, divisor, IS_MAX=is_max, BLOCK_M=bm,
                                                           BLOCK_N=bn, num_warps=rcfg["num_warps"])
            return y
        # few long rows: the mid kernel with inner = 1 splits each row over several programs
        _reduce_mid(xc, y, outer, n_red, 1, divisor, is_max, bm * bn, 1, rcfg["num_warps"], mcfg["MIN_PROGRAMS"])
        return y
    bi = min(mcfg["BLOCK_I"], triton.next_power_of_2(inner))
    br = min(mcfg["BLOCK_R"], triton.next_power_of_2(n_red))
    _reduce_mid(xc, y, outer, n_red, inner, divisor, is_max, br, bi, mcfg["num_warps"], mcfg["MIN_PROGRAMS"])
    return y


def _reduce_mid(xc: torch.Tensor, y: torch.Tensor, outer: int, n_red: int, inner: int, divisor: float, is_max: bool,
                br: int, bi: int, warps: int, min_programs: int) -> None:
    programs = outer * triton.cdiv(inner, bi)
    # split R while programs are too few and each chunk still has at least 4 tile steps
    split = min(triton.cdiv(min_programs, programs), max(1, n_red // (4 * br)))
    if split <= 1:
        _reduce_mid_kernel[(outer, triton.cdiv(inner, bi), 1)](xc, y, n_red, inner, n_red, divisor, IS_MAX=is_max,
                                                               BLOCK_R=br, BLOCK_I=bi, num_warps=warps)
        return
    r_chunk = triton.cdiv(triton.cdiv(n_red, split), br) * br  # whole tiles per chunk
    split = triton.cdiv(n_red, r_chunk)
    part = torch.empty((outer, split, inner), dtype=torch.float32, device=xc.device)
    _reduce_mid_kernel[(outer, triton.cdiv(inner, bi), split)](xc, part, n_red, inner, r_chunk, 1.0, IS_MAX=is_max,
                                                               BLOCK_R=br, BLOCK_I=bi, num_warps=warps)
    br2 = min(br, triton.next_power_of_2(split))
    _reduce_mid_kernel[(outer, triton.cdiv(inner, bi), 1)](part, y, split, inner, split, divisor, IS_MAX=is_max,
                                                           BLOCK_R=br2, BLOCK_I=bi, num_warps=warps)


_SIG_ROWS = {"x_ptr": "*fp32", "y_ptr": "*fp32", "n_rows": "i32", "n_cols": "i32", "divisor": "fp32"}
_SIG_MID = {"x_ptr": "*fp32", "y_ptr": "*fp32", "n_red": "i32", "inner": "i32", "r_chunk": "i32", "divisor": "fp32"}


def reduce_kernels(kind: str) -> list[TritonKernel]:
    """The shared kernels as ``kind``'s module declares them for ``compile_targets``."""
    is_max = kind == "max"
    return [
        TritonKernel(_reduce_rows_kernel.__name__, _SIG_ROWS, constexprs={"IS_MAX": is_max}, configs="ROW_CONFIGS",
                     defined_in=__name__),
        TritonKernel(_reduce_mid_kernel.__name__, _SIG_MID, constexprs={"IS_MAX": is_max}, configs="MID_CONFIGS",
                     defined_in=__name__),
    ]


def reduce_op(kind: str, ref: Callable[[torch.Tensor, int, bool], torch.Tensor],
              fast_backward: Callable[..., Any] | None = None,
              ) -> tuple[Callable[..., torch.Tensor], Callable[..., torch.Tensor]]:
    """(launcher, public function) of the ``<kind>_dim`` op: the launcher runs :func:`reduce_dim_launch`;
    the public function is ``torch.ops.cudal1.<kind>_dim`` (registered here with a fake implementation for
    ``torch.compile``, the reference as CPU fallback), called directly in eager mode. ``fast_backward``: the
    reduction's own backward (``registry.kernel_backward``; ``_rows_backward.REDUCE_BACKWARDS``)."""
    name = f"{kind}_dim"

    def launch(x: torch.Tensor, dim: int, keepdim: bool = False, row_config: dict | None = None,
               mid_config: dict | None = None) -> torch.Tensor:
        return reduce_dim_launch(x, dim, kind, keepdim, row_config, mid_config)

    @zoo_custom_op(f"cudal1::{name}", mutates_args=(), ref=ref, fast_backward=fast_backward)
    def op(x: torch.Tensor, dim: int, keepdim: bool) -> torch.Tensor:
        return launch(x, dim, keepdim) if x.is_cuda else ref(x, dim, keepdim)

    @op.register_fake
    def _(x: torch.Tensor, dim: int, keepdim: bool) -> torch.Tensor:
        d = dim % max(x.dim(), 1)
        return x.new_empty(reduced_shape(x.shape, d, keepdim) if x.dim() else ())

    def public(x: torch.Tensor, dim: int, keepdim: bool = False) -> torch.Tensor:
        return call(name, x, int(dim), bool(keepdim))

    launch.__name__, public.__name__ = f"{name}_launch", name
    return launch, public
