"""Backward kernel of the row norms, written once for all of them: rms_norm, add_rms_norm, layer_norm, and the
fused layer norms of ``_fused_norm`` (add_layer_norm, layer_norm_modulate, embedding_layer_norm).

Per row of ``h`` (R, N), statistics recomputed in fp32 from the inputs (the forwards save nothing but their
inputs), with ``g`` the gradient reaching the affine output::

    h    = x[ids[r] if GATHER else r] (+ pre_bias) (+ residual[r % res_period])     (as _fused_norm builds it)
    RMS:   xhat = h * rstd,              rstd = 1 / sqrt(mean(h^2) + eps)
    LAYER: xhat = (h - mean(h)) * rstd,  rstd = 1 / sqrt(var(h) + eps)
    g    = dy * act'(xhat * w + b)        (ACT: the fused norms' activation; g = dy without one)
    dh   = rstd * (w*g - xhat * mean(xhat * w*g))                 (RMS)
    dh   = rstd * (w*g - mean(w*g) - xhat * mean(xhat * w*g))     (LAYER)
    dh  += dh_in                  (add_rms_norm: the gradient reaching the residual stream directly)
    dw   = sum over rows of g * xhat,   db = sum over rows of g,   dpre_bias = sum over rows of dh

``w`` and ``b`` are the (N,) weight and bias (``w = 1`` without a weight), or with ``MOD`` per row group: rows
``[k * G, (k + 1) * G)`` take ``w = 1 + scale[k]``, ``b = shift[k]`` (layer_norm_modulate; ``dw``, ``db`` are then
``dscale``, ``dshift``, one row per group). The gradients of a gathered table or a periodic residual (``dh``
scattered back by id or by position) are the caller's: ``dh`` is written per row, in fp32 if asked.

A persistent grid (a few programs per SM; with ``MOD`` that many per group, the group on grid axis 1) walks the
rows; each program keeps its rows' share of ``dw``, ``db``, ``dpre_bias`` in fp32 registers and writes it once,
and the (programs, N) partials are summed after: one read of ``h``'s inputs and ``dy`` (and ``dh_in``) and one
write of ``dh`` per element. Rows up to ``MAX_N`` columns are held whole in registers; longer rows are not taken
(the caller falls back to the reference's backward).
"""

from __future__ import annotations

import torch

from .._triton import tl, triton
from ..arch import check_table, pick
from ..kernel_specs import TritonKernel
from ..registry import on_kernels
from ._activation_backward import fused_act_grad
from ._fused_norm import ACTIVATIONS

__all__ = ["CONFIGS", "MAX_GROUPS", "backward_kernel", "fused_norm_backward_launch", "norm_backward_launch", "sum_partials",
           "sum_partials_kernel", "takes"]

#: MAX_N: longest row held in registers; PROGRAMS_PER_SM: persistent programs per SM; num_warps per program,
#: grown with the row (``_warps``)
CONFIGS = {
    "sm80": {"MAX_N": 16384, "PROGRAMS_PER_SM": 2, "num_warps": 8},
    "sm86": {"MAX_N": 16384, "PROGRAMS_PER_SM": 2, "num_warps": 8},
    "sm89": {"MAX_N": 16384, "PROGRAMS_PER_SM": 2, "num_warps": 8},
    "sm90": {"MAX_N": 16384, "PROGRAMS_PER_SM": 2, "num_warps": 8},
}
check_table(CONFIGS, "norm_backward")

#: most row groups (``MOD``) one launch takes (grid axis 1)
MAX_GROUPS = 65535


@triton.jit
def _norm_bwd_kernel(x_ptr, ids_ptr, res_ptr, pb_ptr, w_ptr, b_ptr, dy_ptr, dh_ptr, dx_ptr, dwp_ptr, dbp_ptr,
                     dpp_ptr, n_rows, n_cols, res_period, eps,
                     RMS: tl.constexpr, HAS_DH: tl.constexpr, HAS_B: tl.constexpr, BLOCK_N: tl.constexpr,
                     HAS_W: tl.constexpr = True, GATHER: tl.constexpr = False, HAS_RES: tl.constexpr = False,
                     HAS_PRE_BIAS: tl.constexpr = False, MOD: tl.constexpr = False, ACT: tl.constexpr = 0):
    pid = tl.program_id(0)
    grp = tl.program_id(1).to(tl.int64)  # the row group: rows [grp * n_rows, (grp + 1) * n_rows); 0 without MOD
    step = tl.num_programs(0)
    cols = tl.arange(0, BLOCK_N)
    cmask = cols < n_cols
    if MOD:
        prow = grp * n_cols  # the group's (scale, shift) row
    else:
        prow = grp * 0
    if HAS_W:
        w = tl.load(w_ptr + prow + cols, mask=cmask, other=0.0).to(tl.float32)
        if MOD:
            w += 1.0
    if HAS_B and ACT != 0:
        b = tl.load(b_ptr + prow + cols, mask=cmask, other=0.0).to(tl.float32)
    if HAS_PRE_BIAS:
        pb = tl.load(pb_ptr + cols, mask=cmask, other=0.0).to(tl.float32)
    dw = tl.zeros([BLOCK_N], tl.float32)
    db = tl.zeros([BLOCK_N], tl.float32)
    dp = tl.zeros([BLOCK_N], tl.float32)
    for row in range(pid, n_rows, step):
        r = grp * n_rows + row  # 64-bit (the loop variable is a plain int in the interpreter)
        base = r * n_cols
        if GATHER:
            xbase = tl.load(ids_ptr + r).to(tl.int64) * n_cols
        else:
            xbase = base
        x = tl.load(x_ptr + xbase + cols, mask=cmask, other=0.0).to(tl.float32)
        if HAS_PRE_BIAS:
            x += pb
        if HAS_RES:
            x += tl.load(res_ptr + (r % res_period) * n_cols + cols, mask=cmask, other=0.0).to(tl.float32)
        dy = tl.load(dy_ptr + base + cols, mask=cmask, other=0.0).to(tl.float32)
        if RMS:
            xc = x
        else:
            xc = tl.where(cmask, x - tl.sum(x, 0) / n_cols, 0.0)
        rstd = 1.0 / tl.sqrt(tl.sum(xc * xc, 0) / n_cols + eps)
        xhat = xc * rstd
        if ACT != 0:  # the activation's derivative at the recomputed affine output
            z = xhat
            if HAS_W:
                z = z * w
            if HAS_B:
                z = z + b
            dy = dy * fused_act_grad(z, ACT)
        if HAS_W:
            wdy = w * dy
        else:
            wdy = dy
        c1 = tl.sum(xhat * wdy, 0) / n_cols
        if RMS:
            dx = (wdy - xhat * c1) * rstd
        else:
            dx = (wdy - xhat * c1 - tl.sum(wdy, 0) / n_cols) * rstd
        if HAS_DH:
            dx += tl.load(dh_ptr + base + cols, mask=cmask, other=0.0).to(tl.float32)
        tl.store(dx_ptr + base + cols, dx.to(dx_ptr.dtype.element_ty), mask=cmask)
        if HAS_W:
            dw += dy * xhat
        if HAS_B:
            db += dy
        if HAS_PRE_BIAS:
            dp += dx
    part = (grp * step + pid) * n_cols + cols
    if HAS_W:
        tl.store(dwp_ptr + part, dw, mask=cmask)
    if HAS_B:
        tl.store(dbp_ptr + part, db, mask=cmask)
    if HAS_PRE_BIAS:
        tl.store(dpp_ptr + part, dp, mask=cmask)


def takes(x: torch.Tensor, weight: torch.Tensor | None, *others: torch.Tensor | None, config: dict | None = None
          ) -> bool:
    """Whether the kernel computes this backward: CUDA, fp32/bf16/fp16 rows of at most ``MAX_N`` columns, a
    weight (if any) of the row's width; ``others``: further tensors (None skipped) that must be on the kernels
    too (any shape check beyond that is the caller's)."""
    tensors = [t for t in (x, weight, *others) if t is not None]
    if not on_kernels(*tensors):
        return False
    cfg = config or pick(CONFIGS, x.device)
    return (weight is None or weight.shape == (x.shape[-1],)) and 0 < x.shape[-1] <= cfg["MAX_N"]


def _warps(block_n: int, base: int) -> int:
    return max(1, min(32, max(base, block_n // 512)))


@triton.jit
def _sum_partials_kernel(p_ptr, out_ptr, n_parts, n_cols, BLOCK: tl.constexpr):
    """out[k, :] = sum over j of p[k, j, :] for p (K, n_parts, n_cols) fp32; grid (cdiv(n_cols, BLOCK), K)."""
    k = tl.program_id(1).to(tl.int64)
    cols = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = cols < n_cols
    acc = tl.zeros([BLOCK], tl.float32)
    base = k * n_parts * n_cols
    for j in range(0, n_parts):
        acc += tl.load(p_ptr + base + j * n_cols + cols, mask=mask, other=0.0)
    tl.store(out_ptr + k * n_cols + cols, acc.to(out_ptr.dtype.element_ty), mask=mask)


def sum_partials(parts: torch.Tensor, programs: int, dtype: torch.dtype) -> torch.Tensor:
    """The programs' partial sums ``parts`` (sums, groups * programs, N) fp32 reduced over the programs:
    (sums * groups, N) in ``dtype`` (fp32 accumulation, one rounding), one launch."""
    k, gp, n = parts.shape
    groups = gp // max(programs, 1)
    out = torch.empty((k * groups, n), dtype=dtype, device=parts.device)
    if out.numel():
        block = min(1024, triton.next_power_of_2(max(n, 1)))
        _sum_partials_kernel[(triton.cdiv(n, block), k * groups)](parts, out, programs, n, BLOCK=block,
                                                                   num_warps=4)
    return out


def _rows_of(t: torch.Tensor | None, shape: tuple[int, int], what: str) -> torch.Tensor | None:
    if t is None:
        return None
    if t.numel() != shape[0] * shape[1] or t.shape[-1] != shape[1]:
        raise ValueError(f"{what} must have {shape[0]} x {shape[1]} elements (rows of N), got {tuple(t.shape)}")
    return t.contiguous()


def fused_norm_backward_launch(x: torch.Tensor, dy: torch.Tensor, n_rows: int, eps: float, *, rms: bool = False,
                               ids: torch.Tensor | None = None, residual: torch.Tensor | None = None,
                               res_period: int | None = None, pre_bias: torch.Tensor | None = None,
                               weight: torch.Tensor | None = None, bias: torch.Tensor | None = None,
                               scale: torch.Tensor | None = None, shift: torch.Tensor | None = None,
                               mod_group: int = 1, activation: str = "none", dh: torch.Tensor | None = None,
                               dx_dtype: torch.dtype | None = None, config: dict | None = None,
                               programs: int | None = None
                               ) -> tuple[torch.Tensor, torch.Tensor | None, torch.Tensor | None, torch.Tensor | None]:
    """Gradients of ``_fused_norm.fused_norm_launch``'s norm (a layer norm, or an RMS norm with ``rms=True``) over
    ``n_rows`` rows of ``N = x.shape[-1]`` columns, for the output gradient ``dy`` (``n_rows * N`` elements), the
    inputs as that launcher takes them: ``x`` (rows, N) or a table gathered by ``ids`` (``n_rows`` int64),
    ``residual`` (res_period, N), ``pre_bias``, ``weight``, ``bias`` (N,), or ``scale``, ``shift``
    (n_rows // mod_group, N) instead of ``weight``, ``bias``. ``dh`` (like ``dy``) is added to the row gradient.

    Returns ``(dh_rows, dweight, dbias, dpre_bias)``: the gradient of each row's ``h`` (``dy``'s shape, dtype
    ``dx_dtype`` or ``x``'s; the caller scatters it to a gathered table or periodic residual), then the sums over
    rows (``dscale``, ``dshift`` (groups, N) with ``scale``), each in its parameter's dtype, None where that
    parameter is None. ``programs``: persistent programs (per group) (default: ``PROGRAMS_PER_SM`` per SM, 4
    without CUDA)."""
    if activation not in ACTIVATIONS:
        raise ValueError(f"activation must be one of {', '.join(ACTIVATIONS)}, got {activation!r}")
    mod = scale is not None or shift is not None
    if mod and (scale is None or shift is None or weight is not None or bias is not None):
        raise ValueError("modulation takes scale and shift together, and no weight or bias")
    n_cols = x.shape[-1]
    cfg = config or pick(CONFIGS, x.device if x.is_cuda else None)
    block_n = triton.next_power_of_2(max(n_cols, 1))
    if block_n > triton.next_power_of_2(cfg["MAX_N"]):
        raise ValueError(f"rows of {n_cols} columns exceed the kernel's MAX_N {cfg['MAX_N']}: use the reference")
    groups = n_rows // mod_group if mod and mod_group else 1
    if mod and (groups * mod_group != n_rows or groups > MAX_GROUPS):
        raise ValueError(f"{n_rows} rows must form at most {MAX_GROUPS} groups of mod_group = {mod_group}")
    dy = _rows_of(dy, (n_rows, n_cols), "dy")
    dh = _rows_of(dh, (n_rows, n_cols), "dh")
    if ids is None:
        x = _rows_of(x, (n_rows, n_cols), "x")
    elif ids.numel() != n_rows:
        raise ValueError(f"ids must have {n_rows} elements (one per row), got {tuple(ids.shape)}")
    else:
        x = x.contiguous()
    period = res_period or n_rows
    residual = _rows_of(residual, (period, n_cols), "residual")
    pre_bias, weight, bias = (_rows_of(t, (1, n_cols), what)
                              for t, what in ((pre_bias, "pre_bias"), (weight, "weight"), (bias, "bias")))
    if mod:
        weight, bias = _rows_of(scale, (groups, n_cols), "scale"), _rows_of(shift, (groups, n_cols), "shift")
    dx = torch.empty(dy.shape, dtype=dx_dtype or x.dtype, device=x.device)
    rows_per_group = n_rows // groups if groups else 0
    if programs is None:
        sms = torch.cuda.get_device_properties(x.device).multi_processor_count if x.is_cuda else 2
        programs = max(1, sms * cfg["PROGRAMS_PER_SM"] // max(groups, 1))
    programs = max(1, min(programs, rows_per_group))
    # every program writes its whole row of partials (rows_per_group >= programs): no zero fill needed. One
    # (sums, groups * programs, N) fp32 buffer for the wanted sums, reduced after by one kernel into one
    # (sums * groups, N) buffer in the parameters' dtype (two launches in all: a torch sum and cast per parameter
    # cost ~25 us of host time each on the H100's host)
    names = [name for name, t in (("w", weight), ("b", bias), ("p", pre_bias)) if t is not None]
    buf = torch.empty((max(len(names), 1), groups * programs, n_cols), dtype=torch.float32, device=x.device)
    parts = {name: buf[i] for i, name in enumerate(names)}
    if not (n_rows and n_cols):
        buf.zero_()
    else:
        _norm_bwd_kernel[(programs, groups)](
            x, ids.contiguous() if ids is not None else x, residual if residual is not None else x,
            pre_bias if pre_bias is not None else x, weight if weight is not None else x,
            bias if bias is not None else x, dy, dh if dh is not None else dy, dx, parts.get("w", dx),
            parts.get("b", dx), parts.get("p", dx), rows_per_group, n_cols, period, eps,
            RMS=rms, HAS_DH=dh is not None, HAS_B=bias is not None, BLOCK_N=block_n, HAS_W=weight is not None,
            GATHER=ids is not None, HAS_RES=residual is not None, HAS_PRE_BIAS=pre_bias is not None, MOD=mod,
            ACT=ACTIVATIONS[activation], num_warps=_warps(block_n, cfg["num_warps"]))
    params = {"w": weight, "b": bias, "p": pre_bias}
    dtypes = {params[n].dtype for n in names}
    # the sums in the parameters' dtype (fp32 where they differ, each then cast on its own)
    sums = sum_partials(buf[: len(names)], programs, dtypes.pop() if len(dtypes) == 1 else torch.float32)

    def total(name: str) -> torch.Tensor | None:
        if name not in parts:
            return None
        i = names.index(name)
        got = sums[i * groups:(i + 1) * groups].to(params[name].dtype)
        return got if mod else got[0]

    return dx, total("w"), total("b"), total("p")


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
    # without an activation the kernel reads no bias values, only sums dy: weight stands in for the bias
    dx, dw, db, _ = fused_norm_backward_launch(x, dy, x.numel() // max(n_cols, 1), eps, rms=rms, weight=weight,
                                               bias=weight if bias else None, dh=dh, config=config,
                                               programs=programs)
    return dx, dw, db


_SIGNATURE = {"x_ptr": "*bf16", "ids_ptr": "*i64", "res_ptr": "*bf16", "pb_ptr": "*bf16", "w_ptr": "*bf16",
              "b_ptr": "*bf16", "dy_ptr": "*bf16", "dh_ptr": "*bf16", "dx_ptr": "*bf16", "dwp_ptr": "*fp32",
              "dbp_ptr": "*fp32", "dpp_ptr": "*fp32", "n_rows": "i32", "n_cols": "i32", "res_period": "i64",
              "eps": "fp32"}


def sum_partials_kernel() -> TritonKernel:
    """:func:`sum_partials`'s kernel as an op module declares it in ``TRITON_KERNELS`` (fp32 partials, bf16 out)."""
    return TritonKernel(_sum_partials_kernel.__name__, {"p_ptr": "*fp32", "out_ptr": "*bf16", "n_parts": "i32",
                                                        "n_cols": "i32"}, constexprs={"BLOCK": 1024},
                        configs="NORM_BWD_CONFIGS", defined_in=__name__)


def backward_kernel(*, rms: bool, dh: bool = False, bias: bool = False, weight: bool = True, gather: bool = False,
                    residual: bool = False, pre_bias: bool = False, mod: bool = False, act: int = 0) -> TritonKernel:
    """The kernel as an op module declares it in ``TRITON_KERNELS`` (bf16, 4096-column rows; the module
    exposes this file's table as ``NORM_BWD_CONFIGS``)."""
    return TritonKernel(_norm_bwd_kernel.__name__, _SIGNATURE, configs="NORM_BWD_CONFIGS", defined_in=__name__,
                        constexprs={"RMS": rms, "HAS_DH": dh, "HAS_B": bias, "BLOCK_N": 4096, "HAS_W": weight,
                                    "GATHER": gather, "HAS_RES": residual, "HAS_PRE_BIAS": pre_bias, "MOD": mod,
                                    "ACT": act})
