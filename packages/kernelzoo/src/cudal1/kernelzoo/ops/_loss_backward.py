"""Backward kernel of the per-row mean losses whose term is elementwise (mse_loss, smooth_l1_loss,
bce_with_logits_mean), written once. For ``out[r] = mean_j l(x[r, j], t[r, j])`` and the output gradient
``g`` (one value per row, read from its device pointer: no host sync)::

    w     = g[r] / D
    mse:        dx = w * 2 * (x - t)                        dt = -dx
    smooth_l1:  dx = w * (-1 if d <= -beta, 1 if d >= beta, else d / beta),  d = x - t;   dt = -dx
    l1:         dx = w * sgn(x - t)    (smooth_l1 with beta == 0, which torch computes as l1_loss: sgn(0) = 0)
    bce:        dx = w * (sigmoid(z) - t),  dt = -w * z,     z = x + bias;   dbias = sum over rows of dx

(torch's own backward formulas, kinks included). One read of ``x`` and ``t``, one write of each wanted
gradient, nothing recomputed but the elementwise term. Programs take tiles of ROWS x BLOCK_N elements; where a
bias gradient is wanted each program walks a band of rows, keeps its column sums in fp32 registers and writes them
once to a (programs, D) fp32 buffer summed after (as the norms' backward does for their weights).

Shapes: ``x``, ``t`` (..., D); ``g`` (...); ``bias`` (D,); fp32, bf16, fp16 (fp32 math, one rounding at the
store; each gradient in its input's dtype); CUDA (Triton's interpreter in the tests).
"""

from __future__ import annotations

import torch

from .._triton import tl, triton
from ..arch import check_table, pick
from ..kernel_specs import TritonKernel

__all__ = ["CONFIGS", "LOSSES", "backward_kernel", "pointwise_loss_backward_launch"]

#: TILE: elements (ROWS x BLOCK_N) per program and loop step, BLOCK_N at most MAX_BLOCK_N; PROGRAMS_PER_SM: the
#: grid's size per SM when a bias gradient is summed over rows (untuned)
CONFIGS = {
    "sm80": {"TILE": 4096, "MAX_BLOCK_N": 4096, "PROGRAMS_PER_SM": 4, "num_warps": 8},
    "sm86": {"TILE": 4096, "MAX_BLOCK_N": 2048, "PROGRAMS_PER_SM": 4, "num_warps": 8},
    "sm89": {"TILE": 4096, "MAX_BLOCK_N": 2048, "PROGRAMS_PER_SM": 4, "num_warps": 8},
    "sm90": {"TILE": 4096, "MAX_BLOCK_N": 4096, "PROGRAMS_PER_SM": 4, "num_warps": 8},
}
check_table(CONFIGS, "loss_backward")

#: loss -> the kernel's LOSS code
LOSSES = {"mse": 0, "smooth_l1": 1, "l1": 2, "bce": 3}
_MAX_COL_BLOCKS = 65535  # CUDA's limit on the grid's second dimension


@triton.jit
def _pointwise_loss_bwd_kernel(x_ptr, t_ptr, b_ptr, g_ptr, dx_ptr, dt_ptr, dbp_ptr, n_rows, n_cols, rows_per_prog,
                               beta, LOSS: tl.constexpr, HAS_B: tl.constexpr, DX: tl.constexpr, DT: tl.constexpr,
                               DB: tl.constexpr, ROWS: tl.constexpr, BLOCK_N: tl.constexpr):
    pid = tl.program_id(0).to(tl.int64)
    cols = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
    cmask = cols < n_cols
    if HAS_B:
        b = tl.load(b_ptr + cols, mask=cmask, other=0.0).to(tl.float32)
    db = tl.zeros([BLOCK_N], tl.float32)
    for start in range(0, rows_per_prog, ROWS):
        rows = pid * rows_per_prog + start + tl.arange(0, ROWS)
        rmask = rows < n_rows
        mask = rmask[:, None] & cmask[None, :]
        offs = rows[:, None] * n_cols + cols[None, :]
        x = tl.load(x_ptr + offs, mask=mask, other=0.0).to(tl.float32)
        t = tl.load(t_ptr + offs, mask=mask, other=0.0).to(tl.float32)
        w = (tl.load(g_ptr + rows, mask=rmask, other=0.0).to(tl.float32) / n_cols)[:, None]
        if LOSS == 0:  # mse
            dx = w * (2.0 * (x - t))
        elif LOSS == 1:  # smooth_l1, beta > 0
            d = x - t
            dx = w * tl.where(d <= -beta, -1.0, tl.where(d >= beta, 1.0, d / beta))
        elif LOSS == 2:  # l1 (beta == 0): sgn, 0 at 0 and at NaN
            d = x - t
            dx = w * tl.where(d > 0.0, 1.0, tl.where(d < 0.0, -1.0, 0.0))
        else:  # bce with logits
            z = x
            if HAS_B:
                z += b[None, :]
            dx = w * (1.0 / (1.0 + tl.exp(-z)) - t)
        if DX:
            tl.store(dx_ptr + offs, dx.to(dx_ptr.dtype.element_ty), mask=mask)
        if DT:
            if LOSS == 3:
                dt = -w * z
            else:
                dt = -dx
            tl.store(dt_ptr + offs, dt.to(dt_ptr.dtype.element_ty), mask=mask)
        if DB:
            db += tl.sum(dx, 0)  # masked rows have w == 0, masked columns are not stored
    if DB:
        tl.store(dbp_ptr + pid * n_cols + cols, db, mask=cmask)


def pointwise_loss_backward_launch(loss: str, x: torch.Tensor, t: torch.Tensor, grad: torch.Tensor, *,
                                   beta: float = 1.0, bias: torch.Tensor | None = None,
                                   wants: tuple[bool, bool, bool] = (True, False, False), config: dict | None = None,
                                   programs: int | None = None
                                   ) -> tuple[torch.Tensor | None, torch.Tensor | None, torch.Tensor | None]:
    """``(dx, dt, dbias)`` of the per-row mean loss ``loss`` (:data:`LOSSES`; see the module docstring) of ``x``,
    ``t`` (..., D) for its gradient ``grad`` (...); ``beta``: smooth_l1's (> 0); ``bias`` (D,): bce's, added to
    ``x``. ``wants``: which of the three to compute (None for the others). ``dx``/``dt`` are contiguous in
    ``x``'s/``t``'s dtype, ``dbias`` in ``bias``'s (summed in fp32). ``programs``: the grid's row bands when
    ``dbias`` is wanted (default: ``PROGRAMS_PER_SM`` per SM over the column blocks, 2 SMs without CUDA)."""
    if loss not in LOSSES:
        raise ValueError(f"no backward kernel for loss {loss!r}; known: {', '.join(LOSSES)}")
    if x.shape != t.shape or x.dim() < 1 or grad.shape != x.shape[:-1]:
        raise ValueError(f"{loss}: x and t must have one shape (..., D) and grad (...), got {tuple(x.shape)}, "
                         f"{tuple(t.shape)} and {tuple(grad.shape)}")
    want_x, want_t, want_b = wants
    if (bias is not None or want_b) and (loss != "bce" or bias is None or bias.shape != x.shape[-1:]):
        raise ValueError(f"{loss}: a bias (and its gradient) is bce's, of shape ({x.shape[-1]},); got "
                         f"{None if bias is None else tuple(bias.shape)}")
    if loss == "smooth_l1" and not beta > 0:
        raise ValueError(f"smooth_l1 takes beta > 0 (beta == 0 is loss 'l1'), got {beta}")
    xc, tc = x.contiguous(), t.contiguous()
    dx = torch.empty_like(xc) if want_x else None
    dt = torch.empty_like(tc) if want_t else None
    n_cols = xc.shape[-1]
    n_rows = xc.numel() // n_cols if n_cols else 0
    if not (n_rows and n_cols):  # nothing to write; no rows leave the bias gradient 0
        return dx, dt, torch.zeros_like(bias) if want_b else None
    cfg = config or pick(CONFIGS, x.device if x.is_cuda else None)
    block_n = min(triton.next_power_of_2(n_cols), cfg["MAX_BLOCK_N"])
    col_blocks = triton.cdiv(n_cols, block_n)
    if col_blocks > _MAX_COL_BLOCKS:
        raise ValueError(f"{loss}: rows of {n_cols} columns exceed the kernel's {_MAX_COL_BLOCKS} column blocks of "
                         f"{block_n}: use the reference")
    rows = min(max(1, cfg["TILE"] // block_n), triton.next_power_of_2(n_rows))
    chunks = triton.cdiv(n_rows, rows)
    if want_b:
        if programs is None:
            sms = torch.cuda.get_device_properties(x.device).multi_processor_count if x.is_cuda else 2
            programs = max(1, sms * cfg["PROGRAMS_PER_SM"] // col_blocks)
        per = triton.cdiv(chunks, max(1, min(programs, chunks))) * rows  # a band of whole ROWS chunks
    else:
        per = rows
    bands = triton.cdiv(n_rows, per)
    # every band writes its whole row of partials: no zero fill needed
    dbp = torch.empty((bands, n_cols), dtype=torch.float32, device=x.device) if want_b else None
    _pointwise_loss_bwd_kernel[(bands, col_blocks)](
        xc, tc, bias.contiguous() if bias is not None else xc, grad.contiguous(), dx if want_x else xc,
        dt if want_t else xc, dbp if want_b else xc, n_rows, n_cols, per, float(beta), LOSS=LOSSES[loss],
        HAS_B=bias is not None, DX=want_x, DT=want_t, DB=want_b, ROWS=rows, BLOCK_N=block_n,
        num_warps=cfg["num_warps"])
    return dx, dt, dbp.sum(0).to(bias.dtype) if want_b else None


def backward_kernel(loss: str, *, bias: bool = False) -> TritonKernel:
    """The kernel as an op module declares it in ``TRITON_KERNELS`` (bf16, every gradient wanted, 4096-column
    tiles; the module exposes this file's table as ``LOSS_BWD_CONFIGS``)."""
    sig = {"x_ptr": "*bf16", "t_ptr": "*bf16", "b_ptr": "*bf16", "g_ptr": "*bf16", "dx_ptr": "*bf16",
           "dt_ptr": "*bf16", "dbp_ptr": "*fp32", "n_rows": "i64", "n_cols": "i32", "rows_per_prog": "i64",
           "beta": "fp32"}
    return TritonKernel(_pointwise_loss_bwd_kernel.__name__, sig, configs="LOSS_BWD_CONFIGS", defined_in=__name__,
                        constexprs={"LOSS": LOSSES[loss], "HAS_B": bias, "DX": True, "DT": True, "DB": bias,
                                    "ROWS": 1, "BLOCK_N": 4096})
