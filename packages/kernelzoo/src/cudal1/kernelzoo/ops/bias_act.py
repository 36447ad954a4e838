"""Per-channel affine + activation + scale + residual epilogue, one read and one write::

    y = act(x * weight[c] + bias[c]) * scale + residual        act: none / relu / gelu (erf) / silu

``c`` is the channel of each element: the last dimension (``channel_dim=-1``: a linear layer's output
(..., C)) or dimension 1 (``channel_dim=1``: a convolution's output (B, C, *spatial)). ``weight``,
``bias`` (C,) and ``residual`` (like ``x``) may each be None; ``scale`` is a Python float.
Float32 in, fp32 math, float32 out. ``bias_act_`` works in place on ``out`` -- the intended use is the
epilogue of a cuBLAS/cuDNN GEMM or convolution run without bias: GEMM + this op move the output once
more, where eager PyTorch moves it once per op (bias, BatchNorm, activation, scale, residual add).
Inference BatchNorm is ``weight = gamma / sqrt(var + eps)``, ``bias = beta - mean * weight``.
"""

from __future__ import annotations

import torch

from .._triton import tl, triton
from ..arch import check_table, pick
from ..kernel_specs import TritonKernel
from ..registry import call, zoo_custom_op
from ._fused_norm import ACTIVATIONS, _act, activate

__all__ = ["CONFIGS", "bias_act", "bias_act_", "bias_act_launch", "bias_act_ref"]

CONFIGS = {
    "sm80": {"BLOCK": 4096, "num_warps": 8},
    "sm86": {"BLOCK": 2048, "num_warps": 8},
    "sm89": {"BLOCK": 2048, "num_warps": 8},
    "sm90": {"BLOCK": 8192, "num_warps": 16},
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


@zoo_custom_op("cudal1::bias_act", mutates_args=(), ref=bias_act_ref)
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
_BASE = {"HAS_W": False, "HAS_B": True, "HAS_RES": False, "CH_LAST": True, "ACT": 0, "HAS_SCALE": False,
         "BM": 2, "BN": 4096}
#: for ``python -m cudal1.kernelzoo.compile_targets``: variants the released solutions launch
TRITON_KERNELS = [
    TritonKernel("_bias_act_kernel", _SIG, constexprs=dict(_BASE, ACT=1)),
    TritonKernel("_bias_act_kernel", _SIG, constexprs=dict(_BASE, ACT=2)),
    TritonKernel("_bias_act_kernel", _SIG, constexprs=dict(_BASE, HAS_RES=True, HAS_SCALE=True)),
    TritonKernel("_bias_act_kernel", _SIG, constexprs=dict(_BASE, HAS_W=True, CH_LAST=False, ACT=1, BM=1)),
]
