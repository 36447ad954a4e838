"""L2 normalisation over the last dimension: ``y = x / max(||x||_2, eps)``, as
``torch.nn.functional.normalize(x, p=2, dim=-1, eps=eps)``.

Shapes: ``x`` (..., N), any N; float32 (fp16/bf16 computed in fp32; sum of squares in fp32); output like
``x``. Rows up to ``MAX_N`` elements stay in registers (one read, one write: 8 bytes per fp32 element,
against eager's norm + clamp + divide); longer rows take a sum-of-squares pass and a write pass.

Backward (CUDA, fp32/bf16/fp16): ``dx = (dy - y * sum(dy * y)) / max(||x||, eps)``, ``dy / eps`` on rows whose
norm is below ``eps`` (the clamp, as torch), recomputed in fp32 from ``x`` (``_rows_backward``: one read of ``x``
and ``dy`` for rows up to its MAX_N); the reference's VJP elsewhere.
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

__all__ = ["CONFIGS", "l2_normalize", "l2_normalize_launch", "l2_normalize_ref"]

#: MAX_N/MIN_TILE/EPT/MAX_WARPS: the registers-resident tile (see ``_rows.row_tile``);
#: BLOCK/num_warps: the looped kernel for rows longer than MAX_N.
CONFIGS = {
    "sm80": {"MAX_N": 32768, "MIN_TILE": 2048, "EPT": 16, "MAX_WARPS": 32, "BLOCK": 2048, "num_warps": 8},
    "sm86": {"MAX_N": 32768, "MIN_TILE": 2048, "EPT": 16, "MAX_WARPS": 32, "BLOCK": 2048, "num_warps": 8},
    "sm89": {"MAX_N": 32768, "MIN_TILE": 2048, "EPT": 16, "MAX_WARPS": 32, "BLOCK": 2048, "num_warps": 8},
    "sm90": {"MAX_N": 32768, "MIN_TILE": 4096, "EPT": 16, "MAX_WARPS": 32, "BLOCK": 4096, "num_warps": 16},
}
check_table(CONFIGS, "l2_normalize")
#: the tile each family runs at the suite's size (16384 rows of 32768), for the compile check
TILE_CONFIGS = {fam: row_tile(16384, 32768, cfg) for fam, cfg in CONFIGS.items()}


def l2_normalize_ref(x: torch.Tensor, eps: float = 1e-12) -> torch.Tensor:
    """PyTorch reference."""
    return torch.nn.functional.normalize(x, p=2.0, dim=-1, eps=eps)


@triton.jit
def _l2_normalize_tile_kernel(x_ptr, y_ptr, n_rows, n_cols, eps, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    rows = tl.program_id(0).to(tl.int64) * BLOCK_M + tl.arange(0, BLOCK_M)
    cols = tl.arange(0, BLOCK_N)
    mask = (rows < n_rows)[:, None] & (cols < n_cols)[None, :]
    offs = rows[:, None] * n_cols + cols[None, :]
    x = tl.load(x_ptr + offs, mask=mask, other=0.0).to(tl.float32)
    norm = tl.sqrt(tl.sum(x * x, 1))
    norm = tl.where(norm < eps, eps, norm)  # clamp_min; NaN norm stays NaN
    tl.store(y_ptr + offs, (x / norm[:, None]).to(y_ptr.dtype.element_ty), mask=mask)


@triton.jit
def _l2_normalize_loop_kernel(x_ptr, y_ptr, n_cols, eps, BLOCK: tl.constexpr):
    base = tl.program_id(0).to(tl.int64) * n_cols
    acc = tl.zeros([BLOCK], tl.float32)
    for start in range(0, n_cols, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        x = tl.load(x_ptr + base + cols, mask=cols < n_cols, other=0.0).to(tl.float32)
        acc += x * x
    norm = tl.sqrt(tl.sum(acc, 0))
    norm = tl.where(norm < eps, eps, norm)
    for start in range(0, n_cols, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        mask = cols < n_cols
        x = tl.load(x_ptr + base + cols, mask=mask, other=0.0).to(tl.float32)
        tl.store(y_ptr + base + cols, (x / norm).to(y_ptr.dtype.element_ty), mask=mask)


def l2_normalize_launch(x: torch.Tensor, eps: float = 1e-12, config: dict | None = None) -> torch.Tensor:
    """Run the Triton kernel on ``x`` (..., N) (the interpreter included)."""
    if x.dim() == 0:
        raise ValueError("l2_normalize needs at least one dimension, got a 0-d tensor")
    cfg = config or pick(CONFIGS, x.device if x.is_cuda else None)
    xc = x.contiguous()
    y = torch.empty_like(xc)
    n_cols = xc.shape[-1]
    if xc.numel() == 0:
        return y
    n_rows = xc.numel() // n_cols
    tile = row_tile(n_rows, n_cols, cfg)
    if tile is not None:
        _l2_normalize_tile_kernel[(triton.cdiv(n_rows, tile["BLOCK_M"]),)](xc, y, n_rows, n_cols, float(eps), **tile)
    else:
        _l2_normalize_loop_kernel[(n_rows,)](xc, y, n_cols, float(eps), BLOCK=cfg["BLOCK"],
                                             num_warps=cfg["num_warps"])
    return y


@zoo_custom_op("cudal1::l2_normalize", mutates_args=(), ref=l2_normalize_ref,
               fast_backward=row_fast_backward("l2_normalize"))
def _l2_normalize_op(x: torch.Tensor, eps: float) -> torch.Tensor:
    return l2_normalize_launch(x, eps) if x.is_cuda else l2_normalize_ref(x, eps)


@_l2_normalize_op.register_fake
def _(x: torch.Tensor, eps: float) -> torch.Tensor:
    return torch.empty_like(x, memory_format=torch.contiguous_format)


def l2_normalize(x: torch.Tensor, eps: float = 1e-12) -> torch.Tensor:
    """``x / max(||x||_2, eps)`` over the last dimension of ``x`` (..., N); same shape and dtype (Triton on
    CUDA, the reference on CPU); ``torch.ops.cudal1.l2_normalize``."""
    return call("l2_normalize", x, float(eps))


#: for ``python -m cudal1.kernelzoo.compile_targets``
TRITON_KERNELS = [
    TritonKernel("_l2_normalize_tile_kernel", {"x_ptr": "*fp32", "y_ptr": "*fp32", "n_rows": "i32", "n_cols": "i32",
                                               "eps": "fp32"}, configs="TILE_CONFIGS"),
    TritonKernel("_l2_normalize_loop_kernel", {"x_ptr": "*fp32", "y_ptr": "*fp32", "n_cols": "i32", "eps": "fp32"}),
    *backward_kernels("l2_normalize"),
]
