"""Per-channel affine + activation + scale + residual epilogue, one read and one write::

    y = act(x * weight[c] + bias[c]) * scale + residual        act: none / relu / gelu (erf) / silu

``c`` is the channel of each element: the last dimension (``channel_dim=-1``: a linear layer's output
(..., C)) or dimension 1 (``channel_dim=1``: a convolution's output (B, C, *spatial)). ``weight``,
``bias`` (C,) and ``residual`` (like ``x``) may each be None; ``scale`` is a Python float.
Float32 in, fp32 math, float32 out. ``bias_act_`` works in place on ``out`` -- the intended use is the
epilogue of a cuBLAS/cuDNN GEMM or convolution run without bias: GEMM + this op move the output once
more, where eager PyTorch moves it once per op (bias, BatchNorm, activation, scale, residual add).
Inference BatchNorm is ``weight = gamma / sqrt(var + eps)``, ``bias = beta - mean * weight``.

Backward (``bias_act_backward_launch``, CUDA, fp32/bf16/fp16): one kernel reads ``x`` and ``dy`` once, recomputes
``z = x * weight[c] + bias[c]`` and writes ``dx = dz * weight[c]`` with ``dz = dy * scale * act'(z)``; each
program walks a strip of tiles along the channel's reduction axis (rows for ``channel_dim=-1``, spatial columns
for ``channel_dim=1``) and keeps its share of ``dweight = sum dz * x`` and ``dbias = sum dz`` in fp32 registers,
written once and summed after. ``dresidual`` is ``dy`` itself. The reference's VJP elsewhere.
"""

from __future__ import annotations

import torch

from .._triton import tl, triton
from ..arch import check_table, pick
from ..kernel_specs import TritonKernel
from ..registry import call, on_kernels, zoo_custom_op
from ._activation_backward import fused_act_grad
from ._fused_norm import ACTIVATIONS, _act, activate

__all__ = ["CONFIGS", "bias_act", "bias_act_", "bias_act_backward_launch", "bias_act_launch", "bias_act_ref"]

#: BLOCK: elements per tile, num_warps; PROGRAMS_PER_SM: the backward's grid (programs per SM, in all)
CONFIGS = {
    "sm80": {"BLOCK": 4096, "num_warps": 8, "PROGRAMS_PER_SM": 4},
    "sm86": {"BLOCK": 2048, "num_warps": 8, "PROGRAMS_PER_SM": 4},
    "sm89": {"BLOCK": 2048, "num_warps": 8, "PROGRAMS_PER_SM": 4},
    "sm90": {"BLOCK": 8192, "num_warps": 16, "PROGRAMS_PER_SM": 4},
}
check_table(CONFIGS, "bias_act")


def _param_shape(x: torch.Tensor, channel_dim: int) -> list[int]:
    shape = [1] * x.dim()
    shape[channel_dim] = x.shape[channel_dim]
    return shape


def bias_act_ref(x: torch.Tensor, weight: torch.Tensor | None = None, bias: torch.Tensor | None = None,
                 residual: torch.Tensor | None = None, scale: float = 1.0, activation: str = "none",
                 channel_dim: int = -1) -> torch.Tensor:
    """PyTorch reference."""
    shape = _param_shape(x, channel_dim)
    y = x
    if weight is not None:
        y = y * weight.view(shape)
    if bias is not None:
        y = y + bias.view(shape)
    y = activate(y, activation)
    if scale != 1.0:
        y = y * scale
    if residual is not None:
        y = y + residual
    return y


@triton.jit
def _bias_act_kernel(x_ptr, w_ptr, b_ptr, r_ptr, y_ptr, n_rows, n_cols, n_channels, scale,
                     HAS_W: tl.constexpr, HAS_B: tl.constexpr, HAS_RES: tl.constexpr, CH_LAST: tl.constexpr,
                     ACT: tl.constexpr, HAS_SCALE: tl.constexpr, BM: tl.constexpr, BN: tl.constexpr):
    rows = tl.program_id(0).to(tl.int64) * BM + tl.arange(0, BM)
    cols = tl.program_id(1) * BN + tl.arange(0, BN)
    rmask = rows < n_rows
    cmask = cols < n_cols
    mask = rmask[:, None] & cmask[None, :]
    offs = rows[:, None] * n_cols + cols[None, :]
    y = tl.load(x_ptr + offs, mask=mask, other=0.0).to(tl.float32)
    if CH_LAST:
        if HAS_W:
            y = y * tl.load(w_ptr + cols, mask=cmask, other=0.0).to(tl.float32)[None, :]
        if HAS_B:
            y = y + tl.load(b_ptr + cols, mask=cmask, other=0.0).to(tl.float32)[None, :]
    else:
        ch = rows % n_channels
        if HAS_W:
            y = y * tl.load(w_ptr + ch, mask=rmask, other=0.0).to(tl.float32)[:, None]
        if HAS_B:
            y = y + tl.load(b_ptr + ch, mask=rmask, other=0.0).to(tl.float32)[:, None]
    y = _act(y, ACT)
    if HAS_SCALE:
        y = y * scale
    if HAS_RES:
        y = y + tl.load(r_ptr + offs, mask=mask, other=0.0).to(tl.float32)
    tl.store(y_ptr + offs, y.to(y_ptr.dtype.element_ty), mask=mask)


def _vec(t: torch.Tensor | None, n: int, what: str) -> torch.Tensor | None:
    if t is None:
        return None
    if t.numel() != n:
        raise ValueError(f"{what} must have {n} elements (one per channel), got shape {tuple(t.shape)}")
    return t.contiguous().view(n)


def bias_act_launch(x: torch.Tensor, weight: torch.Tensor | None = None, bias: torch.Tensor | None = None,
                    residual: torch.Tensor | None = None, scale: float = 1.0, activation: str = "none",
                    channel_dim: int = -1, out: torch.Tensor | None = None,
                    config: dict | None = None) -> torch.Tensor:
    """Run the Triton kernel; writes ``out`` (new if None; may be ``x``, which must then be contiguous)."""
    if activation not in ACTIVATIONS:
        raise ValueError(f"activation must be one of {', '.join(ACTIVATIONS)}, got {activation!r}")
    if channel_dim not in (-1, 1) or x.dim() < (1 if channel_dim == -1 else 2):
        raise ValueError(f"channel_dim must be -1 (x (..., C)) or 1 (x (B, C, ...)), got {channel_dim} for "
                         f"x of shape {tuple(x.shape)}")
    if residual is not None and residual.shape != x.shape:
        raise ValueError(f"residual must have x's shape {tuple(x.shape)}, got {tuple(residual.shape)}")
    if out is None:
        x = x.contiguous()
        out = torch.empty_like(x)
    elif out.shape != x.shape or not out.is_contiguous() or not x.is_contiguous():
        raise ValueError("out must be contiguous and have x's shape (x contiguous too)")
    c = x.shape[channel_dim]
    weight, bias = _vec(weight, c, "weight"), _vec(bias, c, "bias")
    residual = residual.contiguous() if residual is not None else None
    if x.numel() == 0:
        return out
    if channel_dim == -1:
        n_rows, n_cols = x.numel() // c, c
    else:
        n_rows = x.shape[0] * c
        n_cols = x.numel() // n_rows
    cfg = config or pick(CONFIGS, x.device if x.is_cuda else None)
    bn = min(triton.next_power_of_2(n_cols), cfg["BLOCK"])
    bm = max(1, cfg["BLOCK"] // bn)
    grid = (triton.cdiv(n_rows, bm), triton.cdiv(n_cols, bn))
    _bias_act_kernel[grid](x, weight if weight is not None else x, bias if bias is not None else x,
                           residual if residual is not None else x, out, n_rows, n_cols, c, float(scale),
                           HAS_W=weight is not None, HAS_B=bias is not None, HAS_RES=residual is not None,
                           CH_LAST=channel_dim == -1, ACT=ACTIVATIONS[activation], HAS_SCALE=scale != 1.0,
                           BM=bm, BN=bn, num_warps=cfg["num_warps"])
    return out


@triton.jit
def _bias_act_bwd_tile(x_ptr, w_ptr, b_ptr, dy_ptr, dx_ptr, rows, cols, n_rows, n_cols, n_channels, scale,
                       HAS_W: tl.constexpr, HAS_B: tl.constexpr, CH_LAST: tl.constexpr, ACT: tl.constexpr,
                       HAS_SCALE: tl.constexpr, STORE_DX: tl.constexpr):
    """One (rows, cols) tile: writes ``dx`` (with ``STORE_DX``), returns ``(dz * x, dz)`` (0 off the tile)."""
    rmask = rows < n_rows
    cmask = cols < n_cols
    mask = rmask[:, None] & cmask[None, :]
    offs = rows[:, None] * n_cols + cols[None, :]
    x = tl.load(x_ptr + offs, mask=mask, other=0.0).to(tl.float32)
    dz = tl.load(dy_ptr + offs, mask=mask, other=0.0).to(tl.float32)
    if HAS_SCALE:
        dz = dz * scale
    if CH_LAST:
        w = tl.load(w_ptr + cols, mask=cmask, other=0.0).to(tl.float32)[None, :]
        b = tl.load(b_ptr + cols, mask=cmask, other=0.0).to(tl.float32)[None, :]
    else:
        ch = rows % n_channels
        w = tl.load(w_ptr + ch, mask=rmask, other=0.0).to(tl.float32)[:, None]
        b = tl.load(b_ptr + ch, mask=rmask, other=0.0).to(tl.float32)[:, None]
    if ACT != 0:
        z = x
        if HAS_W:
            z = z * w
        if HAS_B:
            z = z + b
        dz = dz * fused_act_grad(z, ACT)
    if STORE_DX:
        if HAS_W:
            dx = dz * w
        else:
            dx = dz
        tl.store(dx_ptr + offs, dx.to(dx_ptr.dtype.element_ty), mask=mask)
    return dz * x, dz


@triton.jit
def _bias_act_bwd_kernel(x_ptr, w_ptr, b_ptr, dy_ptr, dx_ptr, dwp_ptr, dbp_ptr, n_rows, n_cols, n_channels, scale,
                         HAS_W: tl.constexpr, HAS_B: tl.constexpr, CH_LAST: tl.constexpr, ACT: tl.constexpr,
                         HAS_SCALE: tl.constexpr, STORE_DX: tl.constexpr, BM: tl.constexpr, BN: tl.constexpr):
    zero64 = tl.program_id(0).to(tl.int64) * 0  # 64-bit offsets (loop variables are plain ints in the interpreter)
    acc_w = tl.zeros([BM, BN], tl.float32)
    acc_b = tl.zeros([BM, BN], tl.float32)
    if CH_LAST:  # channels are columns: this program's column tile, every num_programs(0)-th row tile
        cols = tl.program_id(1) * BN + tl.arange(0, BN)
        for rt in range(tl.program_id(0), tl.cdiv(n_rows, BM), tl.num_programs(0)):
            rows = (zero64 + rt) * BM + tl.arange(0, BM)
            gw, gb = _bias_act_bwd_tile(x_ptr, w_ptr, b_ptr, dy_ptr, dx_ptr, rows, cols, n_rows, n_cols, n_channels,
                                        scale, HAS_W, HAS_B, CH_LAST, ACT, HAS_SCALE, STORE_DX)
            acc_w += gw
            acc_b += gb
        part = tl.program_id(0).to(tl.int64) * n_cols + cols  # (programs, n_cols) partials
        tl.store(dwp_ptr + part, tl.sum(acc_w, 0), mask=cols < n_cols)
        tl.store(dbp_ptr + part, tl.sum(acc_b, 0), mask=cols < n_cols)
    else:  # a channel per row: this program's row tile, every num_programs(1)-th column tile
        rows = tl.program_id(0).to(tl.int64) * BM + tl.arange(0, BM)
        for ct in range(tl.program_id(1), tl.cdiv(n_cols, BN), tl.num_programs(1)):
            cols = ct * BN + tl.arange(0, BN)
            gw, gb = _bias_act_bwd_tile(x_ptr, w_ptr, b_ptr, dy_ptr, dx_ptr, rows, cols, n_rows, n_cols, n_channels,
                                        scale, HAS_W, HAS_B, CH_LAST, ACT, HAS_SCALE, STORE_DX)
            acc_w += gw
            acc_b += gb
        part = rows * tl.num_programs(1) + tl.program_id(1)  # (n_rows, programs) partials
        tl.store(dwp_ptr + part, tl.sum(acc_w, 1), mask=rows < n_rows)
        tl.store(dbp_ptr + part, tl.sum(acc_b, 1), mask=rows < n_rows)


def bias_act_backward_launch(x: torch.Tensor, weight: torch.Tensor | None, bias: torch.Tensor | None,
                             dy: torch.Tensor, scale: float = 1.0, activation: str = "none", channel_dim: int = -1,
                             *, dx: bool = True, config: dict | None = None, programs: int | None = None
                             ) -> tuple[torch.Tensor | None, torch.Tensor | None, torch.Tensor | None]:
    """``(dx, dweight, dbias)`` of :func:`bias_act_ref` at ``x`` for the output gradient ``dy`` (``x``'s shape):
    ``dx`` contiguous in ``x``'s dtype (None with ``dx=False``), ``dweight``/``dbias`` in their parameter's dtype
    (summed in fp32; None where the parameter is None). ``programs``: programs along the reduction axis (default:
    ``PROGRAMS_PER_SM`` per SM over the other axis' tiles)."""
    _check_args(activation, channel_dim)
    if dy.shape != x.shape:
        raise ValueError(f"dy must have x's shape {tuple(x.shape)}, got {tuple(dy.shape)}")
    c = x.shape[channel_dim]
    wv, bv = _vec(weight, c, "weight"), _vec(bias, c, "bias")
    xc, dyc = x.contiguous(), dy.contiguous()
    gx = torch.empty_like(xc) if dx else None
    n_rows, n_cols = (x.numel() // c, c) if channel_dim == -1 else (x.shape[0] * c, x.numel() // max(x.shape[0] * c, 1))
    cfg = config or pick(CONFIGS, x.device if x.is_cuda else None)
    bn = min(triton.next_power_of_2(max(n_cols, 1)), cfg["BLOCK"])
    bm = max(1, cfg["BLOCK"] // bn)
    tiles = (triton.cdiv(n_rows, bm), triton.cdiv(n_cols, bn))
    if programs is None:
        sms = torch.cuda.get_device_properties(x.device).multi_processor_count if x.is_cuda else 2
        programs = sms * cfg["PROGRAMS_PER_SM"] // max(1, tiles[1] if channel_dim == -1 else tiles[0])
    red = 0 if channel_dim == -1 else 1  # the grid axis that walks the reduction
    grid = list(tiles)
    grid[red] = max(1, min(programs, tiles[red]))
    shape = (grid[0], n_cols) if channel_dim == -1 else (n_rows, grid[1])
    alloc = torch.empty if x.numel() else torch.zeros  # every program writes its whole share of the partials
    dwp = alloc(shape, dtype=torch.float32, device=x.device)
    dbp = alloc(shape, dtype=torch.float32, device=x.device)
    if x.numel():
        _bias_act_bwd_kernel[tuple(grid)](
            xc, wv if wv is not None else xc, bv if bv is not None else xc, dyc, gx if dx else xc, dwp, dbp,
            n_rows, n_cols, c, float(scale), HAS_W=wv is not None, HAS_B=bv is not None, CH_LAST=channel_dim == -1,
            ACT=ACTIVATIONS[activation], HAS_SCALE=scale != 1.0, STORE_DX=dx, BM=bm, BN=bn,
            num_warps=cfg["num_warps"])

    def total(part: torch.Tensor, like: torch.Tensor | None) -> torch.Tensor | None:
        if like is None:
            return None
        sums = part.sum(0) if channel_dim == -1 else part.view(x.shape[0], c, -1).sum((0, 2))
        return sums.view(like.shape).to(like.dtype)

    return gx, total(dwp, weight), total(dbp, bias)


def _bias_act_backward(args: list, grads: list, needs: tuple) -> tuple | None:
    """The backward kernel where it applies (see ``registry.kernel_backward``), else None."""
    (x, weight, bias, residual, scale, activation, channel_dim), (dy,) = args, grads
    if dy is None or not on_kernels(x, dy, *[t for t in (weight, bias, residual) if t is not None]):
        return None
    dres = dy.to(residual.dtype) if needs[3] else None
    if not any(needs[:3]):
        return None, None, None, dres, None, None, None
    gx, dw, db = bias_act_backward_launch(x, weight, bias, dy, scale, activation, channel_dim, dx=needs[0])
    return gx, dw if needs[1] else None, db if needs[2] else None, dres, None, None, None


@zoo_custom_op("cudal1::bias_act", mutates_args=(), ref=bias_act_ref, fast_backward=_bias_act_backward)
def _bias_act_op(x: torch.Tensor, weight: torch.Tensor | None, bias: torch.Tensor | None,
                 residual: torch.Tensor | None, scale: float, activation: str, channel_dim: int) -> torch.Tensor:
    if x.is_cuda:
        return bias_act_launch(x, weight, bias, residual, scale, activation, channel_dim)
    return bias_act_ref(x, weight, bias, residual, scale, activation, channel_dim).contiguous()


@_bias_act_op.register_fake
def _(x, weight, bias, residual, scale, activation, channel_dim):
    return torch.empty_like(x, memory_format=torch.contiguous_format)


@zoo_custom_op("cudal1::bias_act_", mutates_args=("out",), differentiable=False)
def _bias_act_inplace_op(out: torch.Tensor, weight: torch.Tensor | None, bias: torch.Tensor | None,
                         residual: torch.Tensor | None, scale: float, activation: str, channel_dim: int) -> None:
    if out.is_cuda:
        bias_act_launch(out, weight, bias, residual, scale, activation, channel_dim, out=out)
    else:
        out.copy_(bias_act_ref(out, weight, bias, residual, scale, activation, channel_dim))


@_bias_act_inplace_op.register_fake
def _(out, weight, bias, residual, scale, activation, channel_dim):
    return None


def _check_args(activation: str, channel_dim: int) -> None:
    if activation not in ACTIVATIONS:
        raise ValueError(f"activation must be one of {', '.join(ACTIVATIONS)}, got {activation!r}")
    if channel_dim not in (-1, 1):
        raise ValueError(f"channel_dim must be -1 or 1, got {channel_dim}")


def bias_act(x: torch.Tensor, weight: torch.Tensor | None = None, bias: torch.Tensor | None = None,
             residual: torch.Tensor | None = None, *, scale: float = 1.0, activation: str = "none",
             channel_dim: int = -1) -> torch.Tensor:
    """``act(x * weight[c] + bias[c]) * scale + residual`` of float32 ``x`` ((..., C) with ``channel_dim=-1``,
    (B, C, ...) with ``channel_dim=1``); ``weight``, ``bias`` (C,), ``residual`` like ``x``, each optional.
    New contiguous output. Triton on CUDA, the reference on CPU; ``torch.ops.cudal1.bias_act``."""
    _check_args(activation, channel_dim)
    return call("bias_act", x, weight, bias, residual, float(scale), activation, channel_dim)


def bias_act_(out: torch.Tensor, weight: torch.Tensor | None = None, bias: torch.Tensor | None = None,
              residual: torch.Tensor | None = None, *, scale: float = 1.0, activation: str = "none",
              channel_dim: int = -1) -> torch.Tensor:
    """In place: ``out = act(out * weight[c] + bias[c]) * scale + residual`` (see :func:`bias_act`);
    ``out`` contiguous float32, e.g. a GEMM or convolution output; returns ``out``.
    ``torch.ops.cudal1.bias_act_``."""
    _check_args(activation, channel_dim)
    if not out.is_contiguous():
        raise ValueError("bias_act_ writes in place: out must be contiguous")
    call("bias_act_", out, weight, bias, residual, float(scale), activation, channel_dim)
    return out


_SIG = {"x_ptr": "*fp32", "w_ptr": "*fp32", "b_ptr": "*fp32", "r_ptr": "*fp32", "y_ptr": "*fp32", "n_rows": "i64",
        "n_cols": "i32", "n_channels": "i32", "scale": "fp32"}
_BWD_SIG = {"x_ptr": "*bf16", "w_ptr": "*bf16", "b_ptr": "*bf16", "dy_ptr": "*bf16", "dx_ptr": "*bf16",
            "dwp_ptr": "*fp32", "dbp_ptr": "*fp32", "n_rows": "i64", "n_cols": "i32", "n_channels": "i32",
            "scale": "fp32"}
_BASE = {"HAS_W": False, "HAS_B": True, "HAS_RES": False, "CH_LAST": True, "ACT": 0, "HAS_SCALE": False,
         "BM": 2, "BN": 4096}
_BWD_BASE = {"HAS_W": True, "HAS_B": True, "CH_LAST": True, "ACT": 0, "HAS_SCALE": False, "STORE_DX": True,
             "BM": 2, "BN": 4096}
#: for ``python -m cudal1.kernelzoo.compile_targets``: variants the released solutions launch (and backward kernels)
TRITON_KERNELS = [
    TritonKernel("_bias_act_kernel", _SIG, constexprs=dict(_BASE, ACT=1)),
    TritonKernel("_bias_act_kernel", _SIG, constexprs=dict(_BASE, ACT=2)),
    TritonKernel("_bias_act_kernel", _SIG, constexprs=dict(_BASE, HAS_RES=True, HAS_SCALE=True)),
    TritonKernel("_bias_act_kernel", _SIG, constexprs=dict(_BASE, HAS_W=True, CH_LAST=False, ACT=1, BM=1)),
    TritonKernel("_bias_act_bwd_kernel", _BWD_SIG, constexprs=dict(_BWD_BASE, ACT=2)),
    TritonKernel("_bias_act_bwd_kernel", _BWD_SIG,
                 constexprs=dict(_BWD_BASE, CH_LAST=False, ACT=3, HAS_SCALE=True, BM=1)),
]
