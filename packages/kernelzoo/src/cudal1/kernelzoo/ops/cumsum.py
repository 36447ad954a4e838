"""Inclusive prefix sum over one dimension: ``y[..., k, ...] = sum_{r <= k} x[..., r, ...]``, as
``torch.cumsum``.

Shapes: ``x`` any shape, float32 (fp16/bf16 summed in fp32); ``dim`` any (negative counts from the end);
output like ``x``. Memory-bound: one read and one write per element (8 bytes per fp32 element). A blocked
scan: each program scans BLOCK-long chunks with ``tl.cumsum`` in fp32 and carries the running fp32 total
from chunk to chunk (error grows like that of a pairwise sum within a chunk plus one add per chunk).
Last dimension: one row per program in BLOCK_N-long chunks; a middle dimension:
(BLOCK_R, BLOCK_I) tiles coalesced along the contiguous inner dimension, scanned down the rows.

Backward (CUDA, fp32/bf16/fp16): the gradient of an inclusive prefix sum is the reversed (suffix) sum of ``dy``,
``dx[..., k, ...] = sum_{r >= k} dy[..., r, ...]``: the same kernels with ``REVERSE`` (chunks taken from the end,
``tl.cumsum(reverse=True)``), one read of ``dy`` and one write, nothing recomputed; the reference's VJP elsewhere.
"""

from __future__ import annotations

import math

import torch

from .._triton import tl, triton
from ..arch import check_table, pick
from ..kernel_specs import TritonKernel
from ..registry import call, on_kernels, zoo_custom_op

__all__ = ["MID_CONFIGS", "ROW_CONFIGS", "cumsum", "cumsum_launch", "cumsum_ref"]

ROW_CONFIGS = {
    "sm80": {"BLOCK_N": 4096, "num_warps": 8},
    "sm86": {"BLOCK_N": 2048, "num_warps": 4},
    "sm89": {"BLOCK_N": 2048, "num_warps": 4},
    "sm90": {"BLOCK_N": 4096, "num_warps": 8},
}
MID_CONFIGS = {
    "sm80": {"BLOCK_R": 32, "BLOCK_I": 64, "num_warps": 4},
    "sm86": {"BLOCK_R": 32, "BLOCK_I": 64, "num_warps": 4},
    "sm89": {"BLOCK_R": 32, "BLOCK_I": 64, "num_warps": 4},
    "sm90": {"BLOCK_R": 32, "BLOCK_I": 64, "num_warps": 4},
}
check_table(ROW_CONFIGS, "cumsum rows")
check_table(MID_CONFIGS, "cumsum mid")


def cumsum_ref(x: torch.Tensor, dim: int) -> torch.Tensor:
    """PyTorch reference."""
    return torch.cumsum(x, dim=dim)


@triton.jit
def _cumsum_rows_kernel(x_ptr, y_ptr, n_rows, n_cols, REVERSE: tl.constexpr, BLOCK_N: tl.constexpr):
    # one row per program, 1-D blocks (a (1, BLOCK_N) 2-D tile crashes Triton 3.6's thread-locality pass);
    # REVERSE: suffix sums, chunks from the last (partial) one down
    base = tl.program_id(0).to(tl.int64) * n_cols
    carry = tl.sum(tl.zeros([BLOCK_N], tl.float32), 0)
    last = (n_cols - 1) // BLOCK_N * BLOCK_N
    for start in range(0, n_cols, BLOCK_N):
        if REVERSE:
            cols = last - start + tl.arange(0, BLOCK_N)
        else:
            cols = start + tl.arange(0, BLOCK_N)
        mask = cols < n_cols
        x = tl.load(x_ptr + base + cols, mask=mask, other=0.0).to(tl.float32)
        y = tl.cumsum(x, 0, reverse=REVERSE) + carry
        tl.store(y_ptr + base + cols, y.to(y_ptr.dtype.element_ty), mask=mask)
        carry += tl.sum(x, 0)


@triton.jit
def _cumsum_mid_kernel(x_ptr, y_ptr, n_red, inner, REVERSE: tl.constexpr, BLOCK_R: tl.constexpr,
                       BLOCK_I: tl.constexpr):
    o = tl.program_id(0).to(tl.int64)
    cols = tl.program_id(1) * BLOCK_I + tl.arange(0, BLOCK_I)
    cmask = cols < inner
    offs0 = o * n_red * inner + cols[None, :]
    carry = tl.zeros([BLOCK_I], tl.float32)
    last = (n_red - 1) // BLOCK_R * BLOCK_R
    for start in range(0, n_red, BLOCK_R):
        if REVERSE:
            r = last - start + tl.arange(0, BLOCK_R)
        else:
            r = start + tl.arange(0, BLOCK_R)
        mask = (r < n_red)[:, None] & cmask[None, :]
        offs = offs0 + r.to(tl.int64)[:, None] * inner
        x = tl.load(x_ptr + offs, mask=mask, other=0.0).to(tl.float32)
        y = tl.cumsum(x, 0, reverse=REVERSE) + carry[None, :]
        tl.store(y_ptr + offs, y.to(y_ptr.dtype.element_ty), mask=mask)
        carry += tl.sum(x, 0)


def cumsum_launch(x: torch.Tensor, dim: int, row_config: dict | None = None, mid_config: dict | None = None, *,
                  reverse: bool = False) -> torch.Tensor:
    """Run the Triton kernels on ``x`` (the interpreter included); ``reverse``: suffix sums along ``dim`` (as
    flip, cumsum, flip, in one pass), the backward of the prefix sum."""
    if not x.is_floating_point():
        raise TypeError(f"expected a floating-point tensor, got {x.dtype}")
    nd = max(x.dim(), 1)
    if not -nd <= dim < nd:
        raise IndexError(f"dim {dim} is out of range for a tensor of {x.dim()} dimensions")
    d = dim % nd
    xc = x.contiguous()
    y = torch.empty_like(xc)
    if xc.numel() == 0:
        return y
    shape = tuple(xc.shape) if xc.dim() else (1,)
    outer, n_red, inner = math.prod(shape[:d]), shape[d], math.prod(shape[d + 1:])
    dev = x.device if x.is_cuda else None
    if inner == 1:
        cfg = row_config or pick(ROW_CONFIGS, dev)
        bn = min(cfg["BLOCK_N"], triton.next_power_of_2(n_red))
        _cumsum_rows_kernel[(outer,)](xc, y, outer, n_red, REVERSE=reverse, BLOCK_N=bn, num_warps=cfg["num_warps"])
    else:
        cfg = mid_config or pick(MID_CONFIGS, dev)
        bi = min(cfg["BLOCK_I"], triton.next_power_of_2(inner))
        br = min(cfg["BLOCK_R"], triton.next_power_of_2(n_red))
        _cumsum_mid_kernel[(outer, triton.cdiv(inner, bi))](xc, y, n_red, inner, REVERSE=reverse, BLOCK_R=br,
                                                            BLOCK_I=bi, num_warps=cfg["num_warps"])
    return y


def _cumsum_backward(args: list, grads: list, needs: tuple) -> tuple | None:
    """The reversed scan of ``dy`` where the kernels apply (see ``registry.kernel_backward``), else None."""
    (x, dim), (dy,) = args, grads
    if dy is None or not on_kernels(x, dy):
        return None
    return cumsum_launch(dy, dim, reverse=True) if needs[0] else None, None


@zoo_custom_op("cudal1::cumsum", mutates_args=(), ref=cumsum_ref, fast_backward=_cumsum_backward)
def _cumsum_op(x: torch.Tensor, dim: int) -> torch.Tensor:
    return cumsum_launch(x, dim) if x.is_cuda else cumsum_ref(x, dim)


@_cumsum_op.register_fake
def _(x: torch.Tensor, dim: int) -> torch.Tensor:
    return torch.empty_like(x, memory_format=torch.contiguous_format)


def cumsum(x: torch.Tensor, dim: int) -> torch.Tensor:
    """Inclusive prefix sum of ``x`` along ``dim``; same shape and dtype (Triton on CUDA, the reference on
    CPU); ``torch.ops.cudal1.cumsum``."""
    return call("cumsum", x, int(dim))


#: for ``python -m cudal1.kernelzoo.compile_targets``
TRITON_KERNELS = [
    k for rev in (False, True) for k in (
        TritonKernel("_cumsum_rows_kernel", {"x_ptr": "*fp32", "y_ptr": "*fp32", "n_rows": "i32", "n_cols": "i32"},
                     constexprs={"REVERSE": rev}, configs="ROW_CONFIGS"),
        TritonKernel("_cumsum_mid_kernel", {"x_ptr": "*fp32", "y_ptr": "*fp32", "n_red": "i32", "inner": "i32"},
                     constexprs={"REVERSE": rev}, configs="MID_CONFIGS"))
]
