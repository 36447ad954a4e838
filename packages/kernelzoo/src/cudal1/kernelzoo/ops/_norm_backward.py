"""Backward kernel of the row norms (rms_norm, add_rms_norm, layer_norm), written once for all three.

Per row of ``x`` (R, N) with weight ``w`` (N,) and output gradient ``dy``, statistics recomputed in fp32 from
``x`` (the forward saves nothing but its inputs)::

    RMS:   xhat = x * rstd,              rstd = 1 / sqrt(mean(x^2) + eps)
           dx   = rstd * (w*dy - xhat * mean(xhat * w*dy))
    LAYER: xhat = (x - mean(x)) * rstd,  rstd = 1 / sqrt(var(x) + eps)
           dx   = rstd * (w*dy - mean(w*dy) - xhat * mean(xhat * w*dy))
    dx += dh                      (add_rms_norm: the gradient reaching the residual stream ``h`` directly)
    dw  = sum over rows of dy * xhat,   db = sum over rows of dy

A persistent grid (a few programs per SM) walks the rows; each program keeps its rows' share of ``dw`` and
``db`` in fp32 registers and writes it once, and the (programs, N) partials are summed after: one read of ``x``
and ``dy`` (and ``dh``) and one write of ``dx`` per element. Rows up to ``MAX_N`` columns are held whole in
registers; longer rows are not taken (the caller falls back to the reference's backward).
"""

from __future__ import annotations

import torch

from .._triton import tl, triton
from ..arch import check_table, pick
from ..kernel_specs import TritonKernel
from ..registry import on_kernels

__all__ = ["CONFIGS", "backward_kernel", "norm_backward_launch", "takes"]

#: MAX_N: longest row held in registers; PROGRAMS_PER_SM: persistent programs per SM; num_warps per program,
#: grown with the row (``warps_for``)
CONFIGS = {
    "sm80": {"MAX_N": 16384, "PROGRAMS_PER_SM": 2, "num_warps": 8},
    "sm86": {"MAX_N": 16384, "PROGRAMS_PER_SM": 2, "num_warps": 8},
    "sm89": {"MAX_N": 16384, "PROGRAMS_PER_SM": 2, "num_warps": 8},
    "sm90": {"MAX_N": 16384, "PROGRAMS_PER_SM": 2, "num_warps": 8},
}
check_table(CONFIGS, "norm_backward")



@triton.jit
def _norm_bwd_kernel(x_ptr, w_ptr, dy_ptr, dh_ptr, dx_ptr, dwp_ptr, dbp_ptr, n_rows, n_cols, eps,
                     RMS: tl.constexpr, HAS_DH: tl.constexpr, HAS_B: tl.constexpr, BLOCK_N: tl.constexpr):
    pid = tl.program_id(0)
    zero64 = pid.to(tl.int64) * 0  # 64-bit row offsets (the loop variable is a plain int in the interpreter)
    step = tl.num_programs(0)
    cols = tl.arange(0, BLOCK_N)
    cmask = cols < n_cols
    w = tl.load(w_ptr + cols, mask=cmask, other=0.0).to(tl.float32)
    dw = tl.zeros([BLOCK_N], tl.float32)
    db = tl.zeros([BLOCK_N], tl.float32)
    for row in range(pid, n_rows, step):
        base = (zero64 + row) * n_cols
        x = tl.load(x_ptr + base + cols, mask=cmask, other=0.0).to(tl.float32)
        dy = tl.load(dy_ptr + base + cols, mask=cmask, other=0.0).to(tl.float32)
        if RMS:
            xc = x
        else:
            xc = tl.where(cmask, x - tl.sum(x, 0) / n_cols, 0.0)
        rstd = 1.0 / tl.sqrt(tl.sum(xc * xc, 0) / n_cols + eps)
        xhat = xc * rstd
        wdy = w * dy
        c1 = tl.sum(xhat * wdy, 0) / n_cols
        if RMS:
            dx = (wdy - xhat * c1) * rstd
        else:
            dx = (wdy - xhat * c1 - tl.sum(wdy, 0) / n_cols) * rstd
        if HAS_DH:
            dx += tl.load(dh_ptr + base + cols, mask=cmask, other=0.0).to(tl.float32)
        tl.store(dx_ptr + base + cols, dx.to(dx_ptr.dtype.element_ty), mask=cmask)
        dw += dy * xhat
        if HAS_B:
            db += dy
    tl.store(dwp_ptr + pid * n_cols + cols, dw, mask=cmask)
    if HAS_B:
        tl.store(dbp_ptr + pid * n_cols + cols, db, mask=cmask)


def takes(x: torch.Tensor, weight: torch.Tensor, config: dict | None = None) -> bool:
    """Whether the kernel computes this backward: CUDA, fp32/bf16/fp16 rows of at most ``MAX_N`` columns, a
    weight of the row's width (any device check is the caller's)."""
    if not on_kernels(x, weight):
        return False
    cfg = config or pick(CONFIGS, x.device)
    return weight.shape == (x.shape[-1],) and 0 < x.shape[-1] <= cfg["MAX_N"]


def _warps(block_n: int, base: int) -> int:
    return max(1, min(32, max(base, block_n // 512)))


def norm_backward_launch(x: torch.Tensor, weight: torch.Tensor, dy: torch.Tensor, eps: float, *, rms: bool,
                         dh: torch.Tensor | None = None, bias: bool = False, config: dict | None = None,
                         programs: int | None = None) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor | None]:
    """``(dx, dweight, dbias)`` of an RMS norm (``rms=True``) or layer norm of ``x`` (..., N) with ``weight``
    (N,), given the output gradient ``dy`` (``x``'s shape); ``dh`` (``x``'s shape) is added to ``dx``;
    ``dbias`` only with ``bias=True``. ``dx`` has ``x``'s dtype, ``dweight``/``dbias`` ``weight``'s (summed in
    fp32). ``programs``: the persistent grid size (default: ``PROGRAMS_PER_SM`` per SM, 4 without CUDA)."""
    n_cols = x.shape[-1]
    if weight.shape != (n_cols,):
        raise ValueError(f"weight must have shape ({n_cols},), got {tuple(weight.shape)}")
    if dy.shape != x.shape or (dh is not None and dh.shape != x.shape):
        raise ValueError(f"the gradients must have x's shape {tuple(x.shape)}")
    cfg = config or pick(CONFIGS, x.device if x.is_cuda else None)
    block_n = triton.next_power_of_2(max(n_cols, 1))
    if block_n > triton.next_power_of_2(cfg["MAX_N"]):
        raise ValueError(f"rows of {n_cols} columns exceed the kernel's MAX_N {cfg['MAX_N']}: use the reference")
    xc, dyc = x.contiguous(), dy.contiguous()
    n_rows = xc.numel() // max(n_cols, 1)
    dx = torch.empty_like(xc)
    if programs is None:
        sms = torch.cuda.get_device_properties(x.device).multi_processor_count if x.is_cuda else 2
        programs = sms * cfg["PROGRAMS_PER_SM"]
    programs = max(1, min(programs, n_rows))
    # every program writes its whole row of partials (n_rows >= programs): no zero fill needed
    dwp = torch.empty((programs, n_cols), dtype=torch.float32, device=x.device)
    dbp = torch.empty((programs, n_cols), dtype=torch.float32, device=x.device) if bias else dwp
    if not (n_rows and n_cols):
        dwp.zero_()
        dbp.zero_()
    else:
        dhc = dh.contiguous() if dh is not None else xc
        _norm_bwd_kernel[(programs,)](xc, weight.contiguous(), dyc, dhc, dx, dwp, dbp, n_rows, n_cols, eps,
                                      RMS=rms, HAS_DH=dh is not None, HAS_B=bias, BLOCK_N=block_n,
                                      num_warps=_warps(block_n, cfg["num_warps"]))
    dw = dwp.sum(0).to(weight.dtype)
    db = dbp.sum(0).to(weight.dtype) if bias else None
    return dx, dw, db


_SIGNATURE = {"x_ptr": "*bf16", "w_ptr": "*bf16", "dy_ptr": "*bf16", "dh_ptr": "*bf16", "dx_ptr": "*bf16",
              "dwp_ptr": "*fp32", "dbp_ptr": "*fp32", "n_rows": "i32", "n_cols": "i32", "eps": "fp32"}


def backward_kernel(*, rms: bool, dh: bool = False, bias: bool = False) -> TritonKernel:
    """The kernel as an op module declares it in ``TRITON_KERNELS`` (bf16, 4096-column rows; the module
    exposes this file's table as ``NORM_BWD_CONFIGS``)."""
    return TritonKernel(_norm_bwd_kernel.__name__, _SIGNATURE, configs="NORM_BWD_CONFIGS", defined_in=__name__,
                        constexprs={"RMS": rms, "HAS_DH": dh, "HAS_B": bias, "BLOCK_N": 4096})
