"""Softplus: ``y = x if beta * x > threshold else log(1 + exp(beta * x)) / beta`` elementwise, as
``torch.nn.functional.softplus``.

Shapes: any; dtypes float32/float16/bfloat16; ``beta``, ``threshold`` Python floats; output has ``x``'s
shape and dtype. Memory-bound: one read and one write per element (8 bytes per fp32 element). Computed in
fp32 in the overflow-free form ``max(z, 0) + log1p(exp(-|z|))`` (``z = beta * x``), with an exact-rounding
``log1p`` (``log(w) * u / (w - 1)``, ``w = 1 + u``) so tiny outputs keep their relative precision.
"""

from __future__ import annotations

import torch

from .._triton import tl, triton
from ..kernel_specs import TritonKernel
from ..registry import call, zoo_custom_op
from ._activation_backward import fast_backward, kernels
from ._elementwise_scalar import CONFIGS, launch_unary_scalars, tuned_unary_scalars

__all__ = ["CONFIGS", "softplus", "softplus_launch", "softplus_ref"]


def softplus_ref(x: torch.Tensor, beta: float = 1.0, threshold: float = 20.0) -> torch.Tensor:
    """PyTorch reference."""
    return torch.nn.functional.softplus(x, beta=beta, threshold=threshold)


@triton.jit
def _softplus_kernel(x_ptr, y_ptr, n, beta, threshold, BLOCK: tl.constexpr):
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask).to(tl.float32)
    z = x * beta
    u = tl.exp(-tl.abs(z))  # in (0, 1]
    w = 1.0 + u
    log1p_u = tl.where(w == 1.0, u, tl.log(w) * (u / (w - 1.0)))
    sp = (tl.where(z > 0.0, z, 0.0) + log1p_u) / beta
    y = tl.where(z > threshold, x, sp)  # NaN: not > threshold, sp is NaN
    tl.store(y_ptr + offs, y.to(y_ptr.dtype.element_ty), mask=mask)


def softplus_launch(x: torch.Tensor, beta: float = 1.0, threshold: float = 20.0,
                    config: dict | None = None) -> torch.Tensor:
    """Run the Triton kernel on ``x`` (any shape; the interpreter included)."""
    return launch_unary_scalars(_softplus_kernel, x, (beta, threshold), config)


@zoo_custom_op("cudal1::softplus", mutates_args=(), ref=softplus_ref, fast_backward=fast_backward("softplus"))
def _softplus_op(x: torch.Tensor, beta: float, threshold: float) -> torch.Tensor:
    return (tuned_unary_scalars("softplus", _softplus_kernel, x, (beta, threshold)) if x.is_cuda
            else softplus_ref(x, beta, threshold))


@_softplus_op.register_fake
def _(x: torch.Tensor, beta: float, threshold: float) -> torch.Tensor:
    return torch.empty_like(x, memory_format=torch.contiguous_format)


def softplus(x: torch.Tensor, beta: float = 1.0, threshold: float = 20.0) -> torch.Tensor:
    """Softplus of ``x`` (any shape, float); same shape and dtype (Triton on CUDA, the reference on CPU);
    ``torch.ops.cudal1.softplus``."""
    return call("softplus", x, float(beta), float(threshold))


#: for ``python -m cudal1.kernelzoo.compile_targets``
TRITON_KERNELS = [TritonKernel("_softplus_kernel", {"x_ptr": "*fp32", "y_ptr": "*fp32", "n": "i64", "beta": "fp32",
                                                    "threshold": "fp32"})] + kernels("softplus")
