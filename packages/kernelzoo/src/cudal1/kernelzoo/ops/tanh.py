"""Hyperbolic tangent: ``y = tanh(x)`` elementwise, as ``torch.tanh``.

Shapes: any; dtypes float32/float16/bfloat16; output has ``x``'s shape and dtype. Memory-bound: one read
and one write per element (8 bytes per fp32 element); computed in fp32 as
``sign(x) * (1 - e^{-2|x|}) / (1 + e^{-2|x|})`` (no overflow for any x), with an odd Taylor polynomial for
``|x| < 1/16`` where that form would lose relative precision.
"""

from __future__ import annotations

import torch

from .._triton import tl, triton
from ..kernel_specs import TritonKernel
from ._activation_backward import fast_backward, kernels
from ._elementwise import CONFIGS, unary_op

__all__ = ["CONFIGS", "tanh", "tanh_launch", "tanh_ref"]


def tanh_ref(x: torch.Tensor) -> torch.Tensor:
    """PyTorch reference."""
    return torch.tanh(x)


@triton.jit
def _tanh_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask).to(tl.float32)
    a = tl.abs(x)
    e = tl.exp(-2.0 * a)
    t = (1.0 - e) / (1.0 + e)
    big = tl.where(x < 0, -t, t)  # NaN stays NaN, +-inf -> +-1
    x2 = x * x
    small = x * (1.0 - x2 * (0.3333333333333333 - x2 * 0.13333333333333333))  # error < 2e-9 relative
    y = tl.where(a < 0.0625, small, big)
    tl.store(y_ptr + offs, y.to(y_ptr.dtype.element_ty), mask=mask)


#: ``tanh_launch(x, config=None)`` runs the Triton kernel (the interpreter included); ``tanh(x)`` is the
#: public op ``torch.ops.cudal1.tanh``: Triton on CUDA, the reference on CPU.
tanh_launch, tanh = unary_op("tanh", _tanh_kernel, tanh_ref,
                             fast_backward=fast_backward("tanh"))

#: for ``python -m cudal1.kernelzoo.compile_targets``
TRITON_KERNELS = [TritonKernel("_tanh_kernel", {"x_ptr": "*fp32", "y_ptr": "*fp32", "n": "i64"})] + kernels("tanh")
