"""Backward kernel of the zoo's activations, written once: ``dx = dy * f'(x)`` elementwise, one read of ``x``
and ``dy`` and one write of ``dx`` (the reference's VJP recomputes the activation in PyTorch, several passes).
The derivatives follow PyTorch's own backward formulas, kinks included (relu and leaky_relu at 0 take the
``x <= 0`` side, hardswish ``(2 * x + 3) / 6`` on the open ``(-3, 3)``, 0 at -3 and 1 at 3, softplus 1 above its
threshold).

Shapes: any, ``x`` and ``dy`` one shape; fp32, bf16, fp16 (fp32 math, one rounding at the store); CUDA.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch

from .._triton import tl, triton
from ..arch import pick
from ..kernel_specs import TritonKernel
from ..registry import on_kernels
from ._elementwise import CONFIGS

__all__ = ["ACTIVATIONS", "activation_backward_launch", "derivative", "fast_backward", "fused_act_grad", "kernels"]

#: activation -> the kernel's ACT code
ACTIVATIONS = {"relu": 0, "gelu": 1, "silu": 2, "tanh": 3, "elu": 4, "hardswish": 5, "leaky_relu": 6, "softplus": 7}


@triton.jit
def derivative(x, a, b, ACT: tl.constexpr):
    """``act'(x)`` in fp32 for activation code ``ACT`` (:data:`ACTIVATIONS`); ``a``, ``b``: elu's alpha,
    leaky_relu's slope, softplus's beta and threshold (unused by the others). Kinks as PyTorch takes them."""
    if ACT == 0:  # relu
        d = tl.where(x > 0.0, 1.0, 0.0)
    elif ACT == 1:  # gelu, erf form: Phi(x) + x * phi(x)
        d = 0.5 * (1.0 + tl.erf(x * 0.7071067811865476)) + x * 0.3989422804014327 * tl.exp(-0.5 * x * x)
    elif ACT == 2:  # silu
        s = 1.0 / (1.0 + tl.exp(-x))
        d = s * (1.0 + x * (1.0 - s))
    elif ACT == 3:  # tanh
        t = 2.0 / (1.0 + tl.exp(-2.0 * x)) - 1.0
        d = 1.0 - t * t
    elif ACT == 4:  # elu (a = alpha)
        d = tl.where(x > 0.0, 1.0, a * tl.exp(x))
    elif ACT == 5:  # hardswish
        d = tl.where(x <= -3.0, 0.0, tl.where(x < 3.0, x / 3.0 + 0.5, 1.0))
    elif ACT == 6:  # leaky_relu (a = negative slope)
        d = tl.where(x > 0.0, 1.0, a)
    else:  # softplus (a = beta, b = threshold)
        z = tl.exp(tl.minimum(x * a, b))
        d = tl.where(x * a > b, 1.0, z / (z + 1.0))
    return d


@triton.jit
def fused_act_grad(z, ACT: tl.constexpr):
    """``act'(z)`` for the fused ops' activation codes (``_fused_norm.ACTIVATIONS``: 1 relu, 2 gelu (erf), 3 silu;
    callers skip 0, none), used by the backward kernels of the fused norms and the bias epilogues."""
    return derivative(z, 0.0, 0.0, ACT - 1)


@triton.jit
def _act_bwd_kernel(x_ptr, dy_ptr, dx_ptr, n, a, b, ACT: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0.0).to(tl.float32)
    dy = tl.load(dy_ptr + offs, mask=mask, other=0.0).to(tl.float32)
    d = derivative(x, a, b, ACT)
    tl.store(dx_ptr + offs, (dy * d).to(dx_ptr.dtype.element_ty), mask=mask)


def activation_backward_launch(name: str, x: torch.Tensor, dy: torch.Tensor, a: float = 0.0, b: float = 0.0,
                               config: dict | None = None) -> torch.Tensor:
    """``dx`` (``x``'s shape and dtype, contiguous) of activation ``name`` (:data:`ACTIVATIONS`) at ``x`` for
    the output gradient ``dy``; ``a``, ``b``: elu's alpha, leaky_relu's slope, softplus's beta and threshold."""
    if name not in ACTIVATIONS:
        raise ValueError(f"no backward kernel for activation {name!r}; known: {', '.join(ACTIVATIONS)}")
    if dy.shape != x.shape:
        raise ValueError(f"dy must have x's shape {tuple(x.shape)}, got {tuple(dy.shape)}")
    cfg = config or pick(CONFIGS, x.device if x.is_cuda else None)
    xc, dyc = x.contiguous(), dy.contiguous()
    dx = torch.empty_like(xc)
    n = xc.numel()
    if n:
        _act_bwd_kernel[(triton.cdiv(n, cfg["BLOCK"]),)](xc, dyc, dx, n, float(a), float(b), ACT=ACTIVATIONS[name],
                                                         BLOCK=cfg["BLOCK"], num_warps=cfg["num_warps"])
    return dx


def fast_backward(name: str) -> Callable[[list, list, tuple], Any]:
    """The ``fast_backward=`` of activation ``name`` (``registry.kernel_backward``): the kernel on CUDA
    fp32/bf16/fp16, None (the reference's VJP) elsewhere. The op's positional arguments are ``x`` then its
    float parameters, in the kernel's ``a``, ``b`` order."""

    def backward(args: list, grads: list, needs: tuple) -> tuple | None:
        x, *scalars = args
        (dy,) = grads
        if dy is None or not on_kernels(x):
            return None
        return (activation_backward_launch(name, x, dy, *scalars), *(None for _ in scalars))

    return backward


def kernels(name: str) -> list[TritonKernel]:
    """The kernel as activation ``name``'s module declares it in ``TRITON_KERNELS``."""
    return [TritonKernel(_act_bwd_kernel.__name__, {"x_ptr": "*bf16", "dy_ptr": "*bf16", "dx_ptr": "*bf16", "n": "i64",
                                                    "a": "fp32", "b": "fp32"},
                         constexprs={"ACT": ACTIVATIONS[name]}, defined_in=__name__)]
