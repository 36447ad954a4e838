"""ELU: ``y = x if x > 0 else alpha * (exp(x) - 1)`` elementwise, as ``torch.nn.functional.elu``.

Shapes: any; dtypes float32/float16/bfloat16; ``alpha`` a Python float; output has ``x``'s shape and dtype.
Memory-bound: one read and one write per element (8 bytes per fp32 element); computed in fp32, ``exp(x) - 1``
by a Taylor polynomial for ``|x| < 1/16`` (as accurate as ``expm1``).
"""

from __future__ import annotations

import torch

from .._triton import tl, triton
from ..kernel_specs import TritonKernel
from ..registry import call, zoo_custom_op
from ._activation_backward import fast_backward, kernels
from ._elementwise_scalar import CONFIGS, launch_unary_scalars, tuned_unary_scalars

__all__ = ["CONFIGS", "elu", "elu_launch", "elu_ref"]


def elu_ref(x: torch.Tensor, alpha: float = 1.0) -> torch.Tensor:
    """PyTorch reference."""
    return torch.nn.functional.elu(x, alpha=alpha)


@triton.jit
def _elu_kernel(x_ptr, y_ptr, n, alpha, BLOCK: tl.constexpr):
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask).to(tl.float32)
    taylor = x * (1.0 + x * (0.5 + x * (0.16666666666666666 + x * 0.041666666666666664)))
    em1 = tl.where(tl.abs(x) < 0.0625, taylor, tl.exp(x) - 1.0)
    y = tl.where(x > 0.0, x, alpha * em1)  # NaN: not > 0, and alpha * NaN = NaN
    tl.store(y_ptr + offs, y.to(y_ptr.dtype.element_ty), mask=mask)


def elu_launch(x: torch.Tensor, alpha: float = 1.0, config: dict | None = None) -> torch.Tensor:
    """Run the Triton kernel on ``x`` (any shape; the interpreter included)."""
    return launch_unary_scalars(_elu_kernel, x, (alpha,), config)


@zoo_custom_op("cudal1::elu", mutates_args=(), ref=elu_ref, fast_backward=fast_backward("elu"))
def _elu_op(x: torch.Tensor, alpha: float) -> torch.Tensor:
    return tuned_unary_scalars("elu", _elu_kernel, x, (alpha,)) if x.is_cuda else elu_ref(x, alpha)


@_elu_op.register_fake
def _(x: torch.Tensor, alpha: float) -> torch.Tensor:
    return torch.empty_like(x, memory_format=torch.contiguous_format)


def elu(x: torch.Tensor, alpha: float = 1.0) -> torch.Tensor:
    """ELU of ``x`` (any shape, float) with slope ``alpha`` for negative inputs; same shape and dtype
    (Triton on CUDA, the reference on CPU); ``torch.ops.cudal1.elu``."""
    return call("elu", x, float(alpha))


#: for ``python -m cudal1.kernelzoo.compile_targets``
TRITON_KERNELS = [TritonKernel("_elu_kernel", {"x_ptr": "*fp32", "y_ptr": "*fp32", "n": "i64", "alpha": "fp32"})] + kernels("elu")
