"""Leaky ReLU: ``y = x if x > 0 else negative_slope * x`` elementwise, as ``torch.nn.functional.leaky_relu``.

Shapes: any; dtypes float32/float16/bfloat16; ``negative_slope`` a Python float; output has ``x``'s shape
and dtype. Memory-bound: one read and one write per element (8 bytes per fp32 element); NaN propagates.
"""

from __future__ import annotations

import torch

from .._triton import tl, triton
from ..kernel_specs import TritonKernel
from ..registry import call, zoo_custom_op
from ._activation_backward import fast_backward, kernels
from ._elementwise_scalar import CONFIGS, launch_unary_scalars, tuned_unary_scalars

__all__ = ["CONFIGS", "leaky_relu", "leaky_relu_launch", "leaky_relu_ref"]


def leaky_relu_ref(x: torch.Tensor, negative_slope: float = 0.01) -> torch.Tensor:
    """PyTorch reference."""
    return torch.nn.functional.leaky_relu(x, negative_slope=negative_slope)


@triton.jit
def _leaky_relu_kernel(x_ptr, y_ptr, n, negative_slope, BLOCK: tl.constexpr):
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask).to(tl.float32)
    y = tl.where(x > 0.0, x, x * negative_slope)
    tl.store(y_ptr + offs, y.to(y_ptr.dtype.element_ty), mask=mask)


def leaky_relu_launch(x: torch.Tensor, negative_slope: float = 0.01, config: dict | None = None) -> torch.Tensor:
    """Run the Triton kernel on ``x`` (any shape; the interpreter included)."""
    return launch_unary_scalars(_leaky_relu_kernel, x, (negative_slope,), config)


@zoo_custom_op("cudal1::leaky_relu", mutates_args=(), ref=leaky_relu_ref, fast_backward=fast_backward("leaky_relu"))
def _leaky_relu_op(x: torch.Tensor, negative_slope: float) -> torch.Tensor:
    return (tuned_unary_scalars("leaky_relu", _leaky_relu_kernel, x, (negative_slope,)) if x.is_cuda
            else leaky_relu_ref(x, negative_slope))


@_leaky_relu_op.register_fake
def _(x: torch.Tensor, negative_slope: float) -> torch.Tensor:
    return torch.empty_like(x, memory_format=torch.contiguous_format)


def leaky_relu(x: torch.Tensor, negative_slope: float = 0.01) -> torch.Tensor:
    """Leaky ReLU of ``x`` (any shape, float); same shape and dtype (Triton on CUDA, the reference on CPU);
    ``torch.ops.cudal1.leaky_relu``."""
    return call("leaky_relu", x, float(negative_slope))


#: for ``python -m cudal1.kernelzoo.compile_targets``
TRITON_KERNELS = [TritonKernel("_leaky_relu_kernel",
                               {"x_ptr": "*fp32", "y_ptr": "*fp32", "n": "i64", "negative_slope": "fp32"})] + kernels("leaky_relu")
