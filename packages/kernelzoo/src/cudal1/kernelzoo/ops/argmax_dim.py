"""Argmax over one dimension: ``y = argmax_r x[..., r, ...]`` as int64, with torch's rules: the first index
of the maximum on ties, and the first NaN if there is one (NaN counts as the largest value).

Shapes: ``x`` any shape, float32 (fp16/bf16 compared in fp32); ``dim`` any (negative counts from the end);
output int64, ``x.shape`` without ``dim`` (kept as 1 with ``keepdim``). Memory-bound: one read of the input
(4 bytes per fp32 element), no transpose. Each lane keeps its best (value, index) while stepping along the
reduced dimension (strict ``>``, so a lane keeps its first maximum); lanes are then combined by the largest
value and, among equal values, the smallest index. Last dimension: (BLOCK_M, BLOCK_N) tiles along
contiguous rows; a middle dimension: (BLOCK_R, BLOCK_I) tiles coalesced along the inner dimension.
"""

from __future__ import annotations

import math

import torch

from .._triton import tl, triton
from ..arch import check_table, pick
from ..kernel_specs import TritonKernel
from ..registry import call, zoo_custom_op
from ._reduce import reduced_shape

__all__ = ["MID_CONFIGS", "ROW_CONFIGS", "argmax_dim", "argmax_dim_launch", "argmax_dim_ref"]

ROW_CONFIGS = {
    "sm80": {"BLOCK_M": 2, "BLOCK_N": 2048, "num_warps": 8},
    "sm86": {"BLOCK_M": 2, "BLOCK_N": 1024, "num_warps": 4},
    "sm89": {"BLOCK_M": 2, "BLOCK_N": 1024, "num_warps": 4},
    "sm90": {"BLOCK_M": 2, "BLOCK_N": 2048, "num_warps": 8},
}
MID_CONFIGS = {
    "sm80": {"BLOCK_R": 16, "BLOCK_I": 128, "num_warps": 4},
    "sm86": {"BLOCK_R": 16, "BLOCK_I": 128, "num_warps": 4},
    "sm89": {"BLOCK_R": 16, "BLOCK_I": 128, "num_warps": 4},
    "sm90": {"BLOCK_R": 16, "BLOCK_I": 128, "num_warps": 4},
}
check_table(ROW_CONFIGS, "argmax rows")
check_table(MID_CONFIGS, "argmax mid")


def argmax_dim_ref(x: torch.Tensor, dim: int, keepdim: bool = False) -> torch.Tensor:
    """PyTorch reference."""
    return torch.argmax(x, dim=dim, keepdim=keepdim)


@triton.jit
def _update(best_v, best_i, x, idx, mask):
    """Per-lane step: take x if it is valid and beats the lane's best (NaN beats everything but NaN)."""
    take = mask & ((x > best_v) | ((x != x) & (best_v == best_v)) | (best_i == 2147483647))
    return tl.where(take, x, best_v), tl.where(take, idx, best_i)


@triton.jit
def _combine(best_v, best_i, AXIS: tl.constexpr):
    """Index of the largest lane value along AXIS (NaN largest), the smallest index among equals."""
    isnan = best_v != best_v
    has_nan = tl.max(isnan.to(tl.int32), AXIS) > 0
    m = tl.max(tl.where(isnan, float("-inf"), best_v), AXIS)
    if AXIS == 0:
        win = tl.where(has_nan[None, :], isnan, (best_v == m[None, :]) & ~isnan)
    else:
        win = tl.where(has_nan[:, None], isnan, (best_v == m[:, None]) & ~isnan)
    return tl.min(tl.where(win, best_i, 2147483647), AXIS)


@triton.jit
def _argmax_rows_kernel(x_ptr, y_ptr, n_rows, n_cols, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    rows = tl.program_id(0).to(tl.int64) * BLOCK_M + tl.arange(0, BLOCK_M)
    rmask = rows < n_rows
    base = rows[:, None] * n_cols
    best_v = tl.full([BLOCK_M, BLOCK_N], float("-inf"), tl.float32)
    best_i = tl.full([BLOCK_M, BLOCK_N], 2147483647, tl.int32)
    for start in range(0, n_cols, BLOCK_N):
        cols = start + tl.arange(0, BLOCK_N)
        mask = rmask[:, None] & (cols < n_cols)[None, :]
        x = tl.load(x_ptr + base + cols[None, :], mask=mask, other=float("-inf")).to(tl.float32)
        idx = tl.broadcast_to(cols[None, :], [BLOCK_M, BLOCK_N])
        best_v, best_i = _update(best_v, best_i, x, idx, mask)
    tl.store(y_ptr + rows, _combine(best_v, best_i, 1).to(tl.int64), mask=rmask)


@triton.jit
def _argmax_mid_kernel(x_ptr, y_ptr, n_red, inner, BLOCK_R: tl.constexpr, BLOCK_I: tl.constexpr):
    o = tl.program_id(0).to(tl.int64)
    cols = tl.program_id(1) * BLOCK_I + tl.arange(0, BLOCK_I)
    cmask = cols < inner
    base = x_ptr + o * n_red * inner + cols[None, :]
    best_v = tl.full([BLOCK_R, BLOCK_I], float("-inf"), tl.float32)
    best_i = tl.full([BLOCK_R, BLOCK_I], 2147483647, tl.int32)
    for start in range(0, n_red, BLOCK_R):
        r = start + tl.arange(0, BLOCK_R)
        mask = (r < n_red)[:, None] & cmask[None, :]
        x = tl.load(base + r.to(tl.int64)[:, None] * inner, mask=mask, other=float("-inf")).to(tl.float32)
        idx = tl.broadcast_to(r[:, None], [BLOCK_R, BLOCK_I])
        best_v, best_i = _update(best_v, best_i, x, idx, mask)
    tl.store(y_ptr + o * inner + cols, _combine(best_v, best_i, 0).to(tl.int64), mask=cmask)


def argmax_dim_launch(x: torch.Tensor, dim: int, keepdim: bool = False, row_config: dict | None = None,
                      mid_config: dict | None = None) -> torch.Tensor:
    """Run the Triton kernels on ``x`` (the interpreter included); int64 output."""
    if not x.is_floating_point():
        raise TypeError(f"expected a floating-point tensor, got {x.dtype}")
    nd = max(x.dim(), 1)
    if not -nd <= dim < nd:
        raise IndexError(f"dim {dim} is out of range for a tensor of {x.dim()} dimensions")
    d = dim % nd
    xc = x.contiguous()
    shape = tuple(xc.shape) if xc.dim() else (1,)
    outer, n_red, inner = math.prod(shape[:d]), shape[d], math.prod(shape[d + 1:])
    if n_red == 0:
        raise IndexError("argmax over an empty dimension: the reduced dimension has size 0")
    if n_red >= 2**31:
        raise ValueError(f"argmax_dim supports reduced dimensions below 2**31 elements, got {n_red}")
    y = torch.empty(reduced_shape(x.shape, d, keepdim) if x.dim() else (), dtype=torch.int64, device=x.device)
    if y.numel() == 0:
        return y
    dev = x.device if x.is_cuda else None
    if inner == 1:
        cfg = row_config or pick(ROW_CONFIGS, dev)
        bn = min(cfg["BLOCK_N"], triton.next_power_of_2(n_red))
        bm = min(cfg["BLOCK_M"], triton.next_power_of_2(outer))
        _argmax_rows_kernel[(triton.cdiv(outer, bm),)](xc, y, outer, n_red, BLOCK_M=bm, BLOCK_N=bn,
                                                       num_warps=cfg["num_warps"])
    else:
        cfg = mid_config or pick(MID_CONFIGS, dev)
        bi = min(cfg["BLOCK_I"], triton.next_power_of_2(inner))
        br = min(cfg["BLOCK_R"], triton.next_power_of_2(n_red))
        _argmax_mid_kernel[(outer, triton.cdiv(inner, bi))](xc, y, n_red, inner, BLOCK_R=br, BLOCK_I=bi,
                                                            num_warps=cfg["num_warps"])
    return y


@zoo_custom_op("cudal1::argmax_dim", mutates_args=(), ref=argmax_dim_ref, differentiable=False)
def _argmax_dim_op(x: torch.Tensor, dim: int, keepdim: bool) -> torch.Tensor:
    return argmax_dim_launch(x, dim, keepdim) if x.is_cuda else argmax_dim_ref(x, dim, keepdim)


@_argmax_dim_op.register_fake
def _(x: torch.Tensor, dim: int, keepdim: bool) -> torch.Tensor:
    d = dim % max(x.dim(), 1)
    return x.new_empty(reduced_shape(x.shape, d, keepdim) if x.dim() else (), dtype=torch.int64)


def argmax_dim(x: torch.Tensor, dim: int, keepdim: bool = False) -> torch.Tensor:
    """Index (int64) of the maximum of ``x`` over ``dim`` (first on ties, first NaN if any); shape
    ``x.shape`` without ``dim`` (or with it as 1 if ``keepdim``) (Triton on CUDA, the reference on CPU);
    ``torch.ops.cudal1.argmax_dim``."""
    return call("argmax_dim", x, int(dim), bool(keepdim))


#: for ``python -m cudal1.kernelzoo.compile_targets``
TRITON_KERNELS = [
    TritonKernel("_argmax_rows_kernel", {"x_ptr": "*fp32", "y_ptr": "*i64", "n_rows": "i32", "n_cols": "i32"},
                 configs="ROW_CONFIGS"),
    TritonKernel("_argmax_mid_kernel", {"x_ptr": "*fp32", "y_ptr": "*i64", "n_red": "i32", "inner": "i32"},
                 configs="MID_CONFIGS"),
]
