"""Hardswish: ``y = x * min(max(x + 3, 0), 6) / 6`` elementwise, as ``torch.nn.functional.hardswish``.

Shapes: any; dtypes float32/float16/bfloat16; output has ``x``'s shape and dtype. Memory-bound: one read
and one write per element (8 bytes per fp32 element); computed in fp32 in the same order as torch (so
results match it bit for bit up to the division), NaN propagating.
"""

from __future__ import annotations

import torch

from .._triton import tl, triton
from ..kernel_specs import TritonKernel
from ._activation_backward import fast_backward, kernels
from ._elementwise import CONFIGS, unary_op

__all__ = ["CONFIGS", "hardswish", "hardswish_launch", "hardswish_ref"]


def hardswish_ref(x: torch.Tensor) -> torch.Tensor:
    """PyTorch reference."""
    return torch.nn.functional.hardswish(x)


@triton.jit
def _hardswish_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask).to(tl.float32)
    t = x + 3.0
    t = tl.where(t < 0.0, 0.0, t)  # where, not maximum/minimum: NaN stays NaN
    t = tl.where(t > 6.0, 6.0, t)
    tl.store(y_ptr + offs, (x * t / 6.0).to(y_ptr.dtype.element_ty), mask=mask)


#: ``hardswish_launch(x, config=None)`` runs the Triton kernel (the interpreter included); ``hardswish(x)``
#: is the public op ``torch.ops.cudal1.hardswish``: Triton on CUDA, the reference on CPU.
hardswish_launch, hardswish = unary_op("hardswish", _hardswish_kernel, hardswish_ref,
                                       fast_backward=fast_backward("hardswish"))

#: for ``python -m cudal1.kernelzoo.compile_targets``
TRITON_KERNELS = [TritonKernel("_hardswish_kernel", {"x_ptr": "*fp32", "y_ptr": "*fp32", "n": "i64"})] + kernels("hardswish")
