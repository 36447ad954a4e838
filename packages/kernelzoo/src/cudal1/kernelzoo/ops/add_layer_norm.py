"""Fused (bias +) residual add + layer norm (+ activation) over the last dimension::

    h = x (+ pre_bias) (+ residual)
    y = act(layer_norm(h, weight, bias, eps))        act: none / relu / gelu (erf) / silu

Shapes: ``x`` (..., N); ``residual`` like ``x`` (or None); ``pre_bias``, ``weight``, ``bias`` (N,) or None;
float32, statistics in fp32; output like ``x``. Memory traffic: one read of ``x`` and ``residual``, one write
(rows of up to 16384 columns stay in registers), against three or four passes in eager PyTorch (add, layer
norm, activation). ``add_layer_norm_`` writes the result over ``out`` (the pre-norm input, e.g. a GEMM
output: the linear layer's bias goes in ``pre_bias``), so a linear + residual + norm sub-layer costs the
GEMM plus one read and one write.

Backward (CUDA, fp32/bf16/fp16, rows up to the kernel's MAX_N): the shared row-norm backward kernel
(``_norm_backward``) recomputes ``h`` and the statistics from ``x``, ``pre_bias`` and ``residual``, and the
activation's derivative at the affine output, and writes ``dh`` once (``dx = dresidual = dh``) with ``dweight``,
``dbias``, ``dpre_bias`` as per-program column sums; the reference's VJP elsewhere.
"""

from __future__ import annotations

import torch

from ..kernel_specs import TritonKernel
from ..registry import call, zoo_custom_op
from ._fused_norm import (
    ACTIVATIONS,
    BASE_CONSTEXPRS,
    CONFIGS,
    SIGNATURE,
    _fused_norm_kernel,  # noqa: F401  (named in TRITON_KERNELS)
    activate,
    fused_norm_launch,
)
from ._norm_backward import CONFIGS as NORM_BWD_CONFIGS  # noqa: F401  (read by compile_targets)
from ._norm_backward import backward_kernel, fused_norm_backward_launch, takes

__all__ = ["ACTIVATIONS", "CONFIGS", "add_layer_norm", "add_layer_norm_", "add_layer_norm_launch", "add_layer_norm_ref"]


def add_layer_norm_ref(x: torch.Tensor, residual: torch.Tensor | None = None, weight: torch.Tensor | None = None,
                       bias: torch.Tensor | None = None, pre_bias: torch.Tensor | None = None, eps: float = 1e-5,
                       activation: str = "none") -> torch.Tensor:
    """PyTorch reference."""
    h = x
    if pre_bias is not None:
        h = h + pre_bias
    if residual is not None:
        h = h + residual
    return activate(torch.nn.functional.layer_norm(h, (x.shape[-1],), weight, bias, eps), activation)


def add_layer_norm_launch(x: torch.Tensor, residual: torch.Tensor | None = None, weight: torch.Tensor | None = None,
                          bias: torch.Tensor | None = None, pre_bias: torch.Tensor | None = None, eps: float = 1e-5,
                          activation: str = "none", out: torch.Tensor | None = None,
                          config: dict | None = None) -> torch.Tensor:
    """Run the Triton kernel; writes ``out`` (new if None; may be ``x`` itself, which must then be contiguous)."""
    if residual is not None and residual.shape != x.shape:
        raise ValueError(f"residual must have x's shape {tuple(x.shape)}, got {tuple(residual.shape)}")
    if out is None:
        x = x.contiguous()
        out = torch.empty_like(x)
    elif out.shape != x.shape:
        raise ValueError(f"out must have x's shape {tuple(x.shape)}, got {tuple(out.shape)}")
    n = x.shape[-1]
    return fused_norm_launch(x, out, x.numel() // n if n else 0,
                             residual=residual.contiguous() if residual is not None else None,
                             pre_bias=pre_bias, weight=weight, bias=bias, eps=eps, activation=activation,
                             config=config)


def _add_layer_norm_backward(args: list, grads: list, needs: tuple) -> tuple | None:
    """The backward kernel where it applies (see ``registry.kernel_backward``), else None."""
    (x, residual, weight, bias, pre_bias, eps, activation), (dy,) = args, grads
    if dy is None or not takes(x, weight, residual, bias, pre_bias):
        return None
    dh, dw, db, dpb = fused_norm_backward_launch(x, dy, x.numel() // x.shape[-1], eps, residual=residual,
                                                 pre_bias=pre_bias, weight=weight, bias=bias, activation=activation)
    return (dh if needs[0] else None, dh.to(residual.dtype) if needs[1] else None, dw if needs[2] else None,
            db if needs[3] else None, dpb if needs[4] else None, None, None)


@zoo_custom_op("cudal1::add_layer_norm", mutates_args=(), ref=add_layer_norm_ref,
               fast_backward=_add_layer_norm_backward)
def _add_layer_norm_op(x: torch.Tensor, residual: torch.Tensor | None, weight: torch.Tensor | None,
                       bias: torch.Tensor | None, pre_bias: torch.Tensor | None, eps: float,
                       activation: str) -> torch.Tensor:
    if x.is_cuda:
        return add_layer_norm_launch(x, residual, weight, bias, pre_bias, eps, activation)
    return add_layer_norm_ref(x, residual, weight, bias, pre_bias, eps, activation).contiguous()


@_add_layer_norm_op.register_fake
def _(x, residual, weight, bias, pre_bias, eps, activation):
    return torch.empty_like(x, memory_format=torch.contiguous_format)


@zoo_custom_op("cudal1::add_layer_norm_", mutates_args=("out",), differentiable=False)
def _add_layer_norm_inplace_op(out: torch.Tensor, residual: torch.Tensor | None, weight: torch.Tensor | None,
                               bias: torch.Tensor | None, pre_bias: torch.Tensor | None, eps: float,
                               activation: str) -> None:
    if out.is_cuda:
        add_layer_norm_launch(out, residual, weight, bias, pre_bias, eps, activation, out=out)
    else:
        out.copy_(add_layer_norm_ref(out, residual, weight, bias, pre_bias, eps, activation))


@_add_layer_norm_inplace_op.register_fake
def _(out, residual, weight, bias, pre_bias, eps, activation):
    return None


def add_layer_norm(x: torch.Tensor, residual: torch.Tensor | None = None, weight: torch.Tensor | None = None,
                   bias: torch.Tensor | None = None, *, pre_bias: torch.Tensor | None = None, eps: float = 1e-5,
                   activation: str = "none") -> torch.Tensor:
    """``act(layer_norm(x + pre_bias + residual) * weight + bias)`` of float32 ``x`` (..., N) (each of
    ``residual`` (like ``x``), ``pre_bias``, ``weight``, ``bias`` (N,) may be None); new contiguous output
    like ``x``. Triton on CUDA, the reference on CPU; ``torch.ops.cudal1.add_layer_norm``."""
    if activation not in ACTIVATIONS:
        raise ValueError(f"activation must be one of {', '.join(ACTIVATIONS)}, got {activation!r}")
    return call("add_layer_norm", x, residual, weight, bias, pre_bias, eps, activation)


def add_layer_norm_(out: torch.Tensor, residual: torch.Tensor | None = None, weight: torch.Tensor | None = None,
                    bias: torch.Tensor | None = None, *, pre_bias: torch.Tensor | None = None, eps: float = 1e-5,
                    activation: str = "none") -> torch.Tensor:
    """In place: ``out = act(layer_norm(out + pre_bias + residual) * weight + bias)``; ``out`` float32
    (..., N), contiguous (e.g. a GEMM output); returns ``out``. ``torch.ops.cudal1.add_layer_norm_``."""
    if activation not in ACTIVATIONS:
        raise ValueError(f"activation must be one of {', '.join(ACTIVATIONS)}, got {activation!r}")
    if not out.is_contiguous():
        raise ValueError("add_layer_norm_ writes in place: out must be contiguous")
    call("add_layer_norm_", out, residual, weight, bias, pre_bias, eps, activation)
    return out


#: for ``python -m cudal1.kernelzoo.compile_targets``: the variants the released solutions launch
TRITON_KERNELS = [
    TritonKernel("_fused_norm_kernel", SIGNATURE, constexprs=dict(BASE_CONSTEXPRS, HAS_RES=True)),
    TritonKernel("_fused_norm_kernel", SIGNATURE, constexprs=dict(BASE_CONSTEXPRS, HAS_PRE_BIAS=True, ACT=3)),
    TritonKernel("_fused_norm_kernel", SIGNATURE,
                 constexprs=dict(BASE_CONSTEXPRS, HAS_RES=True, HAS_PRE_BIAS=True, ROWS=4, BLOCK_N=1024)),
    TritonKernel("_fused_norm_kernel", SIGNATURE,
                 constexprs=dict(BASE_CONSTEXPRS, HAS_RES=True, ONE_TILE=False, ACT=2)),
    backward_kernel(rms=False, bias=True, residual=True, pre_bias=True, act=2),
]
