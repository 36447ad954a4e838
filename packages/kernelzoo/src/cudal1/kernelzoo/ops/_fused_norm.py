"""Shared row-wise layer-norm kernel of the fused norm ops (add_layer_norm, layer_norm_modulate,
embedding_layer_norm): one kernel, features switched on by constexprs, so the normalisation is written once.

Per row ``r`` of an (R, N) float32 problem::

    h = x[ids[r] if GATHER else r] (+ pre_bias) (+ residual[r % res_period])
    y = (h - mean(h)) / sqrt(var(h) + eps)            (biased variance, as torch)
    y = y (* weight) (+ bias)                         (N,) affine
    y = y * (1 + scale[r // mod_group]) + shift[r // mod_group]    (per-row-group modulation)
    out[r] = act(y)                                   act: none / relu / gelu (erf) / silu

Rows of up to ``MAX_N`` columns are held in registers (one read of each input, one write); longer rows
take three passes (mean, variance, write) over column blocks. ``out`` may be ``x`` itself (in place): each
row is read completely before any of it is written, by the same program. Offsets are 64-bit.
"""

from __future__ import annotations

import torch

from .._triton import tl, triton
from ..arch import check_table, pick

#: activation name -> the kernel's ACT constexpr
ACTIVATIONS = {"none": 0, "relu": 1, "gelu": 2, "silu": 3}

#: TILE: elements per program for short rows (several rows per program); MAX_N: longest row kept in
#: registers; BLOCK: column block of the three-pass path for longer rows.
CONFIGS = {
    "sm80": {"TILE": 4096, "MAX_N": 16384, "BLOCK": 4096, "num_warps": 8},
    "sm86": {"TILE": 4096, "MAX_N": 8192, "BLOCK": 2048, "num_warps": 8},
    "sm89": {"TILE": 4096, "MAX_N": 8192, "BLOCK": 2048, "num_warps": 8},
    "sm90": {"TILE": 4096, "MAX_N": 16384, "BLOCK": 4096, "num_warps": 8},
}
check_table(CONFIGS, "fused_norm")


def activate(y: torch.Tensor, activation: str) -> torch.Tensor:
    """Reference activation (``none``, ``relu``, ``gelu`` (erf form), ``silu``)."""
    if activation == "none":
        return y
    if activation == "relu":
        return torch.relu(y)
    if activation == "gelu":
        return torch.nn.functional.gelu(y)
    if activation == "silu":
        return torch.nn.functional.silu(y)
    raise ValueError(f"activation must be one of {', '.join(ACTIVATIONS)}, got {activation!r}")


@triton.jit
def _act(y, ACT: tl.constexpr):
    if ACT == 1:
        y = tl.maximum(y, 0.0)
    elif ACT == 2:
        y = 0.5 * y * (1.0 + tl.erf(y * 0.7071067811865476))
    elif ACT == 3:
        y = y / (1.0 + tl.exp(-y))
    return y


@triton.jit
def _load_h(x_ptr, ids_ptr, res_ptr, pb_ptr, rows, cols, mask, n_cols, res_period,
            GATHER: tl.constexpr, HAS_RES: tl.constexpr, HAS_PRE_BIAS: tl.constexpr):
    if GATHER:
        xrow = tl.load(ids_ptr + rows).to(tl.int64)  # rows are clamped in range by the caller
    else:
        xrow = rows
    h = tl.load(x_ptr + xrow[:, None] * n_cols + cols[None, :], mask=mask, other=0.0).to(tl.float32)
    if HAS_PRE_BIAS:
        h += tl.load(pb_ptr + cols, mask=cols < n_cols, other=0.0).to(tl.float32)[None, :]
    if HAS_RES:
        rrow = rows % res_period
        h += tl.load(res_ptr + rrow[:, None] * n_cols + cols[None, :], mask=mask, other=0.0).to(tl.float32)
    return h


@triton.jit
def _finish(y, w_ptr, b_ptr, sc_ptr, sh_ptr, rows, cols, mask, n_cols, mod_group,
            HAS_W: tl.constexpr, HAS_B: tl.constexpr, HAS_MOD: tl.constexpr, ACT: tl.constexpr):
    cmask = cols < n_cols
    if HAS_W:
        y = y * tl.load(w_ptr + cols, mask=cmask, other=0.0).to(tl.float32)[None, :]
    if HAS_B:
        y = y + tl.load(b_ptr + cols, mask=cmask, other=0.0).to(tl.float32)[None, :]
    if HAS_MOD:
        g = (rows // mod_group)[:, None] * n_cols + cols[None, :]
        sc = tl.load(sc_ptr + g, mask=mask, other=0.0).to(tl.float32)
        sh = tl.load(sh_ptr + g, mask=mask, other=0.0).to(tl.float32)
        y = y * (1.0 + sc) + sh
    return _act(y, ACT)


@triton.jit
def _fused_norm_kernel(x_ptr, ids_ptr, res_ptr, pb_ptr, w_ptr, b_ptr, sc_ptr, sh_ptr, y_ptr,
                       n_rows, n_cols, res_period, mod_group, eps,
                       GATHER: tl.constexpr, HAS_RES: tl.constexpr, HAS_PRE_BIAS: tl.constexpr,
                       HAS_W: tl.constexpr, HAS_B: tl.constexpr, HAS_MOD: tl.constexpr, ACT: tl.constexpr,
                       ROWS: tl.constexpr, BLOCK_N: tl.constexpr, ONE_TILE: tl.constexpr):
    rows = tl.program_id(0).to(tl.int64) * ROWS + tl.arange(0, ROWS)
    row_ok = rows < n_rows
    rows = tl.where(row_ok, rows, 0)  # keep gathered indices in range; stores stay masked
    if ONE_TILE:
        cols = tl.arange(0, BLOCK_N)
        mask = row_ok[:, None] & (cols < n_cols)[None, :]
        h = _load_h(x_ptr, ids_ptr, res_ptr, pb_ptr, rows, cols, mask, n_cols, res_period,
                    GATHER, HAS_RES, HAS_PRE_BIAS)
        mean = tl.sum(h, 1) / n_cols
        d = tl.where(mask, h - mean[:, None], 0.0)
        rstd = 1.0 / tl.sqrt(tl.sum(d * d, 1) / n_cols + eps)
        y = _finish(d * rstd[:, None], w_ptr, b_ptr, sc_ptr, sh_ptr, rows, cols, mask, n_cols, mod_group,
                    HAS_W, HAS_B, HAS_MOD, ACT)
        tl.store(y_ptr + rows[:, None] * n_cols + cols[None, :], y.to(y_ptr.dtype.element_ty), mask=mask)
    else:
        acc = tl.zeros([ROWS, BLOCK_N], tl.float32)
        for start in range(0, n_cols, BLOCK_N):
            cols = start + tl.arange(0, BLOCK_N)
            mask = row_ok[:, None] & (cols < n_cols)[None, :]
            acc += _load_h(x_ptr, ids_ptr, res_ptr, pb_ptr, rows, cols, mask, n_cols, res_period,
                           GATHER, HAS_RES, HAS_PRE_BIAS)
        mean = tl.sum(acc, 1) / n_cols
        acc = tl.zeros([ROWS, BLOCK_N], tl.float32)
        for start in range(0, n_cols, BLOCK_N):
            cols = start + tl.arange(0, BLOCK_N)
            mask = row_ok[:, None] & (cols < n_cols)[None, :]
            h = _load_h(x_ptr, ids_ptr, res_ptr, pb_ptr, rows, cols, mask, n_cols, res_period,
                        GATHER, HAS_RES, HAS_PRE_BIAS)
            d = tl.where(mask, h - mean[:, None], 0.0)
            acc += d * d
        rstd = 1.0 / tl.sqrt(tl.sum(acc, 1) / n_cols + eps)
        for start in range(0, n_cols, BLOCK_N):
            cols = start + tl.arange(0, BLOCK_N)
            mask = row_ok[:, None] & (cols < n_cols)[None, :]
            h = _load_h(x_ptr, ids_ptr, res_ptr, pb_ptr, rows, cols, mask, n_cols, res_period,
                        GATHER, HAS_RES, HAS_PRE_BIAS)
            y = _finish((h - mean[:, None]) * rstd[:, None], w_ptr, b_ptr, sc_ptr, sh_ptr, rows, cols, mask,
                        n_cols, mod_group, HAS_W, HAS_B, HAS_MOD, ACT)
            tl.store(y_ptr + rows[:, None] * n_cols + cols[None, :], y.to(y_ptr.dtype.element_ty), mask=mask)


def _vec(t: torch.Tensor | None, n: int, what: str) -> torch.Tensor | None:
    if t is None:
        return None
    if t.shape != (n,):
        raise ValueError(f"{what} must have shape ({n},), got {tuple(t.shape)}")
    return t.contiguous()


def fused_norm_launch(x: torch.Tensor, out: torch.Tensor, n_rows: int, *, ids: torch.Tensor | None = None,
                      residual: torch.Tensor | None = None, res_period: int | None = None,
                      pre_bias: torch.Tensor | None = None, weight: torch.Tensor | None = None,
                      bias: torch.Tensor | None = None, scale: torch.Tensor | None = None,
                      shift: torch.Tensor | None = None, mod_group: int = 1, eps: float = 1e-5,
                      activation: str = "none", config: dict | None = None) -> torch.Tensor:
    """Run the kernel over ``n_rows`` rows of ``N = x.shape[-1]`` columns, writing ``out`` (contiguous,
    ``n_rows * N`` elements; may be ``x``). ``x`` is (rows, N) contiguous, or a table gathered by ``ids``
    (``n_rows`` int64 indices); ``residual`` is (res_period, N) contiguous; ``scale``/``shift`` are
    (n_rows // mod_group, N) contiguous. Returns ``out``."""
    if activation not in ACTIVATIONS:
        raise ValueError(f"activation must be one of {', '.join(ACTIVATIONS)}, got {activation!r}")
    n_cols = x.shape[-1]
    for name, t in (("x", x), ("out", out), ("residual", residual), ("scale", scale), ("shift", shift)):
        if t is not None and not t.is_contiguous():
            raise ValueError(f"{name} must be contiguous (call .contiguous() first)")
    if out.numel() != n_rows * n_cols:
        raise ValueError(f"out has {out.numel()} elements, expected {n_rows} x {n_cols}")
    pre_bias, weight, bias = (_vec(pre_bias, n_cols, "pre_bias"), _vec(weight, n_cols, "weight"),
                              _vec(bias, n_cols, "bias"))
    cfg = config or pick(CONFIGS, x.device if x.is_cuda else None)
    if n_rows == 0 or n_cols == 0:
        return out
    bn = triton.next_power_of_2(n_cols)
    one_tile = bn <= cfg["MAX_N"]
    if one_tile:
        rows_per = max(1, min(cfg["TILE"] // bn, triton.next_power_of_2(n_rows)))
        warps = cfg["num_warps"] if bn * rows_per <= cfg["TILE"] else min(16, max(cfg["num_warps"], bn // 512))
    else:
        rows_per, bn, warps = 1, cfg["BLOCK"], cfg["num_warps"]
    dummy = x
    _fused_norm_kernel[(triton.cdiv(n_rows, rows_per),)](
        x, ids if ids is not None else dummy, residual if residual is not None else dummy,
        pre_bias if pre_bias is not None else dummy, weight if weight is not None else dummy,
        bias if bias is not None else dummy, scale if scale is not None else dummy,
        shift if shift is not None else dummy, out,
        n_rows, n_cols, res_period or n_rows, mod_group, eps,
        GATHER=ids is not None, HAS_RES=residual is not None, HAS_PRE_BIAS=pre_bias is not None,
        HAS_W=weight is not None, HAS_B=bias is not None, HAS_MOD=scale is not None,
        ACT=ACTIVATIONS[activation], ROWS=rows_per, BLOCK_N=bn, ONE_TILE=one_tile, num_warps=warps)
    return out


#: signature of the kernel's non-constexpr arguments, for the op modules' TRITON_KERNELS
SIGNATURE = {"x_ptr": "*fp32", "ids_ptr": "*i64", "res_ptr": "*fp32", "pb_ptr": "*fp32", "w_ptr": "*fp32",
             "b_ptr": "*fp32", "sc_ptr": "*fp32", "sh_ptr": "*fp32", "y_ptr": "*fp32", "n_rows": "i64",
             "n_cols": "i32", "res_period": "i64", "mod_group": "i64", "eps": "fp32"}
#: constexprs of a plain layer norm (ONE_TILE path); op modules override the features they use
BASE_CONSTEXPRS = {"GATHER": False, "HAS_RES": False, "HAS_PRE_BIAS": False, "HAS_W": True, "HAS_B": True,
                   "HAS_MOD": False, "ACT": 0, "ROWS": 1, "BLOCK_N": 4096, "ONE_TILE": True}
