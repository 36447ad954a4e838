"""Log-softmax over the last dimension: ``y[..., j] = x[..., j] - max - log(sum_k exp(x[..., k] - max))``.

Shapes: ``x`` (..., N), any N; float32 (fp16/bf16 computed in fp32); output like ``x``. Rows up to
``MAX_N`` elements stay in registers (one read, one write: 8 bytes per fp32 element, the minimum); longer
rows take an online max/sum pass and a write pass (two reads, one write). Rows of -inf give NaN, as torch.

Backward (CUDA, fp32/bf16/fp16): ``dx = dy - softmax(x) * sum(dy)`` with the softmax recomputed in fp32 from
``x`` (``_rows_backward``: one read of ``x`` and ``dy`` for rows up to its MAX_N); the reference's VJP elsewhere.
"""

from __future__ import annotations

import torch

from .._triton import tl, triton
from ..arch import check_table, pick
from ..kernel_specs import TritonKernel
from ..registry import call, zoo_custom_op
from ._rows import row_tile
from ._rows_backward import CONFIGS as ROWS_BWD_CONFIGS  # noqa: F401  (read by compile_targets)
from ._rows_backward import TILE_CONFIGS as ROWS_BWD_TILE_CONFIGS  # noqa: F401  (read by compile_targets)
from ._rows_backward import kernels as backward_kernels
from ._rows_backward import row_fast_backward

__all__ = ["CONFIGS", "log_softmax", "log_softmax_launch", "log_softmax_ref"]

#: MAX_N/MIN_TILE/EPT/MAX_WARPS: the registers-resident tile (see ``_rows.row_tile``);
#: BLOCK/num_warps: the looped kernel for rows longer than MAX_N.
CONFIGS = {
    "sm80": {"MAX_N": 32768, "MIN_TILE": 2048, "EPT": 16, "MAX_WARPS": 32, "BLOCK": 2048, "num_warps": 8},
    "sm86": {"MAX_N": 32768, "MIN_TILE": 2048, "EPT": 16, "MAX_WARPS": 32, "BLOCK": 2048, "num_warps": 8},
    "sm89": {"MAX_N": 32768, "MIN_TILE": 2048, "EPT": 16, "MAX_WARPS": 32, "BLOCK": 2048, "num_warps": 8},
    "sm90": {"MAX_N": 32768, "MIN_TILE": 4096, "EPT": 16, "MAX_WARPS": 32, "BLOCK": 4096, "num_warps": 16},
}
check_table(CONFIGS, "log_softmax")
#: the tile each family runs at the suite's size (65536 rows of 8192), for the compile check
TILE_CONFIGS = {fam: row_tile(65536, 8192, cfg) for fam, cfg in CONFIGS.items()}


def log_softmax_ref(x: torch.Tensor) -> torch.Tensor:
    """PyTorch reference."""
    return torch.log_softmax(x, dim=-1)


@triton.jit
def _log_softmax_tile_kernel(x_ptr, y_ptr, n_rows, n_cols, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    rows = tl.program_id(0).to(tl.int64) * BLOCK_M + tl.arange(0, BLOCK_M)
    cols = tl.arange(0, BLOCK_N)
    mask = (rows < n_rows)[:, None] & (cols < n_cols)[None, :]
    offs = rows[:, None] * n_cols + cols[None, :]
    x = tl.load(x_ptr + offs, mask=mask, other=float("-inf")).to(tl.float32)
    m = tl.max(x, 1)
    s = tl.sum(tl.exp(x - m[:, None]), 1)
    y = x - (m + tl.log(s))[:, None]
    tl.store(y_ptr + offs, y.to(y_ptr.dtype.element_ty), mask=mask)


@triton.jit
def _log_softmax_loop_kernel(x_ptr, y_ptr, n_cols, BLOCK: tl.constexpr):
    base = tl.program_id(0).to(tl.int64) * n_cols
    m = tl.full([BLOCK], float("-inf"), tl.float32)
    s = tl.zeros([BLOCK], tl.float32)
    nan = tl.zeros([BLOCK], tl.int32)
    for start in range(0, n_cols, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        x = tl.load(x_ptr + base + cols, mask=cols < n_cols, other=float("-inf")).to(tl.float32)
        nan = nan | (x != x).to(tl.int32)
        x = tl.where(x != x, float("-inf"), x)
        m_new = tl.maximum(m, x)
        # lanes that have seen only -inf keep s = 0 (avoid inf - inf)
        scale = tl.where(m_new == float("-inf"), 0.0, tl.exp(m - m_new))
        s = s * scale + tl.where(m_new == float("-inf"), 0.0, tl.exp(x - m_new))
        m = m_new
    row_max = tl.max(m, 0)
    row_sum = tl.sum(tl.where(m == float("-inf"), 0.0, s * tl.exp(m - row_max)), 0)
    shift = row_max + tl.log(row_sum)
    # a NaN anywhere, or a row of -inf, gives a row of NaN, as torch
    shift = tl.where((row_max == float("-inf")) | (tl.max(nan, 0) > 0), float("nan"), shift)
    for start in range(0, n_cols, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        mask = cols < n_cols
        x = tl.load(x_ptr + base + cols, mask=mask, other=0.0).to(tl.float32)
        tl.store(y_ptr + base + cols, (x - shift).to(y_ptr.dtype.element_ty), mask=mask)


def log_softmax_launch(x: torch.Tensor, config: dict | None = None) -> torch.Tensor:
    """Run the Triton kernel on ``x`` (..., N) (the interpreter included)."""
    if x.dim() == 0:
        raise ValueError("log_softmax needs at least one dimension, got a 0-d tensor")
    cfg = config or pick(CONFIGS, x.device if x.is_cuda else None)
    xc = x.contiguous()
    y = torch.empty_like(xc)
    n_cols = xc.shape[-1]
    if xc.numel() == 0:
        return y
    n_rows = xc.numel() // n_cols
    tile = row_tile(n_rows, n_cols, cfg)
    if tile is not None:
        _log_softmax_tile_kernel[(triton.cdiv(n_rows, tile["BLOCK_M"]),)](xc, y, n_rows, n_cols, **tile)
    else:
        _log_softmax_loop_kernel[(n_rows,)](xc, y, n_cols, BLOCK=cfg["BLOCK"], num_warps=cfg["num_warps"])
    return y


@zoo_custom_op("cudal1::log_softmax", mutates_args=(), ref=log_softmax_ref,
               fast_backward=row_fast_backward("log_softmax"))
def _log_softmax_op(x: torch.Tensor) -> torch.Tensor:
    return log_softmax_launch(x) if x.is_cuda else log_softmax_ref(x)


@_log_softmax_op.register_fake
def _(x: torch.Tensor) -> torch.Tensor:
    return torch.empty_like(x, memory_format=torch.contiguous_format)


def log_softmax(x: torch.Tensor) -> torch.Tensor:
    """Log-softmax of ``x`` (..., N) over its last dimension; same shape and dtype (Triton on CUDA, the
    reference on CPU); ``torch.ops.cudal1.log_softmax``."""
    return call("log_softmax", x)


#: for ``python -m cudal1.kernelzoo.compile_targets``
TRITON_KERNELS = [
    TritonKernel("_log_softmax_tile_kernel", {"x_ptr": "*fp32", "y_ptr": "*fp32", "n_rows": "i32", "n_cols": "i32"},
                 configs="TILE_CONFIGS"),
    TritonKernel("_log_softmax_loop_kernel", {"x_ptr": "*fp32", "y_ptr": "*fp32", "n_cols": "i32"}),
    *backward_kernels("log_softmax"),
]
