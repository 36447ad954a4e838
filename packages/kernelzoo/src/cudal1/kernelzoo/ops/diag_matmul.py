"""Diagonal matrix times dense matrix: ``torch.diag(a) @ b == a[:, None] * b`` (row i of ``b`` scaled by a[i]).

Shapes: ``a`` (N,), ``b`` (N, M); float32; output (N, M) float32, contiguous. Memory-bound: reads ``b`` once
and writes the output once (8*N*M bytes), where the reference builds the (N, N) diagonal matrix and runs a
2*N*N*M FLOP matrix product. Values equal the reference's exactly for finite inputs (each output is the one
product a[i] * b[i, j]; the reference adds exact zeros to it); a non-finite b[k, j] differs: the reference's
0 * inf = NaN spreads through column j, here it stays in row k.

One program per (row, column block); column blocks stride by the grid's second dimension, so any width fits.

Backward (CUDA, fp32/bf16/fp16; ``diag_matmul_backward_launch``): one kernel reads each row of ``dy`` once and
writes ``db = a[:, None] * dy`` while summing ``da = rowwise sum(dy * b)`` in fp32 (``b`` is read only when
``da`` is wanted, ``db`` written only when it is wanted); each program writes its share of a row's sum and the
(N, programs per row) partials are summed after (deterministic, no atomics). The reference's VJP elsewhere
(it builds the (N, N) matrix again).
"""

from __future__ import annotations

import torch

from .._triton import tl, triton
from ..arch import check_table, pick
from ..kernel_specs import TritonKernel
from ..registry import call, on_kernels, zoo_custom_op

__all__ = ["CONFIGS", "diag_matmul", "diag_matmul_backward_launch", "diag_matmul_launch", "diag_matmul_ref"]

CONFIGS = {  # sm90 measured on an H100 (benchmarks/results/2026-11-22-tune-matmul-conv-pool-h100.md)
    "sm80": {"BLOCK": 2048, "num_warps": 8},
    "sm86": {"BLOCK": 1024, "num_warps": 4},
    "sm89": {"BLOCK": 1024, "num_warps": 4},
    "sm90": {"BLOCK": 2048, "num_warps": 8},
}
check_table(CONFIGS, "diag_matmul")
MAX_COL_PROGRAMS = 1024


def diag_matmul_ref(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """PyTorch reference (the task's formula)."""
    return torch.diag(a) @ b


@triton.jit
def _diag_matmul_kernel(a_ptr, b_ptr, y_ptr, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    scale = tl.load(a_ptr + row)
    base = row * n_cols
    for start in range(tl.program_id(1) * BLOCK, n_cols, tl.num_programs(1) * BLOCK):
        cols = start + tl.arange(0, BLOCK)
        mask = cols < n_cols
        x = tl.load(b_ptr + base + cols, mask=mask)
        tl.store(y_ptr + base + cols, x * scale, mask=mask)


def _check(a: torch.Tensor, b: torch.Tensor) -> None:
    if a.dim() != 1 or b.dim() != 2 or a.shape[0] != b.shape[0]:
        raise ValueError(f"diag_matmul takes a (N,) and b (N, M), got {tuple(a.shape)} and {tuple(b.shape)}")
    if a.dtype != torch.float32 or b.dtype != torch.float32:
        raise TypeError(f"diag_matmul takes float32 tensors, got {a.dtype} and {b.dtype}")


def diag_matmul_launch(a: torch.Tensor, b: torch.Tensor, config: dict | None = None) -> torch.Tensor:
    """Run the Triton kernel: ``a`` (N,), ``b`` (N, M) -> ``a[:, None] * b`` (N, M)."""
    _check(a, b)
    cfg = config or pick(CONFIGS, b.device if b.is_cuda else None)
    ac, bc = a.contiguous(), b.contiguous()
    y = torch.empty_like(bc)
    rows, cols = bc.shape
    if bc.numel():
        grid = (rows, min(triton.cdiv(cols, cfg["BLOCK"]), MAX_COL_PROGRAMS))
        _diag_matmul_kernel[grid](ac, bc, y, cols, BLOCK=cfg["BLOCK"], num_warps=cfg["num_warps"])
    return y


@triton.jit
def _diag_matmul_bwd_kernel(a_ptr, b_ptr, dy_ptr, db_ptr, dap_ptr, n_cols, NEED_DA: tl.constexpr,
                            NEED_DB: tl.constexpr, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    scale = tl.load(a_ptr + row).to(tl.float32)
    base = row * n_cols
    acc = tl.zeros([BLOCK], tl.float32)
    for start in range(tl.program_id(1) * BLOCK, n_cols, tl.num_programs(1) * BLOCK):
        cols = start + tl.arange(0, BLOCK)
        mask = cols < n_cols
        g = tl.load(dy_ptr + base + cols, mask=mask, other=0.0).to(tl.float32)
        if NEED_DB:
            tl.store(db_ptr + base + cols, (g * scale).to(db_ptr.dtype.element_ty), mask=mask)
        if NEED_DA:
            acc += g * tl.load(b_ptr + base + cols, mask=mask, other=0.0).to(tl.float32)
    if NEED_DA:
        tl.store(dap_ptr + row * tl.num_programs(1) + tl.program_id(1), tl.sum(acc, 0))


def diag_matmul_backward_launch(a: torch.Tensor, b: torch.Tensor, dy: torch.Tensor, need_da: bool = True,
                                need_db: bool = True, config: dict | None = None
                                ) -> tuple[torch.Tensor | None, torch.Tensor | None]:
    """``(da, db)`` of ``a[:, None] * b`` (``a`` (N,), ``b`` and ``dy`` (N, M)): ``da`` (N,) in ``a``'s dtype
    (summed in fp32), ``db`` (N, M) contiguous in ``b``'s dtype; None where not wanted."""
    if a.dim() != 1 or b.dim() != 2 or a.shape[0] != b.shape[0] or dy.shape != b.shape:
        raise ValueError(f"diag_matmul's backward takes a (N,), b (N, M) and dy (N, M), got {tuple(a.shape)}, "
                         f"{tuple(b.shape)} and {tuple(dy.shape)}")
    cfg = config or pick(CONFIGS, b.device if b.is_cuda else None)
    rows, cols = b.shape
    programs = max(1, min(triton.cdiv(cols, cfg["BLOCK"]), MAX_COL_PROGRAMS))
    db = torch.empty(b.shape, device=b.device, dtype=b.dtype) if need_db else None
    dap = None
    if need_da:  # every launched program writes its partial; with no columns there is no launch and da is 0
        dap = (torch.empty if cols else torch.zeros)((rows, programs), device=b.device, dtype=torch.float32)
    if rows and cols and (need_da or need_db):
        dyc = dy.contiguous()
        _diag_matmul_bwd_kernel[(rows, programs)](a.contiguous(), b.contiguous() if need_da else dyc, dyc,
                                                  db if need_db else dyc, dap if need_da else dyc, cols,
                                                  NEED_DA=need_da, NEED_DB=need_db, BLOCK=cfg["BLOCK"],
                                                  num_warps=cfg["num_warps"])
    return (dap.sum(1).to(a.dtype) if need_da else None), db


def _diag_matmul_backward(args: list, grads: list, needs: tuple) -> tuple | None:
    """The backward kernel where it applies (see ``registry.kernel_backward``), else None."""
    (a, b), (dy,) = args, grads
    if not on_kernels(a, b):
        return None
    if dy is None or not (needs[0] or needs[1]):
        return None, None
    return diag_matmul_backward_launch(a, b, dy, needs[0], needs[1])


@zoo_custom_op("cudal1::diag_matmul", mutates_args=(), ref=diag_matmul_ref, fast_backward=_diag_matmul_backward)
def _diag_matmul_op(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    return diag_matmul_launch(a, b) if b.is_cuda else diag_matmul_ref(a, b)


@_diag_matmul_op.register_fake
def _(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    _check(a, b)
    return torch.empty_like(b, memory_format=torch.contiguous_format)


def diag_matmul(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """``torch.diag(a) @ b`` for ``a`` (N,), ``b`` (N, M), float32 -> (N, M): a row scaling, one pass over ``b``
    (Triton on CUDA, the reference on CPU); ``torch.ops.cudal1.diag_matmul``."""
    return call("diag_matmul", a, b)


#: for ``python -m cudal1.kernelzoo.compile_targets``
TRITON_KERNELS = [TritonKernel("_diag_matmul_kernel",
                               {"a_ptr": "*fp32", "b_ptr": "*fp32", "y_ptr": "*fp32", "n_cols": "i64"}),
                  TritonKernel("_diag_matmul_bwd_kernel",
                               {"a_ptr": "*fp32", "b_ptr": "*fp32", "dy_ptr": "*fp32", "db_ptr": "*fp32",
                                "dap_ptr": "*fp32", "n_cols": "i64"}, constexprs={"NEED_DA": True, "NEED_DB": True})]
